/* checks.proven_valid in C, for the lines the ASF writer checks as it writes them.
 *
 * ``proven_valid(line) -> bool``: True only where the Python ``checks.proven_valid``
 * answers True (it reads the same members in the same way; see that module for what each
 * test stands for). It may answer False where Python would say True -- a string matched
 * by a pattern only through Unicode digits or a trailing newline, a ``normalised``
 * member -- because the caller then asks the Python predicate: the verdict is always
 * Python's. checks.py uses this module only when the schema's patterns and the name sets
 * it was written for (PATTERNS, NAMES) are the ones checks.py reads, and
 * tests/test_asf_fastcheck.py holds the two predicates to the same answers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define HASH_PATTERN "^sha256:[0-9a-f]{64}$"
#define TS_PATTERN "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:[0-5]\\d(\\.\\d{0,8}[1-9])?Z$"
#define NS_PATTERN "^[A-Za-z0-9_.-]+:[A-Za-z0-9_.:-]+$"

/* Member names, interned once. */
#define NAMES_LIST(X)                                                                             \
    X(type) X(content) X(parents) X(id) X(parent) X(ts) X(legacy_id) X(normalised) X(item)         \
    X(response) X(visible) X(source) X(queued_from) X(response_id) X(model) X(status) X(usage)     \
    X(incomplete) X(error) X(request_hash) X(latency_ms) X(attempts) X(first_kept) X(summary)      \
    X(pinned) X(config) X(tokens_before) X(from) X(target) X(label) X(synthetic) X(name) X(ns)     \
    X(data) X(call_id) X(text) X(refusal) X(annotations) X(image_url) X(file_id) X(detail) X(role) \
    X(arguments) X(output) X(encrypted_content) X(input_tokens) X(output_tokens) X(total_tokens)  \
    X(input_tokens_details) X(output_tokens_details) X(cached_tokens) X(reasoning_tokens)         \
    X(description) X(parameters) X(strict) X(instructions) X(reasoning) X(instructions_parts)      \
    X(omit) X(extra) X(tools) X(instructions_omitted) X(tools_added) X(tools_removed) X(replace)   \
    X(items)
#define DECLARE(n) static PyObject *k_##n;
NAMES_LIST(DECLARE)
#undef DECLARE

/* The name sets of checks.py, as written here (compared with Python's at import). */
static const char *const STATUS[] = {"in_progress", "completed", "incomplete", NULL};
static const char *const ROLES[] = {"user", "assistant", "system", "developer", NULL};
static const char *const TEXTY[] = {"input_text", "output_text", "text", "summary_text", "reasoning_text", "refusal", NULL};
static const char *const CORE_TYPES[] = {"item", "response", "config", "compaction", "branch_summary", "run",
                                         "dispatch", "decision", "queued", "label", "info", "env", "outcome",
                                         "link", "custom", NULL};
static const char *const CORE_ITEMS[] = {"message", "function_call", "function_call_output", "reasoning",
                                         "compaction", "item_reference", NULL};

/* A member of d, borrowed; NULL when missing (a lookup by str key cannot fail). */
static PyObject *
get(PyObject *d, PyObject *key)
{
    return PyDict_GetItemWithError(d, key);
}

static int
is_str(PyObject *x)
{
    return x != NULL && PyUnicode_CheckExact(x);
}

/* Whether the str s equals the ASCII text (length first: a str may hold a NUL). */
static int
eq(PyObject *s, const char *ascii)
{
    size_t n = strlen(ascii);
    return PyUnicode_IS_ASCII(s) && (size_t)PyUnicode_GET_LENGTH(s) == n
           && memcmp(PyUnicode_1BYTE_DATA(s), ascii, n) == 0;
}

