/* RFC 8785 (JSON Canonicalization Scheme) bytes in one pass, for the ASF writer.
 *
 * ``canonical(value) -> bytes | None``: the JCS text of a value made of exact dicts (str
 * keys), lists, tuples, strs, ints, floats, bools and None. It answers ``None`` -- never
 * raises, except MemoryError -- for whatever it leaves to the Python serialiser
 * (converters/asf/jcs.py), which stays the reference and words the refusals: a lone
 * surrogate, an int beyond +-2**53 (JCS renders it as the nearest binary64, which needs
 * the I-JSON test), NaN or an infinity, a key that is no str, a subclass or any other
 * type, nesting deeper than MAX_DEPTH.
 *
 * Strings are read through PyUnicode_KIND/DATA and encoded here: PyUnicode_AsUTF8 would
 * cache a UTF-8 copy on every str it saw, which the IR keeps alive.
 * Object members sort by their keys' UTF-16 code units, as JCS requires.
 * Numbers follow ECMAScript's Number::toString (converters/common/jsnumber.py): the
 * shortest round-trip digits (CPython's repr) laid out by the ECMAScript rules.
 * tests/test_asf_jcs_speedups.py holds this to jcs.canonical_slow and the rfc8785 package.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sha256.h"

/* orjson refuses beyond 255 levels; anything near that is no session's. */
#define MAX_DEPTH 250
#define SAFE_INT (((long long)1) << 53)
/* Code points encoded per buffer reservation: 6 bytes each at most (\u00xx). */
#define CHUNK 4096
/* A buffer grown past this is freed after the call rather than kept for the next. */
#define KEEP_BYTES (1 << 20)

/* Return codes of the writers. */
enum { OK = 0, UNHANDLED = 1, FAILED = -1 };

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buffer;

/* One buffer reused across calls (the GIL is held throughout, no Python code runs). */
static Buffer shared_buf = {NULL, 0, 0};

static int
reserve(Buffer *b, Py_ssize_t extra)
{
    if (b->cap - b->len >= extra)
        return OK;
    Py_ssize_t want = b->cap ? b->cap : 4096;
    while (want - b->len < extra) {
        if (want > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return FAILED;
        }
        want *= 2;
    }
    char *data = PyMem_Realloc(b->data, (size_t)want);
    if (data == NULL) {
        PyErr_NoMemory();
        return FAILED;
    }
    b->data = data;
    b->cap = want;
    return OK;
}

static int
put(Buffer *b, const char *s, Py_ssize_t n)
{
    if (reserve(b, n) != OK)
        return FAILED;
    memcpy(b->data + b->len, s, (size_t)n);
    b->len += n;
    return OK;
}

/* ------------------------------------------------------------------------ strings */

static const char HEX[] = "0123456789abcdef";

/* For an ASCII byte: 0 literal, else the letter of its short escape, or 'u' for \u00xx. */
static char ESCAPE[128];

static void
init_escapes(void)
{
    for (int c = 0; c < 0x20; c++)
        ESCAPE[c] = 'u';
    ESCAPE['\b'] = 'b';
    ESCAPE['\f'] = 'f';
    ESCAPE['\n'] = 'n';
    ESCAPE['\r'] = 'r';
    ESCAPE['\t'] = 't';
    ESCAPE['"'] = '"';
    ESCAPE['\\'] = '\\';
}

/* Write an ASCII character that needs escaping at p; the number of bytes written. */
static inline Py_ssize_t
escape_at(char *p, unsigned char c)
{
    char e = ESCAPE[c];
    p[0] = '\\';
    if (e != 'u') {
        p[1] = e;
        return 2;
    }
    p[1] = 'u';
    p[2] = '0';
    p[3] = '0';
    p[4] = HEX[c >> 4];
    p[5] = HEX[c & 15];
    return 6;
}

/* The high bit of each byte of an ASCII word that needs escaping: below 0x20, '"' or
 * '\\'. Each byte is lifted to >= 0x80 before subtracting, so no borrow crosses bytes
 * and the mask is exact per byte. */
#define ONES ((uint64_t)0x0101010101010101ULL)
#define HIGHS ((uint64_t)0x8080808080808080ULL)
static inline uint64_t
escape_mask(uint64_t w)
{
    uint64_t quote = w ^ (ONES * '"'), backslash = w ^ (ONES * '\\');
    return ~(((w | HIGHS) - ONES * 0x20) & ((quote | HIGHS) - ONES) & ((backslash | HIGHS) - ONES)) & HIGHS;
}

static int
write_ascii(Buffer *b, const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t start = i;
        /* Eight bytes at a time up to the next byte that needs escaping. */
        for (;;) {
            if (i + 8 <= n) {
                uint64_t w;
                memcpy(&w, s + i, 8);
                uint64_t m = escape_mask(w);
                if (m == 0) {
                    i += 8;
                    continue;
                }
#if PY_LITTLE_ENDIAN
                i += __builtin_ctzll(m) >> 3;
                break;
#endif
            }
            while (i < n && ESCAPE[s[i]] == 0)
                i++;
            break;
        }
        if (i > start && put(b, (const char *)s + start, i - start) != OK)
            return FAILED;
        if (i < n) {
            if (reserve(b, 6) != OK)
                return FAILED;
            b->len += escape_at(b->data + b->len, s[i]);
            i++;
        }
    }
    return OK;
}

/* UTF-8 by hand, one loop per string kind; a surrogate (necessarily lone in a str) is
 * UNHANDLED. */
