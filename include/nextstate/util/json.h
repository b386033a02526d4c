/* json.h — a small JSON reader (DOM) and writing helpers, for manifests,
 * vocabularies and result files.  Numbers are kept as double and as the
 * exact integer when they are integral and fit in int64. */
#ifndef NEXTSTATE_JSON_H
#define NEXTSTATE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"

typedef enum ns_json_kind {
    NS_JSON_NULL,
    NS_JSON_BOOL,
    NS_JSON_NUMBER,
    NS_JSON_STRING,
    NS_JSON_ARRAY,
    NS_JSON_OBJECT
} ns_json_kind;

typedef struct ns_json {
    ns_json_kind kind;
    bool boolean;
    double number;
    int64_t integer;      /* valid when is_integer */
    bool is_integer;
    char *string;         /* NUL-terminated UTF-8 (decoded escapes) */
    size_t string_len;
    struct ns_json *items; /* array elements or object values */
    char **keys;           /* object keys (same order as in the text) */
    int n;                 /* number of items */
    int line, col;         /* position in the source text */
} ns_json;

/* Parses text (must hold exactly one JSON value; RFC 8259, a leading UTF-8
 * BOM is skipped).  Errors are NS_ERR_INPUT with path:line:col (columns
 * count bytes): trailing characters, unterminated strings, bad escapes,
 * unescaped control characters, ill-formed UTF-8 or unpaired \u surrogates
 * in strings, malformed numbers, missing ',' or ':', empty input, nesting
 * deeper than 512.  Numbers beyond the double range read as ±inf or 0.
 * On failure *out is left empty (safe to ns_json_free). */
ns_status ns_json_parse(ns_json *out, const char *text, size_t len, const char *path, ns_error *err);
/* Reads and parses the file at path (NS_ERR_IO when it cannot be read). */
ns_status ns_json_read(ns_json *out, const char *path, ns_error *err);
/* Sealed metadata files: an object whose last member is "crc32", the
 * CRC-32 (8 lower-case hex digits) of every byte before the comma that
 * precedes it.  ns_json_seal turns the object text in b (ending in '}')
 * into its sealed form.  ns_json_read_sealed reads and parses a file,
 * sets *sealed when it ends in a seal, and refuses a seal that does not
 * match (NS_ERR_INPUT naming the file): the caller decides whether an
 * unsealed file (an older version) is acceptable.  In Python:
 *   body = text[:text.rindex(',', 0, text.rindex('"crc32"'))]
 *   zlib.crc32(body.encode()) */
void ns_json_seal(ns_buf *b);
ns_status ns_json_read_sealed(ns_json *out, const char *path, bool *sealed, ns_error *err);
/* The "version" of a sealed metadata file m: `current` (sealed, required)
 * or current − 1 (written before seals: accepted unsealed). */
ns_status ns_json_check_version(const ns_json *m, const char *path, bool sealed, int64_t current, const char *what,
                                ns_error *err);
/* Frees a tree made by ns_json_parse/ns_json_read and empties *j. */
void ns_json_free(ns_json *j);

/* Member of an object by key (first match), or NULL. */
const ns_json *ns_json_get(const ns_json *obj, const char *key);
/* Typed getters: return false when the member is absent or of another kind. */
bool ns_json_get_int(const ns_json *obj, const char *key, int64_t *out);
bool ns_json_get_str(const ns_json *obj, const char *key, const char **out);

/* Writing: appends s as a JSON string literal (escaped). */
void ns_json_put_str(ns_buf *b, const char *s);
/* The same for n bytes of s (which may hold NULs, written as \u0000). */
void ns_json_put_strn(ns_buf *b, const char *s, size_t n);
/* Appends a double in the shortest form that reads back exactly; NaN and
 * infinities as null. */
void ns_json_put_num(ns_buf *b, double v);

#endif
