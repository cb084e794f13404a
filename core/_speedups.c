/* Optional C accelerators for building IR objects from parsed JSON, and for collecting
 * the strings of a document when it is redacted and rebuilding it (StringWalker and
 * Rebuilder, at the end).
 *
 * Every object here is a faster path for a pure-Python loader that stays the reference
 * (core/fastload.py, core/pimodel.py, core/pientry.py). Each handles only the common,
 * well-formed case -- every member it names of the expected type (a table loader also
 * keeps members it does not name in ``extra``) -- and hands anything else to its Python
 * ``fallback`` unchanged: the tests build every corpus file both ways and compare.
 *
 * Objects are created the way ``object.__new__`` creates them (``tp_alloc``) and their
 * slots filled directly, which is what the Python loaders do through the slot
 * descriptors; the frozen dataclasses' ``__init__`` is never involved in either.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

/* Type tests, numbered as in fastload.C_TESTS. */
enum { TEST_STR = 0, TEST_BOOL = 1, TEST_NUM = 2, TEST_DICT = 3, TEST_CONTENT = 4, TEST_ANY = 5 };

static int
passes(int test, PyObject *v)
{
    switch (test) {
    case TEST_STR: return PyUnicode_CheckExact(v);
    case TEST_BOOL: return PyBool_Check(v);
    case TEST_NUM: return PyLong_CheckExact(v) || PyFloat_CheckExact(v);
    case TEST_DICT: return PyDict_CheckExact(v);
    case TEST_CONTENT: return PyUnicode_CheckExact(v) || PyList_CheckExact(v);
    case TEST_ANY: return v != Py_None;
    }
    return 0;
}

/* The byte offset of a slot (a member descriptor of ``cls`` holding an object). */
static Py_ssize_t
slot_offset(PyTypeObject *cls, PyObject *name)
{
    PyObject *descr = PyObject_GetAttr((PyObject *)cls, name);
    if (descr == NULL)
        return -1;
    if (!Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%R.%U is not a slot", cls, name);
        Py_DECREF(descr);
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    Py_ssize_t offset = member->offset;
    int kind = member->type;
    Py_DECREF(descr);
    if (kind != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "%R.%U is not an object slot", cls, name);
        return -1;
    }
    return offset;
}

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* A new, empty instance of a slots class whose slots are then all filled by the caller. */
static PyObject *
new_instance(PyTypeObject *cls)
{
    return cls->tp_alloc(cls, 0);
}

/* ------------------------------------------------------------------ TableLoader */

typedef struct {
    PyObject *key;  /* JSON member name */
    int test;
    PyObject *conv; /* NULL, a callable, or a dict (value -> replacement, else itself) */
    Py_ssize_t offset;
} Field;

typedef struct {
    PyObject *key;
    Py_ssize_t offset; /* in the group's class */
} GroupMember;

typedef struct {
    Py_ssize_t offset; /* in the outer class */
    PyTypeObject *cls;
    Py_ssize_t n;
    GroupMember *members;
    Py_ssize_t nnone;
    Py_ssize_t *none_offsets; /* the group's other fields, set to None */
} Group;

typedef struct {
    PyObject_HEAD
    PyTypeObject *cls;
    Py_ssize_t nfields;
    Field *fields;
    Py_ssize_t ngroups;
    Group *groups;
    PyObject *skip;      /* tuple of member names counted but not taken */
    Py_ssize_t ndefaults;
    Py_ssize_t *default_offsets;
    PyObject *defaults;  /* tuple of values, parallel to default_offsets */
    int has_extra;
    Py_ssize_t extra_offset; /* the ``extra`` slot among the defaults, or -1 */
    PyObject *known;     /* set of every member name the table reads or skips */
    PyObject *fallback;
} TableLoader;

static void
TableLoader_dealloc(TableLoader *self)
{
    for (Py_ssize_t i = 0; i < self->nfields; i++) {
        Py_XDECREF(self->fields[i].key);
        Py_XDECREF(self->fields[i].conv);
    }
    PyMem_Free(self->fields);
    for (Py_ssize_t g = 0; g < self->ngroups; g++) {
        for (Py_ssize_t i = 0; i < self->groups[g].n; i++)
            Py_XDECREF(self->groups[g].members[i].key);
        PyMem_Free(self->groups[g].members);
        PyMem_Free(self->groups[g].none_offsets);
        Py_XDECREF(self->groups[g].cls);
    }
    PyMem_Free(self->groups);
    PyMem_Free(self->default_offsets);
    Py_XDECREF(self->cls);
    Py_XDECREF(self->skip);
    Py_XDECREF(self->defaults);
    Py_XDECREF(self->known);
    Py_XDECREF(self->fallback);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* TableLoader(cls, fields, groups, skip, defaults, has_extra, fallback)
 *   fields:   ((json_key, test, conv or None, field_name), ...)
 *   groups:   ((field_name, group_cls, ((json_key, group_field_name), ...), (none_field, ...)), ...)
 *   skip:     (json_key, ...)
 *   defaults: ((field_name, value), ...) for every field no member fills */
static PyObject *
TableLoader_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyTypeObject *cls;
    PyObject *fields, *groups, *skip, *defaults, *fallback;
    int has_extra;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!pO:TableLoader", &PyType_Type, &cls, &PyTuple_Type, &fields,
                          &PyTuple_Type, &groups, &PyTuple_Type, &skip, &PyTuple_Type, &defaults,
                          &has_extra, &fallback))
        return NULL;
    TableLoader *self = (TableLoader *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(cls);
    self->cls = cls;
    Py_INCREF(skip);
    self->skip = skip;
    Py_INCREF(fallback);
    self->fallback = fallback;
    self->has_extra = has_extra;
    self->extra_offset = -1;
    self->known = PySet_New(skip);
    if (self->known == NULL)
        goto fail;

    Py_ssize_t n = PyTuple_GET_SIZE(fields);
    self->fields = PyMem_Calloc(n ? n : 1, sizeof(Field));
    if (self->fields == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key, *conv, *name;
        int test;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fields, i), "UiOU", &key, &test, &conv, &name))
            goto fail;
        if (test < TEST_STR || test > TEST_ANY) {
            PyErr_Format(PyExc_ValueError, "unknown type test %d", test);
            goto fail;
        }
        Py_ssize_t offset = slot_offset(cls, name);
        if (offset < 0)
            goto fail;
        if (PySet_Add(self->known, key) < 0)
            goto fail;
        Py_INCREF(key);
        self->fields[i].key = key;
        self->fields[i].test = test;
        self->fields[i].offset = offset;
        if (conv != Py_None) {
            Py_INCREF(conv);
            self->fields[i].conv = conv;
        }
        self->nfields = i + 1;
    }

    Py_ssize_t ng = PyTuple_GET_SIZE(groups);
    self->groups = PyMem_Calloc(ng ? ng : 1, sizeof(Group));
    if (self->groups == NULL)
        goto fail;
    for (Py_ssize_t g = 0; g < ng; g++) {
        PyObject *name, *members, *none_fields;
        PyTypeObject *gcls;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(groups, g), "UO!O!O!", &name, &PyType_Type, &gcls, &PyTuple_Type,
                              &members, &PyTuple_Type, &none_fields))
            goto fail;
        Group *group = &self->groups[g];
        self->ngroups = g + 1;
        group->offset = slot_offset(cls, name);
        if (group->offset < 0)
            goto fail;
        Py_INCREF(gcls);
        group->cls = gcls;
        Py_ssize_t m = PyTuple_GET_SIZE(members);
        group->members = PyMem_Calloc(m ? m : 1, sizeof(GroupMember));
        if (group->members == NULL)
            goto fail;
        for (Py_ssize_t i = 0; i < m; i++) {
            PyObject *key, *gname;
            if (!PyArg_ParseTuple(PyTuple_GET_ITEM(members, i), "UU", &key, &gname))
                goto fail;
            Py_ssize_t offset = slot_offset(gcls, gname);
            if (offset < 0)
                goto fail;
            if (PySet_Add(self->known, key) < 0)
                goto fail;
            Py_INCREF(key);
            group->members[i].key = key;
            group->members[i].offset = offset;
            group->n = i + 1;
        }
        Py_ssize_t nn = PyTuple_GET_SIZE(none_fields);
        group->none_offsets = PyMem_Calloc(nn ? nn : 1, sizeof(Py_ssize_t));
        if (group->none_offsets == NULL)
            goto fail;
        for (Py_ssize_t i = 0; i < nn; i++) {
            PyObject *gname = PyTuple_GET_ITEM(none_fields, i);
            if (!PyUnicode_Check(gname)) {
                PyErr_SetString(PyExc_TypeError, "field names must be str");
                goto fail;
            }
            Py_ssize_t offset = slot_offset(gcls, gname);
            if (offset < 0)
                goto fail;
            group->none_offsets[i] = offset;
            group->nnone = i + 1;
        }
    }

    Py_ssize_t nd = PyTuple_GET_SIZE(defaults);
    self->default_offsets = PyMem_Calloc(nd ? nd : 1, sizeof(Py_ssize_t));
    self->defaults = PyTuple_New(nd);
    if (self->default_offsets == NULL || self->defaults == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < nd; i++) {
        PyObject *name, *value;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(defaults, i), "UO", &name, &value))
            goto fail;
        Py_ssize_t offset = slot_offset(cls, name);
        if (offset < 0)
            goto fail;
        self->default_offsets[i] = offset;
        if (PyUnicode_CompareWithASCIIString(name, "extra") == 0)
            self->extra_offset = offset;
        Py_INCREF(value);
        PyTuple_SET_ITEM(self->defaults, i, value);
        self->ndefaults = i + 1;
    }
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