#define WRITE_WIDE(NAME, TYPE)                                                  \
    static int NAME(Buffer *b, const TYPE *s, Py_ssize_t n)                     \
    {                                                                           \
        for (Py_ssize_t at = 0; at < n; at += CHUNK) {                          \
            Py_ssize_t end = n - at < CHUNK ? n : at + CHUNK;                   \
            if (reserve(b, (end - at) * 6) != OK)                               \
                return FAILED;                                                  \
            char *p = b->data + b->len;                                         \
            for (Py_ssize_t i = at; i < end; i++) {                             \
                Py_UCS4 c = s[i];                                               \
                if (c < 0x80) {                                                 \
                    if (ESCAPE[c])                                              \
                        p += escape_at(p, (unsigned char)c);                    \
                    else                                                        \
                        *p++ = (char)c;                                         \
                }                                                               \
                else if (c < 0x800) {                                           \
                    *p++ = (char)(0xC0 | (c >> 6));                             \
                    *p++ = (char)(0x80 | (c & 0x3F));                           \
                }                                                               \
                else if (c < 0x10000) {                                         \
                    if (c >= 0xD800 && c <= 0xDFFF)                             \
                        return UNHANDLED;                                       \
                    *p++ = (char)(0xE0 | (c >> 12));                            \
                    *p++ = (char)(0x80 | ((c >> 6) & 0x3F));                    \
                    *p++ = (char)(0x80 | (c & 0x3F));                           \
                }                                                               \
                else {                                                          \
                    *p++ = (char)(0xF0 | (c >> 18));                            \
                    *p++ = (char)(0x80 | ((c >> 12) & 0x3F));                   \
                    *p++ = (char)(0x80 | ((c >> 6) & 0x3F));                    \
                    *p++ = (char)(0x80 | (c & 0x3F));                           \
                }                                                               \
            }                                                                   \
            b->len = p - b->data;                                               \
        }                                                                       \
        return OK;                                                              \
    }

WRITE_WIDE(write_ucs1, Py_UCS1)
WRITE_WIDE(write_ucs2, Py_UCS2)
WRITE_WIDE(write_ucs4, Py_UCS4)

static int
write_string(Buffer *b, PyObject *s)
{
    if (put(b, "\"", 1) != OK)
        return FAILED;
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int rc;
    if (PyUnicode_IS_ASCII(s))
        rc = write_ascii(b, PyUnicode_1BYTE_DATA(s), n);
    else if (PyUnicode_KIND(s) == PyUnicode_1BYTE_KIND)
        rc = write_ucs1(b, PyUnicode_1BYTE_DATA(s), n);
    else if (PyUnicode_KIND(s) == PyUnicode_2BYTE_KIND)
        rc = write_ucs2(b, PyUnicode_2BYTE_DATA(s), n);
    else
        rc = write_ucs4(b, PyUnicode_4BYTE_DATA(s), n);
    if (rc != OK)
        return rc;
    return put(b, "\"", 1);
}

/* ------------------------------------------------------------------------ numbers */

static int
write_int(Buffer *b, long long v)
{
    char tmp[24];
    int i = (int)sizeof(tmp);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--i] = '-';
    return put(b, tmp + i, (Py_ssize_t)sizeof(tmp) - i);
}

/* ECMAScript Number::toString of a finite, non-zero double (jsnumber.js_number_text). */
static int
write_double(Buffer *b, double x)
{
    if (x == 0.0)
        return put(b, "0", 1);  /* -0 too */
    if (x == floor(x) && fabs(x) <= 9007199254740992.0)
        return write_int(b, (long long)x);  /* whole and exact: its digits, no exponent */
    char out[64];
    int o = 0;
    if (x < 0) {
        out[o++] = '-';
        x = -x;
    }
    char *repr = PyOS_double_to_string(x, 'r', 0, 0, NULL);
    if (repr == NULL)
        return FAILED;
    /* repr: digits [. digits] [e(+|-)digits]. Collect the significant digits and the
     * position of the decimal point relative to them. */
    char digits[32];
    int k = 0, point = 0, seen_point = 0, leading = 1;
    const char *p = repr;
    for (; *p && *p != 'e'; p++) {
        if (*p == '.') {
            seen_point = 1;
            continue;
        }
        if (*p < '0' || *p > '9' || k >= (int)sizeof(digits)) {
            PyMem_Free(repr);
            return UNHANDLED;  /* not a spelling of a finite number: cannot happen */
        }
        if (!seen_point)
            point++;
        if (leading && *p == '0') {
            point--;  /* a leading zero moves the point left of the first digit */
            continue;
        }
        leading = 0;
        digits[k++] = *p;
    }
    if (*p == 'e')
        point += atoi(p + 1);
    PyMem_Free(repr);
    while (k > 1 && digits[k - 1] == '0')
        k--;
    if (k == 0)
        return put(b, "0", 1);
    int n = point;
    if (k <= n && n <= 21) {
        memcpy(out + o, digits, (size_t)k);
        o += k;
        for (int i = k; i < n; i++)
            out[o++] = '0';
    }
    else if (0 < n && n <= 21) {
        memcpy(out + o, digits, (size_t)n);
        o += n;
        out[o++] = '.';
        memcpy(out + o, digits + n, (size_t)(k - n));
        o += k - n;
    }
    else if (-6 < n && n <= 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -n; i++)
            out[o++] = '0';
        memcpy(out + o, digits, (size_t)k);
        o += k;
    }
    else {
        int e = n - 1;
        out[o++] = digits[0];
        if (k > 1) {
            out[o++] = '.';
            memcpy(out + o, digits + 1, (size_t)(k - 1));
            o += k - 1;
        }
        o += snprintf(out + o, sizeof(out) - (size_t)o, "e%c%d", e >= 0 ? '+' : '-', e >= 0 ? e : -e);
    }
    return put(b, out, o);
}