static int
in_set(PyObject *s, const char *const *names)
{
    for (; *names; names++)
        if (eq(s, *names))
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- the patterns, ASCII only */

static int
is_hash(PyObject *x)
{
    if (!is_str(x) || !PyUnicode_IS_ASCII(x) || PyUnicode_GET_LENGTH(x) != 71)
        return 0;
    const char *s = (const char *)PyUnicode_1BYTE_DATA(x);
    if (memcmp(s, "sha256:", 7) != 0)
        return 0;
    for (int i = 7; i < 71; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static int
digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

static int
is_ts(PyObject *x)
{
    if (!is_str(x) || !PyUnicode_IS_ASCII(x))
        return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(x);
    const char *s = (const char *)PyUnicode_1BYTE_DATA(x);
    if (n < 20 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2)
        || s[10] != 'T' || !digits(s + 11, 2) || s[13] != ':' || !digits(s + 14, 2) || s[16] != ':'
        || s[17] < '0' || s[17] > '5' || !digits(s + 18, 1))
        return 0;
    if (n == 20)
        return s[19] == 'Z';
    /* . then 1 to 9 digits, the last not 0, then Z */
    Py_ssize_t k = n - 21;
    return s[19] == '.' && k >= 1 && k <= 9 && digits(s + 20, (int)k) && s[n - 2] != '0' && s[n - 1] == 'Z';
}

static int
ns_char(char c, int colon)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'
           || c == '-' || (colon && c == ':');
}

static int
is_ns(PyObject *x)
{
    if (!PyUnicode_IS_ASCII(x))
        return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(x);
    const char *s = (const char *)PyUnicode_1BYTE_DATA(x);
    Py_ssize_t i = 0;
    while (i < n && ns_char(s[i], 0))
        i++;
    if (i == 0 || i >= n - 1 || s[i] != ':')
        return 0;
    for (i++; i < n; i++)
        if (!ns_char(s[i], 1))
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- checks.py's helpers */

static int
opt(PyObject *v, PyObject *key, PyTypeObject *t)
{
    PyObject *x = get(v, key);
    return x == NULL || Py_IS_TYPE(x, t);
}

static int
opt_or_null(PyObject *v, PyObject *key, PyTypeObject *t)
{
    PyObject *x = get(v, key);
    return x == NULL || x == Py_None || Py_IS_TYPE(x, t);
}

static int
nonnegative_int(PyObject *x)
{
    if (!PyLong_CheckExact(x))
        return 0;
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(x, &overflow);
    return overflow > 0 || (overflow == 0 && value >= 0);
}

static int
count(PyObject *v, PyObject *key)
{
    PyObject *x = get(v, key);
    return x == NULL || nonnegative_int(x);
}

static int
has(PyObject *v, PyObject *key)
{
    return get(v, key) != NULL;
}

typedef int (*Check)(PyObject *);

static int
all_of(PyObject *list, Check check)
{
    Py_ssize_t n = PyList_GET_SIZE(list);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!check(PyList_GET_ITEM(list, i)))
            return 0;
    return 1;
}

static int
list_of(PyObject *v, PyObject *key, Check check)
{
    PyObject *x = get(v, key);
    if (x == NULL)
        return 1;
    return PyList_CheckExact(x) && all_of(x, check);
}

static int
check_is_dict(PyObject *x)
{
    return PyDict_CheckExact(x);
}

static int
check_is_str(PyObject *x)
{
    return PyUnicode_CheckExact(x);
}

static int
part(PyObject *p)
{
    if (!PyDict_CheckExact(p))
        return 0;
    PyObject *t = get(p, k_type);
    if (!is_str(t))
        return 0;
    if (in_set(t, TEXTY)) {
        if (!(opt(p, k_text, &PyUnicode_Type) && opt(p, k_refusal, &PyUnicode_Type)))
            return 0;
        if (eq(t, "input_text"))
            return has(p, k_text);
        if (eq(t, "output_text"))
            return has(p, k_text) && opt(p, k_annotations, &PyList_Type);
        return 1;
    }
    if (eq(t, "input_image"))
        return opt_or_null(p, k_image_url, &PyUnicode_Type) && opt_or_null(p, k_file_id, &PyUnicode_Type)
               && opt(p, k_detail, &PyUnicode_Type);
    return 1;
}

static int
content(PyObject *c)
{
    if (PyUnicode_CheckExact(c))
        return 1;
    return PyList_CheckExact(c) && all_of(c, part);
}

static int
status_ok(PyObject *it)
{
    PyObject *status = get(it, k_status);
    return status == NULL || (is_str(status) && in_set(status, STATUS));
}

static int
item(PyObject *it)
{
    if (!PyDict_CheckExact(it))
        return 0;
    PyObject *t = get(it, k_type);
    if (!is_str(t))
        return 0;
    if (eq(t, "message")) {
        PyObject *role = get(it, k_role);
        PyObject *c = get(it, k_content);
        return is_str(role) && in_set(role, ROLES) && c != NULL && content(c) && opt(it, k_id, &PyUnicode_Type)
               && status_ok(it);
    }
    int call = eq(t, "function_call");
    if (call || eq(t, "function_call_output")) {
        PyObject *call_id = get(it, k_call_id);
        if (!(is_str(call_id) && PyUnicode_GET_LENGTH(call_id) >= 1 && opt(it, k_id, &PyUnicode_Type)
              && status_ok(it)))
            return 0;
        if (call)
            return is_str(get(it, k_name)) && is_str(get(it, k_arguments));
        PyObject *output = get(it, k_output);
        return output != NULL && content(output);
    }
    if (eq(t, "reasoning")) {
        PyObject *summary = get(it, k_summary);
        if (summary == NULL || !PyList_CheckExact(summary) || !all_of(summary, part))
            return 0;
        PyObject *c = get(it, k_content);
        if (c != NULL && c != Py_None && (!PyList_CheckExact(c) || !all_of(c, part)))
            return 0;
        return opt(it, k_id, &PyUnicode_Type) && opt_or_null(it, k_encrypted_content, &PyUnicode_Type);
    }
    if (in_set(t, CORE_ITEMS))
        return 0;
    return is_ns(t);
}

static int
usage(PyObject *u)
{
    if (!PyDict_CheckExact(u))
        return 0;
    if (!(count(u, k_input_tokens) && count(u, k_output_tokens) && count(u, k_total_tokens)))
        return 0;
    PyObject *d = get(u, k_input_tokens_details);
    if (d != NULL && (!PyDict_CheckExact(d) || !count(d, k_cached_tokens)))
        return 0;
    d = get(u, k_output_tokens_details);
    return d == NULL || (PyDict_CheckExact(d) && count(d, k_reasoning_tokens));
}

static int
tool(PyObject *t)
{
    return PyDict_CheckExact(t) && is_str(get(t, k_type)) && opt(t, k_name, &PyUnicode_Type)
           && opt_or_null(t, k_description, &PyUnicode_Type) && opt_or_null(t, k_parameters, &PyDict_Type)
           && opt_or_null(t, k_strict, &PyBool_Type);
}

static int
omit(PyObject *o)
{
    return PyDict_CheckExact(o) && opt(o, k_reasoning, &PyUnicode_Type) && list_of(o, k_items, check_is_str);
}

static int
settings_common(PyObject *s)
{
    PyObject *o = get(s, k_omit);
    return opt(s, k_model, &PyUnicode_Type) && opt(s, k_instructions, &PyUnicode_Type)
           && opt_or_null(s, k_reasoning, &PyDict_Type) && opt_or_null(s, k_text, &PyDict_Type)
           && list_of(s, k_instructions_parts, check_is_dict) && (o == NULL || omit(o))
           && opt(s, k_extra, &PyDict_Type);
}

static int
settings(PyObject *s)
{
    return PyDict_CheckExact(s) && settings_common(s) && list_of(s, k_tools, tool)
           && list_of(s, k_instructions_omitted, check_is_dict);
}

static int
config(PyObject *v)
{
    PyObject *omitted = get(v, k_instructions_omitted);
    return settings_common(v) && (omitted == Py_None || list_of(v, k_instructions_omitted, check_is_dict))
           && list_of(v, k_tools_added, tool) && list_of(v, k_tools_removed, check_is_str)
           && opt(v, k_replace, &PyBool_Type);
}

static int
valid(PyObject *v)
{
    if (!PyDict_CheckExact(v))
        return 0;
    PyObject *t = get(v, k_type);
    if (!is_str(t) || eq(t, "session") || has(v, k_content) || has(v, k_parents))
        return 0;
    PyObject *parent = get(v, k_parent);
    PyObject *legacy = get(v, k_legacy_id);
    if (!(is_hash(get(v, k_id)) && parent != NULL && (parent == Py_None || is_hash(parent)) && is_ts(get(v, k_ts))
          && (legacy == NULL || is_str(legacy))))
        return 0;
    if (has(v, k_normalised))
        return 0;  /* rare (values made I-JSON): the Python predicate reads the records */
    if (eq(t, "item")) {
        PyObject *it = get(v, k_item), *response = get(v, k_response), *visible = get(v, k_visible);
        PyObject *source = get(v, k_source), *queued = get(v, k_queued_from);
        return it != NULL && item(it) && (response == NULL || is_str(response))
               && (visible == NULL || PyBool_Check(visible)) && (source == NULL || PyDict_CheckExact(source))
               && (queued == NULL || is_hash(queued));
    }
    if (eq(t, "response")) {
        PyObject *u = get(v, k_usage);
        return opt(v, k_response_id, &PyUnicode_Type) && opt(v, k_model, &PyUnicode_Type)
               && opt(v, k_status, &PyUnicode_Type) && (u == NULL || u == Py_None || usage(u))
               && opt_or_null(v, k_incomplete, &PyDict_Type) && opt_or_null(v, k_error, &PyDict_Type)
               && !has(v, k_request_hash) && !has(v, k_latency_ms) && !has(v, k_attempts);
    }
    if (eq(t, "config"))
        return config(v);
    if (eq(t, "compaction")) {
        PyObject *summary = get(v, k_summary), *conf = get(v, k_config), *u = get(v, k_usage);
        return is_hash(get(v, k_first_kept)) && summary != NULL && item(summary) && list_of(v, k_pinned, item)
               && (conf == NULL || settings(conf)) && count(v, k_tokens_before) && (u == NULL || usage(u));
    }
    if (eq(t, "branch_summary")) {
        PyObject *summary = get(v, k_summary), *u = get(v, k_usage);
        return is_hash(get(v, k_from)) && summary != NULL && item(summary) && (u == NULL || usage(u));
    }
    if (eq(t, "label")) {
        PyObject *label = get(v, k_label);
        return is_hash(get(v, k_target)) && label != NULL && (label == Py_None || is_str(label))
               && opt(v, k_synthetic, &PyBool_Type);
    }
    if (eq(t, "info"))
        return opt_or_null(v, k_name, &PyUnicode_Type);
    if (eq(t, "custom")) {
        PyObject *ns = get(v, k_ns);
        return is_str(ns) && PyUnicode_GET_LENGTH(ns) >= 1 && has(v, k_data) && opt(v, k_call_id, &PyUnicode_Type);
    }
    if (in_set(t, CORE_TYPES))
        return 0;
    return is_ns(t);
}

static PyObject *
proven_valid(PyObject *Py_UNUSED(module), PyObject *line)
{
    int ok = valid(line);
    if (PyErr_Occurred())
        return NULL;
    return PyBool_FromLong(ok);
}

static PyMethodDef methods[] = {
    {"proven_valid", proven_valid, METH_O,
     "proven_valid(line) -> bool\n\nTrue only where checks.proven_valid is True (see _checks.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_checks", "checks.proven_valid in C (see converters/asf/checks.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

static PyObject *
names_tuple(const char *const *names)
{
    Py_ssize_t n = 0;
    while (names[n])
        n++;
    PyObject *out = PyTuple_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PyUnicode_FromString(names[i]);
        if (s == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, s);
    }
    return out;
}

PyMODINIT_FUNC
PyInit__checks(void)
{
#define INTERN(n)                                      \
    if ((k_##n = PyUnicode_InternFromString(#n)) == NULL) \
        return NULL;
    NAMES_LIST(INTERN)
#undef INTERN
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    PyObject *patterns = Py_BuildValue("(sss)", HASH_PATTERN, TS_PATTERN, NS_PATTERN);
    PyObject *names = Py_BuildValue("{sNsNsNsNsN}", "STATUS", names_tuple(STATUS), "ROLES", names_tuple(ROLES),
                                    "TEXTY", names_tuple(TEXTY), "CORE_TYPES", names_tuple(CORE_TYPES),
                                    "CORE_ITEMS", names_tuple(CORE_ITEMS));
    if (patterns == NULL || names == NULL || PyModule_AddObject(m, "PATTERNS", patterns) < 0
        || PyModule_AddObject(m, "NAMES", names) < 0) {
        Py_XDECREF(patterns);
        Py_XDECREF(names);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