/* The loaded object, a new reference; NULL with no exception set = take the fallback. */
static PyObject *
table_fast(TableLoader *self, PyObject *raw)
{
    enum { MAX_FIELDS = 32 };
    PyObject *values[MAX_FIELDS];
    PyObject *group_values[MAX_FIELDS];
    Py_ssize_t nfields = self->nfields, taken = 0, ngroup_values = 0;
    if (nfields > MAX_FIELDS)
        return NULL;
    Py_ssize_t n = 0;
    PyObject *extra = NULL;
    for (Py_ssize_t i = 0; i < nfields; i++) {
        Field *f = &self->fields[i];
        PyObject *v = PyDict_GetItemWithError(raw, f->key);
        if (v == NULL) {
            if (PyErr_Occurred())
                goto error;
            values[taken++] = NULL;
            continue;
        }
        if (!passes(f->test, v))
            goto slow; /* null or mistyped: the member goes to ``extra`` */
        n++;
        PyObject *value;
        if (f->conv == NULL) {
            value = Py_NewRef(v);
        }
        else if (PyDict_CheckExact(f->conv)) {
            PyObject *mapped = PyDict_GetItemWithError(f->conv, v);
            if (mapped == NULL && PyErr_Occurred())
                goto error;
            value = Py_NewRef(mapped ? mapped : v);
        }
        else {
            value = PyObject_CallOneArg(f->conv, v);
            if (value == NULL)
                goto error;
            if (value == Py_None) { /* the Python loader decides where such a member goes */
                Py_DECREF(value);
                goto slow;
            }
        }
        values[taken++] = value;
    }
    for (Py_ssize_t g = 0; g < self->ngroups; g++) {
        Group *group = &self->groups[g];
        for (Py_ssize_t i = 0; i < group->n; i++) {
            PyObject *v = PyDict_GetItemWithError(raw, group->members[i].key);
            if (v == NULL && PyErr_Occurred())
                goto error;
            if (v != NULL) {
                if (!PyUnicode_CheckExact(v))
                    goto slow;
                n++;
            }
            if (ngroup_values >= MAX_FIELDS)
                goto slow;
            group_values[ngroup_values++] = v; /* borrowed: raw holds it */
        }
    }
    Py_ssize_t nskip = PyTuple_GET_SIZE(self->skip);
    for (Py_ssize_t i = 0; i < nskip; i++) {
        int has = PyDict_Contains(raw, PyTuple_GET_ITEM(self->skip, i));
        if (has < 0)
            goto error;
        n += has;
    }
    if (n != PyDict_GET_SIZE(raw)) {
        /* Members the table does not name (every named one passed its test): kept in
         * ``extra`` in the order of ``raw``, as the Python loader keeps them. */
        extra = PyDict_New();
        if (extra == NULL)
            goto error;
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(raw, &pos, &k, &v)) {
            int has = PySet_Contains(self->known, k);
            if (has < 0 || (!has && PyDict_SetItem(extra, k, v) < 0))
                goto error;
        }
        if (self->has_extra && self->extra_offset < 0)
            goto slow; /* nowhere to put them: not a table this loader is made for */
    }

    PyObject *obj = new_instance(self->cls);
    if (obj == NULL)
        goto error;
    for (Py_ssize_t i = 0; i < nfields; i++)
        SLOT(obj, self->fields[i].offset) = values[i] ? values[i] : Py_NewRef(Py_None);
    Py_ssize_t k = 0;
    for (Py_ssize_t g = 0; g < self->ngroups; g++) {
        Group *group = &self->groups[g];
        int any = 0;
        for (Py_ssize_t i = 0; i < group->n; i++)
            any |= group_values[k + i] != NULL;
        PyObject *gobj;
        if (any) {
            gobj = new_instance(group->cls);
            if (gobj == NULL) {
                Py_DECREF(obj); /* unfilled slots are NULL, which deallocation allows */
                Py_XDECREF(extra);
                return NULL;
            }
            for (Py_ssize_t i = 0; i < group->n; i++) {
                PyObject *v = group_values[k + i];
                SLOT(gobj, group->members[i].offset) = Py_NewRef(v ? v : Py_None);
            }
            for (Py_ssize_t i = 0; i < group->nnone; i++)
                SLOT(gobj, group->none_offsets[i]) = Py_NewRef(Py_None);
        }
        else {
            gobj = Py_NewRef(Py_None);
        }
        SLOT(obj, group->offset) = gobj;
        k += group->n;
    }
    for (Py_ssize_t d = 0; d < self->ndefaults; d++) {
        Py_ssize_t offset = self->default_offsets[d];
        if (extra != NULL && offset == self->extra_offset)
            SLOT(obj, offset) = Py_NewRef(extra);
        else
            SLOT(obj, offset) = Py_NewRef(PyTuple_GET_ITEM(self->defaults, d));
    }
    if (self->has_extra) {
        Py_XDECREF(extra);
        return obj;
    }
    PyObject *pair = PyTuple_Pack(2, obj, extra ? extra : Py_None);
    Py_DECREF(obj);
    Py_XDECREF(extra);
    return pair;

slow:  /* declined (no exception set) or failed (exception set): the caller tells them apart */
error:
    for (Py_ssize_t i = 0; i < taken; i++)
        Py_XDECREF(values[i]);
    Py_XDECREF(extra);
    return NULL;
}

static PyObject *
TableLoader_call(TableLoader *self, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) == 1 && (kwds == NULL || PyDict_GET_SIZE(kwds) == 0)) {
        PyObject *raw = PyTuple_GET_ITEM(args, 0);
        if (PyDict_CheckExact(raw)) {
            PyObject *result = table_fast(self, raw);
            if (result != NULL || PyErr_Occurred())
                return result;
        }
    }
    return PyObject_Call(self->fallback, args, kwds);
}