/* ------------------------------------------------------------------------ objects */

typedef struct {
    PyObject *key;
    PyObject *value;
} Member;

/* A code point's rank in UTF-16 code-unit order: U+E000-U+FFFF sort after the
 * supplementary planes (whose high surrogates are 0xD800-0xDBFF). */
static inline Py_UCS4
utf16_rank(Py_UCS4 c)
{
    return (c >= 0xE000 && c <= 0xFFFF) ? c + 0x110000 : c;
}

static int
key_compare(PyObject *a, PyObject *b)
{
    Py_ssize_t na = PyUnicode_GET_LENGTH(a), nb = PyUnicode_GET_LENGTH(b);
    Py_ssize_t n = na < nb ? na : nb;
    int ka = PyUnicode_KIND(a), kb = PyUnicode_KIND(b);
    const void *da = PyUnicode_DATA(a), *db = PyUnicode_DATA(b);
    if (ka == PyUnicode_1BYTE_KIND && kb == PyUnicode_1BYTE_KIND) {
        int c = memcmp(da, db, (size_t)n);
        if (c)
            return c;
    }
    else {
        /* Code-point order equals UTF-16 order unless a supplementary character (only
         * in a 4-byte-kind str) meets one of U+E000-U+FFFF. */
        int wide = ka == PyUnicode_4BYTE_KIND || kb == PyUnicode_4BYTE_KIND;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 x = PyUnicode_READ(ka, da, i), y = PyUnicode_READ(kb, db, i);
            if (x != y) {
                if (wide) {
                    x = utf16_rank(x);
                    y = utf16_rank(y);
                }
                return x < y ? -1 : 1;
            }
        }
    }
    return na < nb ? -1 : (na > nb ? 1 : 0);
}

static int
member_compare(const void *a, const void *b)
{
    return key_compare(((const Member *)a)->key, ((const Member *)b)->key);
}

static int write_value(Buffer *b, PyObject *v, int depth);

static int
write_dict(Buffer *b, PyObject *d, int depth)
{
    Py_ssize_t n = PyDict_GET_SIZE(d);
    if (n == 0)
        return put(b, "{}", 2);
    Member small[16];
    Member *members = small;
    if (n > 16) {
        members = PyMem_Malloc(sizeof(Member) * (size_t)n);
        if (members == NULL) {
            PyErr_NoMemory();
            return FAILED;
        }
    }
    int rc = OK;
    Py_ssize_t pos = 0, i = 0;
    PyObject *key, *value;
    while (PyDict_Next(d, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            rc = UNHANDLED;
            goto done;
        }
        members[i].key = key;
        members[i].value = value;
        i++;
    }
    if (n <= 16) {  /* insertion sort: bodies have a handful of members */
        for (Py_ssize_t j = 1; j < n; j++) {
            Member m = members[j];
            Py_ssize_t at = j;
            while (at > 0 && key_compare(members[at - 1].key, m.key) > 0) {
                members[at] = members[at - 1];
                at--;
            }
            members[at] = m;
        }
    }
    else {
        qsort(members, (size_t)n, sizeof(Member), member_compare);
    }
    if ((rc = put(b, "{", 1)) != OK)
        goto done;
    for (i = 0; i < n; i++) {
        if (i && (rc = put(b, ",", 1)) != OK)
            goto done;
        if ((rc = write_string(b, members[i].key)) != OK)
            goto done;
        if ((rc = put(b, ":", 1)) != OK)
            goto done;
        if ((rc = write_value(b, members[i].value, depth + 1)) != OK)
            goto done;
    }
    rc = put(b, "}", 1);
done:
    if (members != small)
        PyMem_Free(members);
    return rc;
}

static int
write_array(Buffer *b, PyObject **items, Py_ssize_t n, int depth)
{
    if (put(b, "[", 1) != OK)
        return FAILED;
    for (Py_ssize_t i = 0; i < n; i++) {
        int rc;
        if (i && put(b, ",", 1) != OK)
            return FAILED;
        if ((rc = write_value(b, items[i], depth + 1)) != OK)
            return rc;
    }
    return put(b, "]", 1);
}

static int
write_value(Buffer *b, PyObject *v, int depth)
{
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type)
        return write_string(b, v);
    if (v == Py_None)
        return put(b, "null", 4);
    if (v == Py_True)
        return put(b, "true", 4);
    if (v == Py_False)
        return put(b, "false", 5);
    if (t == &PyLong_Type) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || x > SAFE_INT || x < -SAFE_INT)
            return UNHANDLED;  /* the nearest binary64, if I-JSON: jcs.int_is_ijson */
        if (x == -1 && PyErr_Occurred())
            return FAILED;
        return write_int(b, x);
    }
    if (t == &PyFloat_Type) {
        double x = PyFloat_AS_DOUBLE(v);
        if (!isfinite(x))
            return UNHANDLED;
        return write_double(b, x);
    }
    if (depth >= MAX_DEPTH)
        return UNHANDLED;
    if (t == &PyDict_Type)
        return write_dict(b, v, depth);
    if (t == &PyList_Type)
        return write_array(b, ((PyListObject *)v)->ob_item, PyList_GET_SIZE(v), depth);
    if (t == &PyTuple_Type)
        return write_array(b, ((PyTupleObject *)v)->ob_item, PyTuple_GET_SIZE(v), depth);
    return UNHANDLED;
}

static PyObject *
canonical(PyObject *Py_UNUSED(module), PyObject *value)
{
    Buffer *b = &shared_buf;
    b->len = 0;
    int rc = write_value(b, value, 0);
    PyObject *out = NULL;
    if (rc == OK)
        out = PyBytes_FromStringAndSize(b->data, b->len);
    else if (rc == UNHANDLED)
        out = Py_NewRef(Py_None);
    if (b->cap > KEEP_BYTES) {
        PyMem_Free(b->data);
        b->data = NULL;
        b->cap = 0;
    }
    b->len = 0;
    return out;
}

/* The envelope after its members: the body's members (``data``: the canonical bytes of an
 * object) and a newline. */
static int
put_body(Buffer *b, const char *data, Py_ssize_t n)
{
    if (n == 2)
        return put(b, "}\n", 2); /* an empty body adds nothing */
    int rc = put(b, ",", 1);
    if (rc == OK)
        rc = put(b, data + 1, n - 1);
    if (rc == OK)
        rc = put(b, "\n", 1);
    return rc;
}

/* put() of a string literal, its length counted by the compiler */
#define put_lit(b, s) put((b), (s), (Py_ssize_t)(sizeof(s) - 1))

static PyObject *
take_bytes(Buffer *b, int rc)
{
    PyObject *out = NULL;
    if (rc == OK)
        out = PyBytes_FromStringAndSize(b->data, b->len);
    else if (rc == UNHANDLED)
        out = Py_NewRef(Py_None);
    if (b->cap > KEEP_BYTES) {
        PyMem_Free(b->data);
        b->data = NULL;
        b->cap = 0;
    }
    b->len = 0;
    return out;
}

/* entry_line(type, id, parent, ts, body) -> bytes | None: an ASF entry line, the
 * envelope members first then those of ``body`` (the canonical bytes of an object), and a
 * newline. None when an envelope member is not an exact str (parent: or None) or holds a
 * lone surrogate, or ``body`` is no bytes spelling an object. */
static PyObject *
entry_line(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "entry_line() takes 5 arguments");
        return NULL;
    }
    PyObject *type = args[0], *id = args[1], *parent = args[2], *ts = args[3], *body = args[4];
    if (!PyUnicode_CheckExact(type) || !PyUnicode_CheckExact(id) || !PyUnicode_CheckExact(ts)
        || !(parent == Py_None || PyUnicode_CheckExact(parent)) || !PyBytes_CheckExact(body))
        Py_RETURN_NONE;
    const char *data = PyBytes_AS_STRING(body);
    Py_ssize_t n = PyBytes_GET_SIZE(body);
    if (n < 2 || data[0] != '{' || data[n - 1] != '}')
        Py_RETURN_NONE;
    Buffer *b = &shared_buf;
    b->len = 0;
    int rc = put(b, "{\"type\":", 8);
    if (rc == OK)
        rc = write_string(b, type);
    if (rc == OK)
        rc = put(b, ",\"id\":", 6);
    if (rc == OK)
        rc = write_string(b, id);
    if (rc == OK)
        rc = put(b, ",\"parent\":", 10);
    if (rc == OK)
        rc = parent == Py_None ? put(b, "null", 4) : write_string(b, parent);
    if (rc == OK)
        rc = put(b, ",\"ts\":", 6);
    if (rc == OK)
        rc = write_string(b, ts);
    if (rc == OK)
        rc = put_body(b, data, n);
    return take_bytes(b, rc);
}

/* ------------------------------------------------------------------------- ids */

/* The text of a str the writer made itself (a type, an id, a timestamp): printable ASCII
 * with nothing JSON escapes, so its JSON and JCS spelling is the text in quotes. NULL
 * for anything else (the Python code spells those). */
static const char *
plain_text(PyObject *s, Py_ssize_t *n)
{
    if (!PyUnicode_CheckExact(s) || !PyUnicode_IS_ASCII(s))
        return NULL;
    const char *text = (const char *)PyUnicode_1BYTE_DATA(s);
    Py_ssize_t len = PyUnicode_GET_LENGTH(s);
    for (Py_ssize_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 || c == '"' || c == '\\')
            return NULL;
    }
    *n = len;
    return text;
}

/* The envelope text an id hashes, reused across calls. */
static Buffer envelope_buf = {NULL, 0, 0};

/* The envelope's id (RFC 0001: SHA-256 of the JCS of content, parent, ts and type, in
 * that order) into id[71]; its line (envelope then body) appended to ``out``. */