static PyMemberDef TableLoader_members[] = {
    {"fallback", T_OBJECT, offsetof(TableLoader, fallback), READONLY, "the pure-Python loader"},
    {NULL},
};

static PyTypeObject TableLoaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "piconv._speedups.TableLoader",
    .tp_basicsize = sizeof(TableLoader),
    .tp_dealloc = (destructor)TableLoader_dealloc,
    .tp_call = (ternaryfunc)TableLoader_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A field table compiled to C: fills a slots class from a JSON object.",
    .tp_new = TableLoader_new,
    .tp_members = TableLoader_members,
};

/* ------------------------------------------------------------------ Dispatch */

typedef struct {
    PyObject_HEAD
    PyObject *key;
    PyObject *table;    /* dict: str -> loader */
    PyObject *fallback; /* called with the value when no loader applies */
} Dispatch;

static void
Dispatch_dealloc(Dispatch *self)
{
    Py_XDECREF(self->key);
    Py_XDECREF(self->table);
    Py_XDECREF(self->fallback);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Dispatch(key, table, fallback): ``table[raw[key]](raw)`` for a dict whose ``key`` member
 * is a string the table names, else ``fallback(raw)``. */
static PyObject *
Dispatch_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *key, *table, *fallback;
    if (!PyArg_ParseTuple(args, "UO!O:Dispatch", &key, &PyDict_Type, &table, &fallback))
        return NULL;
    Dispatch *self = (Dispatch *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->key = Py_NewRef(key);
    self->table = Py_NewRef(table);
    self->fallback = Py_NewRef(fallback);
    return (PyObject *)self;
}

static PyObject *
dispatch_one(Dispatch *self, PyObject *raw)
{
    if (PyDict_CheckExact(raw)) {
        PyObject *name = PyDict_GetItemWithError(raw, self->key);
        if (name == NULL && PyErr_Occurred())
            return NULL;
        if (name != NULL && PyUnicode_CheckExact(name)) {
            PyObject *loader = PyDict_GetItemWithError(self->table, name);
            if (loader == NULL && PyErr_Occurred())
                return NULL;
            if (loader != NULL)
                return PyObject_CallOneArg(loader, raw);
        }
    }
    return PyObject_CallOneArg(self->fallback, raw);
}

static PyObject *
Dispatch_call(Dispatch *self, PyObject *args, PyObject *kwds)
{
    PyObject *raw;
    if (kwds != NULL && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Dispatch takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:Dispatch", &raw))
        return NULL;
    return dispatch_one(self, raw);
}

static PyTypeObject DispatchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "piconv._speedups.Dispatch",
    .tp_basicsize = sizeof(Dispatch),
    .tp_dealloc = (destructor)Dispatch_dealloc,
    .tp_call = (ternaryfunc)Dispatch_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Calls the loader a JSON object's discriminating member names.",
    .tp_new = Dispatch_new,
};

/* ------------------------------------------------------------------ content */

/* content(raw, part): a string as it is; a list as the tuple of ``part(item)`` for each
 * item (``part`` is usually a Dispatch on "type"). */
static PyObject *
load_content(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "content(raw, part) takes two arguments");
        return NULL;
    }
    PyObject *raw = args[0], *part = args[1];
    if (PyUnicode_CheckExact(raw))
        return Py_NewRef(raw);
    if (!PyList_CheckExact(raw)) {
        PyErr_SetString(PyExc_TypeError, "content must be a str or a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(raw);
    PyObject *out = PyTuple_New(n);
    if (out == NULL)
        return NULL;
    int is_dispatch = Py_IS_TYPE(part, &DispatchType);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(raw, i);
        PyObject *loaded = is_dispatch ? dispatch_one((Dispatch *)part, item) : PyObject_CallOneArg(part, item);
        if (loaded == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, loaded);
    }
    return out;
}

typedef struct {
    PyObject_HEAD
    PyObject *part;
} ContentLoader;

static void
ContentLoader_dealloc(ContentLoader *self)
{
    Py_XDECREF(self->part);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
ContentLoader_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *part;
    if (!PyArg_ParseTuple(args, "O:ContentLoader", &part))
        return NULL;
    ContentLoader *self = (ContentLoader *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->part = Py_NewRef(part);
    return (PyObject *)self;
}

static PyObject *
ContentLoader_call(ContentLoader *self, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) != 1 || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "ContentLoader takes one argument");
        return NULL;
    }
    PyObject *call_args[2] = {PyTuple_GET_ITEM(args, 0), self->part};
    return load_content(NULL, call_args, 2);
}

static PyTypeObject ContentLoaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "piconv._speedups.ContentLoader",
    .tp_basicsize = sizeof(ContentLoader),
    .tp_dealloc = (destructor)ContentLoader_dealloc,
    .tp_call = (ternaryfunc)ContentLoader_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Message content: a string as it is, a list as a tuple of loaded parts.",
    .tp_new = ContentLoader_new,
};

/* ------------------------------------------------------------------ message entries */

typedef struct {
    PyObject_HEAD
    PyObject *roles;      /* dict: role -> message loader, for roles with no entry-level rule */
    PyTypeObject *body_cls;
    Py_ssize_t body_message;
    PyTypeObject *origin_cls;
    Py_ssize_t origin_line, origin_type, origin_role, origin_synthesized;
    PyTypeObject *entry_cls;
    Py_ssize_t entry_id, entry_parent, entry_timestamp, entry_body, entry_origin, entry_extra;
    PyObject *empty;      /* the shared empty ``extra`` */
    PyObject *no_synthesized;
    PyObject *fallback;   /* the Python load_entry */
} EntryLoader;

static PyObject *s_type, *s_id, *s_parentId, *s_timestamp, *s_message, *s_role;

static void
EntryLoader_dealloc(EntryLoader *self)
{
    Py_XDECREF(self->roles);
    Py_XDECREF(self->body_cls);
    Py_XDECREF(self->origin_cls);
    Py_XDECREF(self->entry_cls);
    Py_XDECREF(self->empty);
    Py_XDECREF(self->no_synthesized);
    Py_XDECREF(self->fallback);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
offsets(PyTypeObject *cls, const char *const *names, Py_ssize_t *out[], int n)
{
    for (int i = 0; i < n; i++) {
        PyObject *name = PyUnicode_FromString(names[i]);
        if (name == NULL)
            return -1;
        *out[i] = slot_offset(cls, name);
        Py_DECREF(name);
        if (*out[i] < 0)
            return -1;
    }
    return 0;
}

/* EntryLoader(roles, MessageBody, Origin, Entry, empty, no_synthesized, fallback) */
static PyObject *
EntryLoader_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *roles, *empty, *no_synthesized, *fallback;
    PyTypeObject *body_cls, *origin_cls, *entry_cls;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OOO:EntryLoader", &PyDict_Type, &roles, &PyType_Type, &body_cls,
                          &PyType_Type, &origin_cls, &PyType_Type, &entry_cls, &empty, &no_synthesized, &fallback))
        return NULL;
    EntryLoader *self = (EntryLoader *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->roles = Py_NewRef(roles);
    self->body_cls = (PyTypeObject *)Py_NewRef(body_cls);
    self->origin_cls = (PyTypeObject *)Py_NewRef(origin_cls);
    self->entry_cls = (PyTypeObject *)Py_NewRef(entry_cls);
    self->empty = Py_NewRef(empty);
    self->no_synthesized = Py_NewRef(no_synthesized);
    self->fallback = Py_NewRef(fallback);
    static const char *const body_names[] = {"message"};
    Py_ssize_t *body_out[] = {&self->body_message};
    static const char *const origin_names[] = {"line", "source_type", "source_role", "synthesized"};
    Py_ssize_t *origin_out[] = {&self->origin_line, &self->origin_type, &self->origin_role,
                                &self->origin_synthesized};
    static const char *const entry_names[] = {"id", "parent_id", "timestamp", "body", "origin", "extra"};
    Py_ssize_t *entry_out[] = {&self->entry_id,   &self->entry_parent, &self->entry_timestamp,
                               &self->entry_body, &self->entry_origin, &self->entry_extra};
    if (offsets(body_cls, body_names, body_out, 1) < 0 || offsets(origin_cls, origin_names, origin_out, 4) < 0
        || offsets(entry_cls, entry_names, entry_out, 6) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* The entry for a well-formed ``message`` entry (only the envelope and ``message``, a
 * string timestamp, a message object of a role in ``roles``); NULL with no exception set
 * for anything else. */
static PyObject *
entry_fast(EntryLoader *self, PyObject *raw, PyObject *line, PyObject *entry_id, PyObject *parent_id)
{
    PyObject *kind = PyDict_GetItemWithError(raw, s_type);
    if (kind == NULL || !PyUnicode_CheckExact(kind))
        return NULL;
    if (PyUnicode_Compare(kind, s_message) != 0)  /* the entry type "message" */
        return NULL;
    PyObject *timestamp = PyDict_GetItemWithError(raw, s_timestamp);
    if (timestamp == NULL || !PyUnicode_CheckExact(timestamp))
        return NULL;
    PyObject *message = PyDict_GetItemWithError(raw, s_message);
    if (message == NULL || !PyDict_CheckExact(message))
        return NULL;
    /* type, timestamp, message, and id / parentId when present: nothing else */
    Py_ssize_t known = 3;
    int has;
    if ((has = PyDict_Contains(raw, s_id)) < 0)
        return NULL;
    known += has;
    if ((has = PyDict_Contains(raw, s_parentId)) < 0)
        return NULL;
    known += has;
    if (known != PyDict_GET_SIZE(raw))
        return NULL;
    PyObject *role = PyDict_GetItemWithError(message, s_role);
    if (role == NULL || !PyUnicode_CheckExact(role))
        return NULL;
    PyObject *loader = PyDict_GetItemWithError(self->roles, role);
    if (loader == NULL)
        return NULL;

    PyObject *loaded = PyObject_CallOneArg(loader, message);
    if (loaded == NULL)
        return NULL;
    PyObject *body = new_instance(self->body_cls);
    if (body == NULL) {
        Py_DECREF(loaded);
        return NULL;
    }
    SLOT(body, self->body_message) = loaded;
    PyObject *origin = new_instance(self->origin_cls);
    if (origin == NULL) {
        Py_DECREF(body);
        return NULL;
    }
    SLOT(origin, self->origin_line) = Py_NewRef(line);
    SLOT(origin, self->origin_type) = Py_NewRef(kind);
    SLOT(origin, self->origin_role) = Py_NewRef(Py_None);
    SLOT(origin, self->origin_synthesized) = Py_NewRef(self->no_synthesized);
    PyObject *entry = new_instance(self->entry_cls);
    if (entry == NULL) {
        Py_DECREF(body);
        Py_DECREF(origin);
        return NULL;
    }
    SLOT(entry, self->entry_id) = Py_NewRef(entry_id);
    SLOT(entry, self->entry_parent) = Py_NewRef(parent_id);
    SLOT(entry, self->entry_timestamp) = Py_NewRef(timestamp);
    SLOT(entry, self->entry_body) = body;
    SLOT(entry, self->entry_origin) = origin;
    SLOT(entry, self->entry_extra) = Py_NewRef(self->empty);
    return entry;
}

static PyObject *
EntryLoader_call(EntryLoader *self, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) == 4 && (kwds == NULL || PyDict_GET_SIZE(kwds) == 0)) {
        PyObject *raw = PyTuple_GET_ITEM(args, 0);
        if (PyDict_CheckExact(raw)) {
            PyObject *entry = entry_fast(self, raw, PyTuple_GET_ITEM(args, 1), PyTuple_GET_ITEM(args, 2),
                                         PyTuple_GET_ITEM(args, 3));
            if (entry != NULL || PyErr_Occurred())
                return entry;
        }
    }
    return PyObject_Call(self->fallback, args, kwds);
}

static PyMemberDef EntryLoader_members[] = {
    {"fallback", T_OBJECT, offsetof(EntryLoader, fallback), READONLY, "the pure-Python loader"},
    {NULL},
};

static PyTypeObject EntryLoaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "piconv._speedups.EntryLoader",
    .tp_basicsize = sizeof(EntryLoader),
    .tp_dealloc = (destructor)EntryLoader_dealloc,
    .tp_call = (ternaryfunc)EntryLoader_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "load_entry(raw, line, id, parent_id) for well-formed message entries.",
    .tp_new = EntryLoader_new,
    .tp_members = EntryLoader_members,
};

/* ------------------------------------------------------------------ Maker */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyTypeObject *cls;
    Py_ssize_t n;
    Py_ssize_t *offsets;
} Maker;

static void
Maker_dealloc(Maker *self)
{
    Py_XDECREF(self->cls);
    PyMem_Free(self->offsets);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Maker_vectorcall(PyObject *, PyObject *const *, size_t, PyObject *);

/* Maker(cls, field_names): ``make(v1, v2, ...)`` fills every field, positionally. */
static PyObject *
Maker_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyTypeObject *cls;
    PyObject *names;
    if (!PyArg_ParseTuple(args, "O!O!:Maker", &PyType_Type, &cls, &PyTuple_Type, &names))
        return NULL;
    Maker *self = (Maker *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->cls = (PyTypeObject *)Py_NewRef(cls);
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    self->offsets = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    if (self->offsets == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "field names must be str");
            Py_DECREF(self);
            return NULL;
        }
        self->offsets[i] = slot_offset(cls, name);
        if (self->offsets[i] < 0) {
            Py_DECREF(self);
            return NULL;
        }
    }
    self->n = n;
    self->vectorcall = Maker_vectorcall;
    return (PyObject *)self;
}

static PyObject *
Maker_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Maker *self = (Maker *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != self->n || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        PyErr_Format(PyExc_TypeError, "%s maker takes exactly %zd positional arguments", self->cls->tp_name,
                     self->n);
        return NULL;
    }
    PyObject *obj = new_instance(self->cls);
    if (obj == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++)
        SLOT(obj, self->offsets[i]) = Py_NewRef(args[i]);
    return obj;
}

static PyObject *
Maker_call(PyObject *self, PyObject *args, PyObject *kwds)
{
    if (kwds != NULL && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "a maker takes positional arguments only");
        return NULL;
    }
    return Maker_vectorcall(self, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args), NULL);
}

static PyTypeObject MakerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "piconv._speedups.Maker",
    .tp_basicsize = sizeof(Maker),
    .tp_dealloc = (destructor)Maker_dealloc,
    .tp_call = Maker_call,
    .tp_vectorcall_offset = offsetof(Maker, vectorcall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A positional constructor for a slots class that fills its slots directly.",
    .tp_new = Maker_new,
};

/* ------------------------------------------------------------------ StringWalker */

/* The first pass of a redaction: every string of a value, in order, appended to a list;
 * the answer tells whether the value holds something the rebuild drops whatever the scan
 * finds (a signature, an image's data, an opaque member of ``extra``). The Python walk
 * (piconv.redaction.engine.Redactor._walk) is the reference; this one reads an IR node's
 * fields through its slots, by the plan the Python side made for its class, and hands any
 * value it does not know (an IR class without a plan yet, a subclass of str, dict or list,
 * another Mapping) to the Python walk. Tests hold the two equal on every corpus file. */