static int
envelope(Buffer *out, const char content[71], PyObject *type, PyObject *parent, PyObject *ts, const char *data,
         Py_ssize_t n, char id[71])
{
    Py_ssize_t type_n = 0, ts_n = 0, parent_n = 0;
    const char *type_s = plain_text(type, &type_n);
    const char *ts_s = plain_text(ts, &ts_n);
    const char *parent_s = parent == Py_None ? "" : plain_text(parent, &parent_n);
    if (type_s == NULL || ts_s == NULL || parent_s == NULL || n < 2 || data[0] != '{' || data[n - 1] != '}')
        return UNHANDLED;
    Buffer *b = &envelope_buf;
    b->len = 0;
    int rc = put_lit(b, "{\"content\":\"");
    if (rc == OK)
        rc = put(b, content, 71);
    if (rc == OK)
        rc = parent == Py_None ? put_lit(b, "\",\"parent\":null") : put_lit(b, "\",\"parent\":\"");
    if (rc == OK && parent != Py_None) {
        rc = put(b, parent_s, parent_n);
        if (rc == OK)
            rc = put_lit(b, "\"");
    }
    if (rc == OK)
        rc = put_lit(b, ",\"ts\":\"");
    if (rc == OK)
        rc = put(b, ts_s, ts_n);
    if (rc == OK)
        rc = put_lit(b, "\",\"type\":\"");
    if (rc == OK)
        rc = put(b, type_s, type_n);
    if (rc == OK)
        rc = put_lit(b, "\"}");
    if (rc != OK)
        return rc;
    sha256_id((const uint8_t *)b->data, (size_t)b->len, id);
    b = out;
    rc = put_lit(b, "{\"type\":\"");
    if (rc == OK)
        rc = put(b, type_s, type_n);
    if (rc == OK)
        rc = put_lit(b, "\",\"id\":\"");
    if (rc == OK)
        rc = put(b, id, 71);
    if (rc == OK)
        rc = parent == Py_None ? put_lit(b, "\",\"parent\":null") : put_lit(b, "\",\"parent\":\"");
    if (rc == OK && parent != Py_None) {
        rc = put(b, parent_s, parent_n);
        if (rc == OK)
            rc = put_lit(b, "\"");
    }
    if (rc == OK)
        rc = put_lit(b, ",\"ts\":\"");
    if (rc == OK)
        rc = put(b, ts_s, ts_n);
    if (rc == OK)
        rc = put_lit(b, "\"");
    if (rc == OK)
        rc = put_body(b, data, n);
    return rc;
}

static PyObject *
id_and_line(int rc, const char id[71])
{
    Buffer *b = &shared_buf;
    if (rc != OK) {
        b->len = 0;
        return rc == UNHANDLED ? Py_NewRef(Py_None) : NULL;
    }
    PyObject *line = take_bytes(b, rc);
    if (line == NULL)
        return NULL;
    PyObject *entry_id = PyUnicode_FromStringAndSize(id, 71);
    if (entry_id == NULL) {
        Py_DECREF(line);
        return NULL;
    }
    PyObject *out = PyTuple_Pack(2, entry_id, line);
    Py_DECREF(entry_id);
    Py_DECREF(line);
    return out;
}

/* entry(type, parent, ts, body) -> (id, line) | None: the entry's id from its body (the
 * canonical bytes of an object) and envelope, and its line. None when a member is not
 * the writer's plain text or the body no object. */
static PyObject *
entry(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "entry() takes 4 arguments");
        return NULL;
    }
    if (!PyBytes_CheckExact(args[3]))
        Py_RETURN_NONE;
    const char *data = PyBytes_AS_STRING(args[3]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[3]);
    char content[71], id[71];
    sha256_id((const uint8_t *)data, (size_t)n, content);
    shared_buf.len = 0;
    return id_and_line(envelope(&shared_buf, content, args[0], args[1], args[2], data, n, id), id);
}

/* stitched(type, parent, ts, content, body) -> (id, line) | None: ``entry`` for a body
 * whose hash (``content``, 64 hex digits) is already known. */
static PyObject *
stitched(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "stitched() takes 5 arguments");
        return NULL;
    }
    Py_ssize_t hex_n;
    const char *hex = plain_text(args[3], &hex_n);
    if (hex == NULL || hex_n != 64 || !PyBytes_CheckExact(args[4]))
        Py_RETURN_NONE;
    char content[71], id[71];
    memcpy(content, "sha256:", 7);
    memcpy(content + 7, hex, 64);
    const char *data = PyBytes_AS_STRING(args[4]);
    shared_buf.len = 0;
    return id_and_line(envelope(&shared_buf, content, args[0], args[1], args[2], data, PyBytes_GET_SIZE(args[4]), id), id);
}

/* The record kind of a worker record: its first item, a one-letter str. */
static int
record_kind(PyObject *record)
{
    if (!PyTuple_CheckExact(record) || PyTuple_GET_SIZE(record) < 1)
        return 0;
    PyObject *kind = PyTuple_GET_ITEM(record, 0);
    if (!PyUnicode_CheckExact(kind) || PyUnicode_GET_LENGTH(kind) != 1)
        return 0;
    return (int)PyUnicode_READ_CHAR(kind, 0);
}

/* checks.Ancestry.add for a node whose parent is known (or None): nodes[node] = (parent,
 * depth, jump), jump pointers on the skew-binary scheme. 1 done, 0 left to Python (a
 * parent not in nodes), -1 error. */
static int
ancestry_add(PyObject *nodes, PyObject *node, PyObject *parent)
{
    PyObject *value;
    if (parent == Py_None) {
        PyObject *zero = PyLong_FromLong(0);
        if (zero == NULL)
            return -1;
        value = PyTuple_Pack(3, parent, zero, node);
        Py_DECREF(zero);
    }
    else {
        PyObject *p = PyDict_GetItemWithError(nodes, parent);
        if (p == NULL)
            return PyErr_Occurred() ? -1 : 0;
        PyObject *jump = PyTuple_GET_ITEM(p, 2);
        PyObject *j = PyDict_GetItemWithError(nodes, jump);
        if (j == NULL)
            return PyErr_Occurred() ? -1 : 0;
        PyObject *jj = PyTuple_GET_ITEM(j, 2);
        PyObject *jjn = PyDict_GetItemWithError(nodes, jj);
        if (jjn == NULL)
            return PyErr_Occurred() ? -1 : 0;
        long long depth = PyLong_AsLongLong(PyTuple_GET_ITEM(p, 1));
        long long j_depth = PyLong_AsLongLong(PyTuple_GET_ITEM(j, 1));
        long long jj_depth = PyLong_AsLongLong(PyTuple_GET_ITEM(jjn, 1));
        if (PyErr_Occurred())
            return -1;
        PyObject *new_depth = PyLong_FromLongLong(depth + 1);
        if (new_depth == NULL)
            return -1;
        value = PyTuple_Pack(3, parent, new_depth, depth - j_depth == j_depth - jj_depth ? jj : parent);
        Py_DECREF(new_depth);
    }
    if (value == NULL)
        return -1;
    int rc = PyDict_SetItem(nodes, node, value);
    Py_DECREF(value);
    return rc < 0 ? -1 : 1;
}