/* How deep the C passes nest before they hand a value to the Python ones, which nest as
 * deep as the recursion limit allows without using the C stack. */
#define C_DEPTH 500

/* The ``n`` fields of a node at ``cells``, read at once with references held, as the
 * Python passes' getters read them (a callback may change a slot meanwhile); ``into``
 * when it is large enough. NULL with an exception set on failure. */
static PyObject **
hold_fields(PyObject *node, const Py_ssize_t *cells, Py_ssize_t n, PyObject **into, Py_ssize_t room)
{
    PyObject **held = n <= room ? into : PyMem_New(PyObject *, n);
    if (held == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        held[i] = Py_NewRef(SLOT(node, cells[i]));
    return held;
}

static void
release_fields(PyObject **held, Py_ssize_t n, PyObject **into)
{
    for (Py_ssize_t i = 0; i < n; i++)
        Py_DECREF(held[i]);
    if (held != into)
        PyMem_Free(held);
}

/* A slot read after a callback: NULL (and the AttributeError Python raises) when unset. */
static PyObject *
read_slot(PyObject *node, Py_ssize_t offset, const char *name)
{
    PyObject *value = SLOT(node, offset);
    if (value == NULL) {
        value = PyObject_GetAttrString(node, name);  /* raises as Python does */
        Py_XDECREF(value);
        if (value != NULL)
            PyErr_Format(PyExc_AttributeError, "%s", name);
        return NULL;
    }
    return value;
}

/* After slot_offset failed: 0 when the field is not a slot (a property, say: the Python
 * pass reads such a class), its error cleared; -1 for any other error. */
static int
not_a_slot(void)
{
    if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_AttributeError))
        return -1;
    PyErr_Clear();
    return 0;
}

/* The offsets of the slots ``names`` (a tuple) of ``cls`` into ``into``: 1; else as
 * not_a_slot. */
static int
slot_offsets(PyTypeObject *cls, PyObject *names, Py_ssize_t *into)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) {
        into[i] = slot_offset(cls, PyTuple_GET_ITEM(names, i));
        if (into[i] < 0)
            return not_a_slot();
    }
    return 1;
}

static PyObject *
dict_changed(void)
{
    PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
    return NULL;
}

typedef struct {
    PyObject_HEAD
    PyObject *plans;    /* dict: class -> plan (names, signature, image, extra), shared with Python */
    PyObject *layouts;  /* dict: class -> bytes (Py_ssize_t n, n offsets, signature, data, extra) or None */
    PyObject *fallback; /* fallback(value, seen) -> bool: the Python walk */
    PyObject *opaque;   /* opaque(extra) -> bool */
    PyObject *empty;    /* the IR's shared empty mapping */
    int drop_images;
    int depth;
} StringWalker;

/* The walker holds Python callables that may hold it back (a bound method of the object
 * that keeps it): the cyclic collector sees through it. */
static int
StringWalker_traverse(StringWalker *self, visitproc visit, void *arg)
{
    Py_VISIT(self->plans);
    Py_VISIT(self->layouts);
    Py_VISIT(self->fallback);
    Py_VISIT(self->opaque);
    Py_VISIT(self->empty);
    return 0;
}

static int
StringWalker_clear(StringWalker *self)
{
    Py_CLEAR(self->plans);
    Py_CLEAR(self->layouts);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->opaque);
    Py_CLEAR(self->empty);
    return 0;
}

static void
StringWalker_dealloc(StringWalker *self)
{
    PyObject_GC_UnTrack(self);
    StringWalker_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* StringWalker(plans, fallback, opaque, empty, drop_images) */
static PyObject *
StringWalker_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *plans, *fallback, *opaque, *empty;
    int drop_images;
    if (!PyArg_ParseTuple(args, "O!OOOp:StringWalker", &PyDict_Type, &plans, &fallback, &opaque, &empty,
                          &drop_images))
        return NULL;
    StringWalker *self = (StringWalker *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->layouts = PyDict_New();
    if (self->layouts == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->plans = Py_NewRef(plans);
    self->fallback = Py_NewRef(fallback);
    self->opaque = Py_NewRef(opaque);
    self->empty = Py_NewRef(empty);
    self->drop_images = drop_images;
    return (PyObject *)self;
}

/* The offset of slot ``name`` when ``flag`` (a plan's attribute of that name) is true, else -1;
 * -2 with an exception set on failure. */
static Py_ssize_t
flagged_offset(PyTypeObject *cls, PyObject *plan, const char *flag, const char *name)
{
    PyObject *value = PyObject_GetAttrString(plan, flag);
    if (value == NULL)
        return -2;
    int on = PyObject_IsTrue(value);
    Py_DECREF(value);
    if (on < 0)
        return -2;
    if (!on)
        return -1;
    PyObject *key = PyUnicode_FromString(name);
    if (key == NULL)
        return -2;
    Py_ssize_t offset = slot_offset(cls, key);
    Py_DECREF(key);
    return offset < 0 ? -2 : offset;
}

/* The slots an IR class's plan reads, made the first time the class is met: a borrowed
 * bytes object, Py_None (a class whose fields are not all slots: the Python walk reads
 * it), or NULL (no plan; an exception set on failure). */
static PyObject *
layout_of(StringWalker *w, PyTypeObject *cls)
{
    PyObject *layout = PyDict_GetItemWithError(w->layouts, (PyObject *)cls);
    if (layout != NULL || PyErr_Occurred())
        return layout;
    PyObject *plan = PyDict_GetItemWithError(w->plans, (PyObject *)cls);
    if (plan == NULL)
        return NULL;
    Py_INCREF(plan);
    PyObject *made = NULL;
    PyObject *names = PyObject_GetAttrString(plan, "names");
    if (names == NULL || !PyTuple_Check(names)) {
        if (names != NULL)
            PyErr_SetString(PyExc_TypeError, "a plan's names must be a tuple");
        goto done;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    Py_ssize_t *cells = PyMem_New(Py_ssize_t, n + 4);
    if (cells == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    cells[0] = n;
    int slotted = slot_offsets(cls, names, cells + 1);
    if (slotted > 0) {
        cells[n + 1] = flagged_offset(cls, plan, "signature", "signature");
        cells[n + 2] = flagged_offset(cls, plan, "image", "data");
        cells[n + 3] = flagged_offset(cls, plan, "extra", "extra");
        if (cells[n + 1] == -2 || cells[n + 2] == -2 || cells[n + 3] == -2)
            slotted = not_a_slot();
    }
    if (slotted > 0)
        made = PyBytes_FromStringAndSize((const char *)cells, (n + 4) * sizeof(Py_ssize_t));
    else if (slotted == 0)
        made = Py_NewRef(Py_None);
    PyMem_Free(cells);
    if (made != NULL && PyDict_SetItem(w->layouts, (PyObject *)cls, made) < 0)
        Py_CLEAR(made);
done:
    Py_XDECREF(names);
    Py_DECREF(plan);
    Py_XDECREF(made);  /* the dict holds it */
    return made;
}

static int
is_inert(PyObject *v)
{
    return v == Py_None || PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyBool_Check(v) ||
           PyFrozenSet_CheckExact(v) || PySet_CheckExact(v);
}

static int walk_value(StringWalker *w, PyObject *value, PyObject *seen);

/* An item of a node, a mapping or a sequence: a string taken, a number passed over. */
static int
walk_item(StringWalker *w, PyObject *item, PyObject *seen)
{
    if (PyUnicode_CheckExact(item))
        return PyList_Append(seen, item);
    if (is_inert(item))
        return 0;
    return walk_value(w, item, seen);
}

static int
call_truth(PyObject *callable, PyObject *a, PyObject *b)
{
    PyObject *result = b == NULL ? PyObject_CallOneArg(callable, a) : PyObject_CallFunctionObjArgs(callable, a, b, NULL);
    if (result == NULL)
        return -1;
    int truth = PyObject_IsTrue(result);
    Py_DECREF(result);
    return truth;
}

static int
walk_node(StringWalker *w, PyObject *value, const Py_ssize_t *cells, PyObject *seen)
{
    Py_ssize_t n = cells[0];
    for (Py_ssize_t i = 1; i <= n; i++)
        if (SLOT(value, cells[i]) == NULL)
            return call_truth(w->fallback, value, seen);  /* an unset field: Python raises */
    PyObject *room[16];
    PyObject **items = hold_fields(value, cells + 1, n, room, 16);
    if (items == NULL)
        return -1;
    int drops = 0, r = 0;
    for (Py_ssize_t i = 0; i < n && r >= 0; i++) {
        if (items[i] == w->empty)
            continue;
        r = walk_item(w, items[i], seen);
        if (r > 0)
            drops = 1;
    }
    release_fields(items, n, room);
    if (r < 0)
        return -1;
    if (drops)
        return 1;
    if (cells[n + 1] >= 0) {
        PyObject *signature = read_slot(value, cells[n + 1], "signature");
        if (signature == NULL)
            return -1;
        if (signature != Py_None)
            return 1;
    }
    if (w->drop_images && cells[n + 2] >= 0) {
        PyObject *data = read_slot(value, cells[n + 2], "data");
        if (data == NULL)
            return -1;
        if (data != Py_None)
            return 1;
    }
    if (cells[n + 3] >= 0) {
        PyObject *extra = read_slot(value, cells[n + 3], "extra");
        if (extra == NULL)
            return -1;
        if (extra != w->empty) {
            Py_INCREF(extra);
            r = call_truth(w->opaque, extra, NULL);
            Py_DECREF(extra);
            return r;
        }
    }
    return 0;
}

static int
walk_value(StringWalker *w, PyObject *value, PyObject *seen)
{
    if (PyUnicode_CheckExact(value))
        return PyList_Append(seen, value);
    if (is_inert(value))
        return 0;
    if (w->depth >= C_DEPTH)
        return call_truth(w->fallback, value, seen);
    if (Py_EnterRecursiveCall(" while collecting a document's strings"))
        return -1;
    w->depth++;
    int drops = 0, r = 0;
    PyObject *layout = layout_of(w, Py_TYPE(value));
    if (layout == NULL && PyErr_Occurred())
        r = -1;
    else if (layout != NULL && layout != Py_None)
        r = walk_node(w, value, (const Py_ssize_t *)PyBytes_AS_STRING(layout), seen);
    else if (PyDict_CheckExact(value)) {
        Py_ssize_t pos = 0, size = PyDict_GET_SIZE(value);
        PyObject *key, *item;
        Py_INCREF(value);
        while (r >= 0 && PyDict_Next(value, &pos, &key, &item)) {
            Py_INCREF(key);
            Py_INCREF(item);
            r = PyUnicode_CheckExact(key) ? PyList_Append(seen, key) : walk_value(w, key, seen);
            if (r >= 0) {
                drops |= r;
                r = walk_item(w, item, seen);
            }
            Py_DECREF(key);
            Py_DECREF(item);
            if (r > 0)
                drops = 1;
            if (r >= 0 && PyDict_GET_SIZE(value) != size)
                r = dict_changed() == NULL ? -1 : 0;
        }
        Py_DECREF(value);
    }
    else if (PyList_CheckExact(value) || PyTuple_CheckExact(value)) {
        /* a callback may change a list: its size is read at each step, as Python's
         * iteration does, and each item held while it is walked */
        Py_INCREF(value);
        for (Py_ssize_t i = 0; r >= 0 && i < Py_SIZE(value); i++) {
            PyObject *item = Py_NewRef(PySequence_Fast_GET_ITEM(value, i));
            r = walk_item(w, item, seen);
            Py_DECREF(item);
            if (r > 0)
                drops = 1;
        }
        Py_DECREF(value);
    }
    else
        r = call_truth(w->fallback, value, seen);
    w->depth--;
    Py_LeaveRecursiveCall();
    return r < 0 ? -1 : (r > 0 || drops);
}

static PyObject *
StringWalker_call(StringWalker *self, PyObject *args, PyObject *kwds)
{
    PyObject *value, *seen;
    if (kwds != NULL && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "StringWalker takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO:StringWalker", &value, &seen))
        return NULL;
    if (!PyList_CheckExact(seen)) {
        PyErr_SetString(PyExc_TypeError, "StringWalker appends to a list");
        return NULL;
    }
    int r = walk_value(self, value, seen);
    if (r < 0)
        return NULL;
    return PyBool_FromLong(r);
}

static PyTypeObject StringWalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "piconv._speedups.StringWalker",
    .tp_basicsize = sizeof(StringWalker),
    .tp_dealloc = (destructor)StringWalker_dealloc,
    .tp_call = (ternaryfunc)StringWalker_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)StringWalker_traverse,
    .tp_clear = (inquiry)StringWalker_clear,
    .tp_doc = "walker(value, seen) -> bool: a redaction's first pass (see Redactor._walk).",
    .tp_new = StringWalker_new,
};

/* ------------------------------------------------------------------ Rebuilder */

/* A redaction's last pass: a value with each string the scan replaced swapped for its
 * replacement, signatures (and, when asked, images' data) dropped, and opaque members of
 * an ``extra`` left out; what is unchanged is the same object, what changed is copied
 * from its first change. The Python rebuild (Redactor._rebuild) is the reference: its
 * ``replace``, ``drop`` and ``opaque`` note the outcome and are called back here, and it
 * takes any value this does not know (a subclass of str, dict or list; another Mapping;
 * an IR class with a field that is not a slot). */

enum { KIND_KEEP = 0, KIND_SCAN = 1, KIND_SIGNATURE = 2, KIND_IMAGE_DATA = 3, KIND_EXTRA = 4 };

typedef struct {
    PyObject_HEAD
    PyObject *fields_of;   /* fields_of(cls) -> (steps, getter, maker), the Python plans */
    PyObject *node_type;   /* the IR's Node */
    PyObject *layouts;     /* dict: class -> (bytes layout, maker) or None */
    PyObject *replaced;    /* dict: the strings to replace (their replacements in Python) */
    PyObject *replace;     /* replace(str) -> str */
    PyObject *drop;        /* drop(kind) -> None: notes a dropped signature or image */
    PyObject *opaque_key;  /* opaque_key(key) -> bool: an ``extra`` member to leave out */
    PyObject *fallback;    /* fallback(value) -> value */
    PyObject *fallback_extra; /* fallback_extra(mapping) -> mapping: a node's extra that is no dict */
    PyObject *empty;
    PyObject *s_signature, *s_image;
    int drop_images;
    int depth;
} Rebuilder;

static int
Rebuilder_traverse(Rebuilder *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fields_of);
    Py_VISIT(self->node_type);
    Py_VISIT(self->layouts);
    Py_VISIT(self->replaced);
    Py_VISIT(self->replace);
    Py_VISIT(self->drop);
    Py_VISIT(self->opaque_key);
    Py_VISIT(self->fallback);
    Py_VISIT(self->fallback_extra);
    Py_VISIT(self->empty);
    return 0;
}