/* link(nodes, id, parent) -> bool: checks.Ancestry.add for an entry whose id is new and
 * whose parent (or None) is known, which is every entry the writer makes; False, and
 * nothing added, otherwise (the checker words the problem, Ancestry.add keeps an orphan). */
static PyObject *
ancestry_link(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyDict_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "link(nodes: dict, id, parent)");
        return NULL;
    }
    int seen = PyDict_Contains(args[0], args[1]);
    if (seen < 0)
        return NULL;
    if (seen)
        Py_RETURN_FALSE;
    int added = ancestry_add(args[0], args[1], args[2]);
    if (added < 0)
        return NULL;
    return PyBool_FromLong(added);
}

/* The tables a "p" record fills in (see stitch_run). */
typedef struct {
    PyObject *asf_ids, *item_ids, *editable, *call_ids, *call_map, *checker_call_ids;
} Tables;

static PyObject *
id_at(PyObject *ids, PyObject *number)
{
    Py_ssize_t at = PyLong_CheckExact(number) ? PyLong_AsSsize_t(number) : -1;
    if (at < 0 || at >= PyList_GET_SIZE(ids)) {
        PyErr_Clear();
        return NULL;
    }
    return PyList_GET_ITEM(ids, at);
}

/* A "p" record (pi id, first, last, items, editable, calls): what the one-process writer
 * keeps of a pi entry it wrote. 1 done, 0 left to Python, -1 error. */
static int
pi_entry(PyObject *record, PyObject *ids, Tables *t)
{
    if (PyTuple_GET_SIZE(record) != 7)
        return 0;
    PyObject *pi_id = PyTuple_GET_ITEM(record, 1), *items = PyTuple_GET_ITEM(record, 4);
    PyObject *editable = PyTuple_GET_ITEM(record, 5), *calls = PyTuple_GET_ITEM(record, 6);
    PyObject *first = id_at(ids, PyTuple_GET_ITEM(record, 2)), *last = id_at(ids, PyTuple_GET_ITEM(record, 3));
    if (first == NULL || last == NULL || !(items == Py_None || PyList_CheckExact(items))
        || !(calls == Py_None || PyTuple_CheckExact(calls)) || !PyBool_Check(editable))
        return 0;
    int seen = PyDict_Contains(t->asf_ids, pi_id); /* an id used again: Python words it */
    if (seen != 0)
        return seen < 0 ? -1 : 0;
    if (items != Py_None) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++)
            if (id_at(ids, PyList_GET_ITEM(items, i)) == NULL)
                return 0;
    }
    if (calls != Py_None) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(calls); i++) {
            PyObject *pair = PyTuple_GET_ITEM(calls, i);
            if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2)
                return 0;
        }
    }
    PyObject *pair = PyTuple_Pack(2, first, last);
    if (pair == NULL)
        return -1;
    int rc = PyDict_SetItem(t->asf_ids, pi_id, pair);
    Py_DECREF(pair);
    if (rc < 0)
        return -1;
    if (items != Py_None && PyList_GET_SIZE(items)) {
        PyObject *list = PyList_New(PyList_GET_SIZE(items));
        if (list == NULL)
            return -1;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++)
            PyList_SET_ITEM(list, i, Py_NewRef(id_at(ids, PyList_GET_ITEM(items, i))));
        rc = PyDict_SetItem(t->item_ids, pi_id, list);
        Py_DECREF(list);
        if (rc < 0)
            return -1;
    }
    if (editable == Py_True && PySet_Add(t->editable, pi_id) < 0)
        return -1;
    if (calls != Py_None) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(calls); i++) {
            PyObject *native = PyTuple_GET_ITEM(PyTuple_GET_ITEM(calls, i), 0);
            PyObject *candidate = PyTuple_GET_ITEM(PyTuple_GET_ITEM(calls, i), 1);
            if (PySet_Add(t->call_ids, candidate) < 0)
                return -1;
            if (t->checker_call_ids != Py_None && PySet_Add(t->checker_call_ids, candidate) < 0)
                return -1;
            if (native != Py_None && PyDict_SetItem(t->call_map, native, candidate) < 0)
                return -1;
        }
    }
    return 1;
}

/* stitch_run(records, index, blob, offset, ids, nodes, check, asf_ids, item_ids, editable,
 *            call_ids, call_map, checker_call_ids, reports) -> (index, offset, lines, count)
 *
 * The main process's stitch (parallel.py) of the worker's records from records[index] on.
 * An "e" record is an entry: its body is the next ``size`` bytes of ``blob`` from
 * ``offset``, its parent an index into ``ids``, a pi id of ``asf_ids`` (its last ASF id)
 * or None; its id is computed, appended to ``ids`` and added to ``nodes`` (the writer's
 * ancestry); its line added to ``lines``. A "p" record fills in the writer's tables for
 * the pi entry just written; an "r" record (a report addition) is appended to
 * ``reports`` for the caller to add before anything else. Stops at the first record left
 * to Python: another kind, a body member named like an envelope member, a parent not
 * resolved, not in ``nodes`` or not plain text, with ``check`` an id already in
 * ``nodes``, a pi id already in ``asf_ids``, or anything not of the shape it expects. */