static int
Rebuilder_clear(Rebuilder *self)
{
    Py_CLEAR(self->fields_of);
    Py_CLEAR(self->node_type);
    Py_CLEAR(self->layouts);
    Py_CLEAR(self->replaced);
    Py_CLEAR(self->replace);
    Py_CLEAR(self->drop);
    Py_CLEAR(self->opaque_key);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->fallback_extra);
    Py_CLEAR(self->empty);
    Py_CLEAR(self->s_signature);
    Py_CLEAR(self->s_image);
    return 0;
}

static void
Rebuilder_dealloc(Rebuilder *self)
{
    PyObject_GC_UnTrack(self);
    Rebuilder_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Rebuilder(fields_of, node_type, replaced, replace, drop, opaque_key, fallback,
 *           fallback_extra, empty, drop_images) */
static PyObject *
Rebuilder_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *fields_of, *node_type, *replaced, *replace, *drop, *opaque_key, *fallback, *fallback_extra, *empty;
    int drop_images;
    if (!PyArg_ParseTuple(args, "OOO!OOOOOOp:Rebuilder", &fields_of, &node_type, &PyDict_Type, &replaced, &replace,
                          &drop, &opaque_key, &fallback, &fallback_extra, &empty, &drop_images))
        return NULL;
    Rebuilder *self = (Rebuilder *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->layouts = PyDict_New();
    self->s_signature = PyUnicode_InternFromString("signature");
    self->s_image = PyUnicode_InternFromString("image");
    if (self->layouts == NULL || self->s_signature == NULL || self->s_image == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->fields_of = Py_NewRef(fields_of);
    self->node_type = Py_NewRef(node_type);
    self->replaced = Py_NewRef(replaced);
    self->replace = Py_NewRef(replace);
    self->drop = Py_NewRef(drop);
    self->opaque_key = Py_NewRef(opaque_key);
    self->fallback = Py_NewRef(fallback);
    self->fallback_extra = Py_NewRef(fallback_extra);
    self->empty = Py_NewRef(empty);
    self->drop_images = drop_images;
    return (PyObject *)self;
}

/* The layout of an IR class, made the first time it is met: a borrowed tuple (bytes of
 * Py_ssize_t: n, the n slots' offsets, the number of steps, then each step's field index
 * and kind; the maker), Py_None (the Python rebuild reads it), or NULL (not an IR class;
 * an exception set on failure). */
static PyObject *
rebuild_layout(Rebuilder *r, PyTypeObject *cls)
{
    PyObject *layout = PyDict_GetItemWithError(r->layouts, (PyObject *)cls);
    if (layout != NULL || PyErr_Occurred())
        return layout;
    int is_node = PyObject_IsSubclass((PyObject *)cls, r->node_type);
    if (is_node <= 0)
        return NULL;
    PyObject *made = NULL, *names = NULL, *steps = NULL, *maker = NULL;
    Py_ssize_t *cells = NULL;
    PyObject *fields = PyObject_CallOneArg(r->fields_of, (PyObject *)cls);
    if (fields == NULL)
        return NULL;
    if (!PyTuple_Check(fields) || PyTuple_GET_SIZE(fields) != 3) {
        PyErr_SetString(PyExc_TypeError, "fields_of must give (steps, getter, maker)");
        goto done;
    }
    steps = PyTuple_GET_ITEM(fields, 0);
    maker = PyTuple_GET_ITEM(fields, 2);
    names = PyObject_GetAttrString((PyObject *)cls, "_names");
    if (names == NULL || !PyTuple_Check(steps) || !PyTuple_Check(names)) {
        if (names != NULL)
            PyErr_SetString(PyExc_TypeError, "an IR class's _names and steps must be tuples");
        goto done;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(names), nsteps = PyTuple_GET_SIZE(steps);
    cells = PyMem_New(Py_ssize_t, n + 2 + 2 * nsteps);
    if (cells == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    cells[0] = n;
    int slotted = slot_offsets(cls, names, cells + 1);
    if (slotted < 0)
        goto done;
    if (slotted == 0)
        made = Py_NewRef(Py_None);
    else {
        cells[n + 1] = nsteps;
        for (Py_ssize_t s = 0; s < nsteps; s++) {
            PyObject *step = PyTuple_GET_ITEM(steps, s);
            Py_ssize_t index, kind;
            if (!PyArg_ParseTuple(step, "nn", &index, &kind))
                goto done;
            if (index < 0 || index >= n || kind < KIND_KEEP || kind > KIND_EXTRA) {
                PyErr_SetString(PyExc_ValueError, "a step names no field or no kind");
                goto done;
            }
            cells[n + 2 + 2 * s] = index;
            cells[n + 3 + 2 * s] = kind;
        }
        PyObject *bytes = PyBytes_FromStringAndSize((const char *)cells, (n + 2 + 2 * nsteps) * sizeof(Py_ssize_t));
        if (bytes == NULL)
            goto done;
        made = PyTuple_Pack(2, bytes, maker);
        Py_DECREF(bytes);
    }
    if (made != NULL && PyDict_SetItem(r->layouts, (PyObject *)cls, made) < 0)
        Py_CLEAR(made);
done:
    PyMem_Free(cells);
    Py_XDECREF(names);
    Py_DECREF(fields);
    Py_XDECREF(made);  /* the dict holds it */
    return made;
}

static int
is_scalar(PyObject *v)
{
    return PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyBool_Check(v);
}

static PyObject *rebuild_value(Rebuilder *r, PyObject *value);

/* A string: its replacement when the scan replaced it, else itself (a new reference). */
static PyObject *
rebuild_string(Rebuilder *r, PyObject *value)
{
    int found = PyDict_Contains(r->replaced, value);
    if (found < 0)
        return NULL;
    return found ? PyObject_CallOneArg(r->replace, value) : Py_NewRef(value);
}

static PyObject *
rebuild_mapping(Rebuilder *r, PyObject *value, int top_extra)
{
    if (!PyDict_CheckExact(value))
        return top_extra ? PyObject_CallOneArg(r->fallback_extra, value) : PyObject_CallOneArg(r->fallback, value);
    if (PyDict_GET_SIZE(value) == 0)
        return Py_NewRef(value);
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    int changed = 0;
    Py_ssize_t pos = 0, size = PyDict_GET_SIZE(value);
    PyObject *key, *item;
    while (PyDict_Next(value, &pos, &key, &item)) {
        if (PyDict_GET_SIZE(value) != size) {
            dict_changed();
            goto fail;
        }
        PyObject *new_key = NULL, *new_item = NULL;
        Py_INCREF(key);
        Py_INCREF(item);
        if (PyUnicode_CheckExact(key)) {
            if (top_extra && item != Py_None) {
                PyObject *res = PyObject_CallOneArg(r->opaque_key, key);
                int opaque = res == NULL ? -1 : PyObject_IsTrue(res);
                Py_XDECREF(res);
                if (opaque > 0) {
                    PyObject *noted = PyObject_CallOneArg(r->drop, r->s_signature);
                    opaque = noted == NULL ? -1 : 1;
                    Py_XDECREF(noted);
                }
                if (opaque != 0) {
                    Py_DECREF(key);
                    Py_DECREF(item);
                    if (opaque < 0)
                        goto fail;
                    changed = 1;
                    continue;
                }
            }
            new_key = rebuild_string(r, key);
        }
        else
            new_key = rebuild_value(r, key);
        if (new_key != NULL) {
            if (PyUnicode_CheckExact(item))
                new_item = rebuild_string(r, item);
            else if (item == Py_None || is_scalar(item))
                new_item = Py_NewRef(item);
            else
                new_item = rebuild_value(r, item);
        }
        int ok = new_item != NULL && PyDict_SetItem(out, new_key, new_item) == 0;
        if (ok && (new_key != key || new_item != item))
            changed = 1;
        Py_DECREF(key);
        Py_DECREF(item);
        Py_XDECREF(new_key);
        Py_XDECREF(new_item);
        if (!ok)
            goto fail;
    }
    if (PyDict_GET_SIZE(value) != size) {
        dict_changed();
        goto fail;
    }
    if (changed)
        return out;
    Py_DECREF(out);
    return Py_NewRef(value);
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *
rebuild_sequence(Rebuilder *r, PyObject *value)
{
    int is_list = PyList_CheckExact(value);
    PyObject *fast = PySequence_Fast(value, "");
    if (fast == NULL)
        return NULL;
    PyObject *items = NULL;  /* a list, made at the first change */
    /* a callback may change a list: its size is read at each step, as Python's iteration
     * does, and each item held while it is rebuilt */
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); i++) {
        PyObject *item = Py_NewRef(PySequence_Fast_GET_ITEM(fast, i)), *new_item;
        if (PyUnicode_CheckExact(item))
            new_item = rebuild_string(r, item);
        else if (item == Py_None || is_scalar(item)) {
            Py_DECREF(item);
            continue;
        }
        else
            new_item = rebuild_value(r, item);
        int same = new_item == item;
        Py_DECREF(item);
        if (new_item == NULL)
            goto fail;
        if (same) {
            Py_DECREF(new_item);
            continue;
        }
        if (items == NULL && (items = PySequence_List(fast)) == NULL) {
            Py_DECREF(new_item);
            goto fail;
        }
        if (PyList_SetItem(items, i, new_item) < 0)  /* steals new_item */
            goto fail;
    }
    Py_DECREF(fast);
    if (items == NULL)
        return Py_NewRef(value);
    if (is_list)
        return items;
    PyObject *tuple = PyList_AsTuple(items);
    Py_DECREF(items);
    return tuple;
fail:
    Py_DECREF(fast);
    Py_XDECREF(items);
    return NULL;
}

static PyObject *
rebuild_node(Rebuilder *r, PyObject *node, PyObject *layout)
{
    const Py_ssize_t *cells = (const Py_ssize_t *)PyBytes_AS_STRING(PyTuple_GET_ITEM(layout, 0));
    PyObject *maker = PyTuple_GET_ITEM(layout, 1);
    Py_ssize_t n = cells[0], nsteps = cells[n + 1];
    for (Py_ssize_t i = 1; i <= n; i++)
        if (SLOT(node, cells[i]) == NULL)
            return PyObject_CallOneArg(r->fallback, node);  /* an unset field: Python raises */
    PyObject *room[16];
    PyObject **olds = hold_fields(node, cells + 1, n, room, 16);
    if (olds == NULL)
        return NULL;
    PyObject **values = NULL;  /* the fields' values (new references), made at the first change */
    PyObject *result = NULL;
    for (Py_ssize_t s = 0; s < nsteps; s++) {
        Py_ssize_t index = cells[n + 2 + 2 * s], kind = cells[n + 3 + 2 * s];
        PyObject *old = olds[index], *new;
        if (old == Py_None || old == r->empty)
            continue;
        if (PyUnicode_CheckExact(old) && kind == KIND_SCAN)
            new = rebuild_string(r, old);
        else if (is_scalar(old))
            continue;
        else if (kind == KIND_SIGNATURE || kind == KIND_IMAGE_DATA) {
            if (kind == KIND_IMAGE_DATA && !r->drop_images)
                continue;
            PyObject *noted = PyObject_CallOneArg(r->drop, kind == KIND_SIGNATURE ? r->s_signature : r->s_image);
            if (noted == NULL)
                goto done;
            Py_DECREF(noted);
            new = Py_NewRef(Py_None);
        }
        else if (kind == KIND_EXTRA)
            new = rebuild_mapping(r, old, 1);
        else
            new = rebuild_value(r, old);
        if (new == NULL)
            goto done;
        if (new == old) {
            Py_DECREF(new);
            continue;
        }
        if (values == NULL) {
            values = PyMem_New(PyObject *, n);
            if (values == NULL) {
                Py_DECREF(new);
                PyErr_NoMemory();
                goto done;
            }
            for (Py_ssize_t i = 0; i < n; i++)
                values[i] = Py_NewRef(olds[i]);
        }
        Py_SETREF(values[index], new);
    }
    result = values == NULL ? Py_NewRef(node) : PyObject_Vectorcall(maker, values, n, NULL);
done:
    if (values != NULL) {
        for (Py_ssize_t i = 0; i < n; i++)
            Py_DECREF(values[i]);
        PyMem_Free(values);
    }
    release_fields(olds, n, room);
    return result;
}

static PyObject *
rebuild_value(Rebuilder *r, PyObject *value)
{
    if (PyUnicode_CheckExact(value))
        return rebuild_string(r, value);
    if (value == Py_None || is_scalar(value) || PyFrozenSet_CheckExact(value) || PySet_CheckExact(value))
        return Py_NewRef(value);
    if (r->depth >= C_DEPTH)
        return PyObject_CallOneArg(r->fallback, value);
    if (Py_EnterRecursiveCall(" while rebuilding a redacted document"))
        return NULL;
    r->depth++;
    PyObject *result;
    PyObject *layout = rebuild_layout(r, Py_TYPE(value));
    if (layout == NULL && PyErr_Occurred())
        result = NULL;
    else if (layout != NULL && layout != Py_None)
        result = rebuild_node(r, value, layout);
    else if (PyDict_CheckExact(value))
        result = rebuild_mapping(r, value, 0);
    else if (PyList_CheckExact(value) || PyTuple_CheckExact(value))
        result = rebuild_sequence(r, value);
    else
        result = PyObject_CallOneArg(r->fallback, value);
    r->depth--;
    Py_LeaveRecursiveCall();
    return result;
}

static PyObject *
Rebuilder_call(Rebuilder *self, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) != 1 || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "Rebuilder takes one argument");
        return NULL;
    }
    return rebuild_value(self, PyTuple_GET_ITEM(args, 0));
}

static PyTypeObject RebuilderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "piconv._speedups.Rebuilder",
    .tp_basicsize = sizeof(Rebuilder),
    .tp_dealloc = (destructor)Rebuilder_dealloc,
    .tp_call = (ternaryfunc)Rebuilder_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)Rebuilder_traverse,
    .tp_clear = (inquiry)Rebuilder_clear,
    .tp_doc = "rebuild(value) -> value: a redaction's last pass (see Redactor._rebuild).",
    .tp_new = Rebuilder_new,
};

/* ------------------------------------------------------------------ module */

static PyMethodDef methods[] = {
    {"content", (PyCFunction)(void (*)(void))load_content, METH_FASTCALL,
     "content(raw, part): a str as it is; a list as a tuple of part(item)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "piconv._speedups", "C accelerators for building IR objects and collecting their strings (optional).", -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    s_type = PyUnicode_InternFromString("type");
    s_id = PyUnicode_InternFromString("id");
    s_parentId = PyUnicode_InternFromString("parentId");
    s_timestamp = PyUnicode_InternFromString("timestamp");
    s_message = PyUnicode_InternFromString("message");
    s_role = PyUnicode_InternFromString("role");
    if (!s_type || !s_id || !s_parentId || !s_timestamp || !s_message || !s_role)
        return NULL;
    PyTypeObject *types[] = {&TableLoaderType, &DispatchType, &ContentLoaderType, &EntryLoaderType, &MakerType,
                             &StringWalkerType, &RebuilderType};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (PyType_Ready(types[i]) < 0)
            return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    const char *names[] = {"TableLoader", "Dispatch", "ContentLoader", "EntryLoader", "Maker", "StringWalker",
                           "Rebuilder"};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        Py_INCREF(types[i]);
        if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0) {
            Py_DECREF(types[i]);
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