static PyObject *
stitch_run(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 14) {
        PyErr_SetString(PyExc_TypeError, "stitch_run() takes 14 arguments");
        return NULL;
    }
    PyObject *records = args[0], *blob = args[2], *ids = args[4], *nodes = args[5], *reports = args[13];
    Tables tables = {args[7], args[8], args[9], args[10], args[11], args[12]};
    PyObject *asf_ids = tables.asf_ids;
    Py_ssize_t index = PyLong_AsSsize_t(args[1]);
    Py_ssize_t offset = PyLong_AsSsize_t(args[3]);
    int check = PyObject_IsTrue(args[6]);
    if ((index == -1 || offset == -1 || check < 0) && PyErr_Occurred())
        return NULL;
    if (!PyList_CheckExact(records) || !PyBytes_CheckExact(blob) || !PyList_CheckExact(ids)
        || !PyDict_CheckExact(asf_ids) || !PyDict_CheckExact(nodes) || !PyDict_CheckExact(tables.item_ids)
        || !PySet_Check(tables.editable) || !PySet_Check(tables.call_ids) || !PyDict_CheckExact(tables.call_map)
        || !(tables.checker_call_ids == Py_None || PySet_Check(tables.checker_call_ids)) || !PyList_CheckExact(reports)) {
        PyErr_SetString(PyExc_TypeError, "stitch_run(): arguments of other types");
        return NULL;
    }
    const char *blob_data = PyBytes_AS_STRING(blob);
    Py_ssize_t blob_n = PyBytes_GET_SIZE(blob);
    Buffer *out = &shared_buf;
    out->len = 0;
    Py_ssize_t count = 0;
    for (; index < PyList_GET_SIZE(records); index++) {
        PyObject *record = PyList_GET_ITEM(records, index);
        int kind = record_kind(record);
        if (kind == 'p') {
            int done = pi_entry(record, ids, &tables);
            if (done < 0)
                goto error;
            if (done == 0)
                break;
            continue;
        }
        if (kind == 'r') {
            if (PyList_Append(reports, record) < 0)
                goto error;
            continue;
        }
        if (kind != 'e' || PyTuple_GET_SIZE(record) != 7)
            break;
        PyObject *type = PyTuple_GET_ITEM(record, 1), *parent = PyTuple_GET_ITEM(record, 2);
        PyObject *ts = PyTuple_GET_ITEM(record, 3), *digest = PyTuple_GET_ITEM(record, 4);
        PyObject *body = PyTuple_GET_ITEM(record, 6);
        if (!PyDict_CheckExact(body) || PyDict_GET_SIZE(body) != 0)
            break;
        Py_ssize_t size = PyLong_AsSsize_t(PyTuple_GET_ITEM(record, 5));
        if (size == -1 && PyErr_Occurred())
            goto error;
        if (size < 0 || offset + size > blob_n)
            break;
        if (PyLong_CheckExact(parent)) {
            Py_ssize_t at = PyLong_AsSsize_t(parent);
            if (at == -1 && PyErr_Occurred())
                goto error;
            if (at < 0 || at >= PyList_GET_SIZE(ids))
                break;
            parent = PyList_GET_ITEM(ids, at);
        }
        else if (parent != Py_None) {
            PyObject *pair = PyDict_GetItemWithError(asf_ids, parent);
            if (pair == NULL) {
                if (PyErr_Occurred())
                    goto error;
                break;
            }
            if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2)
                break;
            parent = PyTuple_GET_ITEM(pair, 1);
        }
        if (parent != Py_None) {
            int known = PyDict_Contains(nodes, parent);
            if (known < 0)
                goto error;
            if (!known)
                break;
        }
        Py_ssize_t hex_n;
        const char *hex = plain_text(digest, &hex_n);
        if (hex == NULL || hex_n != 64)
            break;
        char content[71], id[71];
        memcpy(content, "sha256:", 7);
        memcpy(content + 7, hex, 64);
        Py_ssize_t mark = out->len;
        int rc = envelope(out, content, type, parent, ts, blob_data + offset, size, id);
        if (rc == FAILED)
            goto error;
        if (rc != OK) {
            out->len = mark;
            break;
        }
        PyObject *entry_id = PyUnicode_FromStringAndSize(id, 71);
        if (entry_id == NULL)
            goto error;
        int seen = check ? PyDict_Contains(nodes, entry_id) : 0;
        if (seen != 0) {
            Py_DECREF(entry_id);
            if (seen < 0)
                goto error;
            out->len = mark;
            break;
        }
        int added = ancestry_add(nodes, entry_id, parent);
        if (added <= 0 || PyList_Append(ids, entry_id) < 0) {
            Py_DECREF(entry_id);
            if (added == 0) { /* not reached: the parent was checked above */
                out->len = mark;
                break;
            }
            goto error;
        }
        Py_DECREF(entry_id);
        offset += size;
        count++;
    }
    PyObject *lines = take_bytes(out, OK);
    if (lines == NULL)
        return NULL;
    return Py_BuildValue("(nnNn)", index, offset, lines, count);
error:
    out->len = 0;
    return NULL;
}

/* ------------------------------------------------------------------ timestamps */

static int
digits(const Py_UCS1 *s, int from, int n, int *value)
{
    int v = 0;
    for (int i = from; i < from + n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *value = v;
    return 1;
}

/* js_timestamp(text) -> str | None: the RFC 0001 spelling of a timestamp in JavaScript's
 * toISOString() form (YYYY-MM-DDTHH:MM:SS.mmmZ, what pi writes) naming a real day and
 * time: the fraction without trailing zeros. None for anything else, which ids.py's
 * general path reads. */
static PyObject *
js_timestamp(PyObject *Py_UNUSED(module), PyObject *text)
{
    static const int month_days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (!PyUnicode_CheckExact(text) || !PyUnicode_IS_ASCII(text) || PyUnicode_GET_LENGTH(text) != 24)
        Py_RETURN_NONE;
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(text);
    int year, month, day, hour, minute, second, milli;
    if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z'
        || !digits(s, 0, 4, &year) || !digits(s, 5, 2, &month) || !digits(s, 8, 2, &day) || !digits(s, 11, 2, &hour)
        || !digits(s, 14, 2, &minute) || !digits(s, 17, 2, &second) || !digits(s, 20, 3, &milli))
        Py_RETURN_NONE;
    if (hour > 23 || minute > 59 || second > 59 || year < 1 || month < 1 || month > 12 || day < 1)
        Py_RETURN_NONE;
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > month_days[month - 1] + (month == 2 && leap))
        Py_RETURN_NONE;
    if (s[22] != '0')
        return Py_NewRef(text); /* already canonical */
    char out[24];
    memcpy(out, s, 20);
    int n = s[21] != '0' ? 22 : s[20] != '0' ? 21 : 19;
    if (n > 19)
        memcpy(out + 20, s + 20, (size_t)(n - 20));
    out[n] = 'Z';
    return PyUnicode_FromStringAndSize(out, n + 1);
}

/* sha256_hex(data) -> str: the 64 lowercase hex digits of the SHA-256 of bytes. */
static PyObject *
sha256_hex(PyObject *Py_UNUSED(module), PyObject *data)
{
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    char id[71];
    sha256_id((const uint8_t *)view.buf, (size_t)view.len, id);
    PyBuffer_Release(&view);
    return PyUnicode_FromStringAndSize(id + 7, 64);
}

/* sha256_rounds() -> str: the rounds in use, "sha-ni" or "portable". */
static PyObject *
sha256_rounds(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
    return PyUnicode_FromString(sha256_blocks == sha256_blocks_portable ? "portable" : "sha-ni");
}

/* use_portable_sha256(flag) -> str: the portable rounds (flag true) or the fastest this
 * CPU has; the name of the rounds now in use. For the tests, which hold both to hashlib. */
static PyObject *
use_portable_sha256(PyObject *Py_UNUSED(module), PyObject *flag)
{
    int portable = PyObject_IsTrue(flag);
    if (portable < 0)
        return NULL;
    sha256_init(portable);
    return sha256_rounds(NULL, NULL);
}

static PyMethodDef methods[] = {
    {"canonical", canonical, METH_O,
     "canonical(value) -> bytes | None\n\n"
     "The RFC 8785 bytes of value, or None where the Python serialiser must decide."},
    {"entry_line", (PyCFunction)(void (*)(void))entry_line, METH_FASTCALL,
     "entry_line(type, id, parent, ts, body) -> bytes | None\n\n"
     "An ASF entry line: the envelope members, then those of the canonical object body."},
    {"entry", (PyCFunction)(void (*)(void))entry, METH_FASTCALL,
     "entry(type, parent, ts, body) -> (id, line) | None\n\n"
     "An entry's content-addressed id and its line, from the canonical bytes of its body."},
    {"stitched", (PyCFunction)(void (*)(void))stitched, METH_FASTCALL,
     "stitched(type, parent, ts, content, body) -> (id, line) | None\n\n"
     "entry() for a body whose SHA-256 (64 hex digits) is known."},
    {"link", (PyCFunction)(void (*)(void))ancestry_link, METH_FASTCALL,
     "link(nodes, id, parent) -> bool\n\nAncestry.add for a new id under a known parent (or None); False otherwise."},
    {"stitch_run", (PyCFunction)(void (*)(void))stitch_run, METH_FASTCALL,
     "stitch_run(records, index, blob, offset, ids, nodes, check, asf_ids, item_ids, editable, call_ids, call_map, "
     "checker_call_ids, reports) -> (index, offset, lines, count)\n\n"
     "The worker's entry records stitched in, as far as one left to Python (see parallel.py)."},
    {"js_timestamp", js_timestamp, METH_O,
     "js_timestamp(text) -> str | None\n\nThe RFC 0001 spelling of a toISOString() timestamp, or None."},
    {"sha256_hex", sha256_hex, METH_O, "sha256_hex(data) -> str\n\nThe SHA-256 of data, in hex."},
    {"sha256_rounds", sha256_rounds, METH_NOARGS, "sha256_rounds() -> str\n\nThe SHA-256 rounds in use: \"sha-ni\" or \"portable\"."},
    {"use_portable_sha256", use_portable_sha256, METH_O,
     "use_portable_sha256(flag) -> str\n\nThe portable rounds (true) or the fastest; the name of those in use."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_jcs", "RFC 8785 canonical JSON in C (see converters/asf/jcs.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__jcs(void)
{
    init_escapes();
    sha256_init(0);
    return PyModule_Create(&module_def);
}
