/* util.h — small shared helpers: checked allocation, growable byte buffer,
 * hashing, timing, whole-file reading and atomic writes. */
#ifndef NEXTSTATE_UTIL_H
#define NEXTSTATE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "nextstate/util/error.h"

/* Allocation that aborts the process with a message when memory is exhausted.
 * Used for bookkeeping structures; searches account their big tables against
 * --memory-limit themselves. */
void *ns_xmalloc(size_t n);
void *ns_xcalloc(size_t n, size_t size);
void *ns_xrealloc(void *p, size_t n);
char *ns_xstrdup(const char *s);
/* n bytes at a 64-byte boundary (a cache line; freed by free): buffers whose
 * rows the tile products write whole lines of (tilegemm.h). */
void *ns_xaligned(size_t n);

/* qsort comparators: C strings (an array of char pointers), int, int64_t;
 * ns_named: by name (strcmp), then by id. */
typedef struct ns_named {
    const char *name;
    int id;
} ns_named;
int ns_cmp_named(const void *a, const void *b);
int ns_cmp_str(const void *a, const void *b);
int ns_cmp_int(const void *a, const void *b);
int ns_cmp_i64(const void *a, const void *b);
/* Sorts a[0..n) ascending (insertion sort for short arrays, else qsort). */
void ns_sort_int(int *a, int n);

/* Growable array: grows *arr (of element size sz) so that it holds at least
 * need elements; *cap is updated. */
void ns_grow(void **arr, size_t *cap, size_t need, size_t sz);
#define NS_GROW(arr, cap, need) ns_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Growable NUL-terminated byte buffer. */
typedef struct ns_buf {
    char *data;
    size_t len, cap;
} ns_buf;
void ns_buf_init(ns_buf *b);
void ns_buf_free(ns_buf *b);
void ns_buf_putc(ns_buf *b, char c);
void ns_buf_puts(ns_buf *b, const char *s);
void ns_buf_put(ns_buf *b, const void *p, size_t n);
/* Appends the low `bytes` (1..8) bytes of v, little-endian. */
void ns_buf_put_le(ns_buf *b, uint64_t v, int bytes);
/* The little-endian unsigned integer of `bytes` (1..8) bytes at p. */
uint64_t ns_get_le(const unsigned char *p, int bytes);
void ns_buf_printf(ns_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 64-bit hash of a byte range (seedable, stable across runs and machines). */
uint64_t ns_hash_bytes(const void *p, size_t n, uint64_t seed);
static inline uint64_t ns_hash_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* Seeded pseudo-random generator (splitmix64 seeding a xoshiro256**). */
typedef struct ns_rng {
    uint64_t s[4];
} ns_rng;
void ns_rng_seed(ns_rng *r, uint64_t seed);
uint64_t ns_rng_next(ns_rng *r);
/* Uniform integer in [0, n) without modulo bias; n > 0. */
uint64_t ns_rng_below(ns_rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double ns_rng_double(ns_rng *r);
/* Fisher–Yates shuffle of n ints. */
void ns_rng_shuffle_int(ns_rng *r, int *a, size_t n);

/* Monotonic wall-clock seconds. */
double ns_now(void);
/* CPU seconds used by this process (time limits count these, as Fast
 * Downward's do, so a busy machine does not cut a run short). */
double ns_cpu_now(void);
/* The same plus the CPU seconds of its children that have ended and been
 * waited for (ns_forkmap's): what a run cost, not a time limit's clock. */
double ns_cpu_with_children(void);

/* Reads a whole file into a NUL-terminated malloc'ed buffer. */
ns_status ns_read_file(const char *path, char **out, size_t *len, ns_error *err);
/* A file's bytes, mapped read-only (mmap, pages read ahead) or, where the
 * file cannot be mapped (a pipe, an empty file), read into memory; either
 * way data[0..len) stays valid until ns_filemap_free.  Loaders that use a
 * file's arrays in place own one. */
typedef struct ns_filemap {
    void *data;
    size_t len;
    bool mapped; /* data is a mapping (munmap), else malloc'ed */
} ns_filemap;
ns_status ns_filemap_open(ns_filemap *m, const char *path, ns_error *err);
void ns_filemap_free(ns_filemap *m);
/* Reads a text file: a NUL byte is an input error located at its line:col,
 * and a leading UTF-8 byte-order mark is dropped. */
ns_status ns_read_text_file(const char *path, char **out, size_t *len, ns_error *err);
/* Length of the longest prefix of s[0..n) that is well-formed UTF-8. */
size_t ns_utf8_valid_prefix(const char *s, size_t n);
/* Writes data to path atomically (temp file in the same folder + rename). */
ns_status ns_write_file_atomic(const char *path, const void *data, size_t len,
                               ns_error *err);

/* String -> int map (keys are borrowed, not copied; they must outlive it). */
typedef struct ns_strmap {
    const char **keys;
    int *vals;
    size_t n, mask; /* capacity = mask + 1, a power of two */
} ns_strmap;
void ns_strmap_init(ns_strmap *m);
void ns_strmap_free(ns_strmap *m);
/* Sets key -> val (replacing); returns the previous value or -1. */
int ns_strmap_put(ns_strmap *m, const char *key, int val);
/* Value of key, or -1 when absent. */
int ns_strmap_get(const ns_strmap *m, const char *key);

/* Set of int tuples with dense ids 0, 1, … in insertion order. */
typedef struct ns_tupleset {
    int *pool;      /* tuple i: pool[off[i]] = length, then its ints */
    size_t pool_len, pool_cap;
    size_t *off;
    int n;
    size_t off_cap;
    uint64_t *table; /* (hash's high 32 bits << 32) | id; all ones when empty */
    size_t mask;
} ns_tupleset;
void ns_tupleset_init(ns_tupleset *s);
void ns_tupleset_free(ns_tupleset *s);
/* Inserts t[0..len) unless present; returns its id. */
int ns_tupleset_insert(ns_tupleset *s, const int *t, int len, bool *is_new);
/* Id of t, or -1. */
int ns_tupleset_find(const ns_tupleset *s, const int *t, int len);
/* The tuple with id i; *len receives its length. */
static inline const int *ns_tupleset_get(const ns_tupleset *s, int i, int *len)
{
    *len = s->pool[s->off[i]];
    return s->pool + s->off[i] + 1;
}

/* A progress line on stderr, shown only when stderr is a terminal and the
 * caller wants it; redrawn at most ten times a second. */
typedef struct ns_progress {
    bool on;
    double last, start;
    const char *label;
} ns_progress;
void ns_progress_init(ns_progress *p, bool want, const char *label);
void ns_progress_update(ns_progress *p, long done, long total, const char *what);
void ns_progress_done(ns_progress *p);

/* Creates a directory and its parents (like mkdir -p). */
ns_status ns_mkdir_p(const char *path, ns_error *err);
/* Folder outputs replaced as a unit: ns_dir_stage makes an empty folder
 * DIR.tmp.XXXXXX beside dir (*tmp, malloc'ed); write into it, then
 * ns_dir_commit swaps the new one in for a previous dir in one step
 * (renameat2 RENAME_EXCHANGE) and removes the old one, or ns_dir_discard
 * drops it.  Both take ownership of tmp.  A failure or a kill at any point
 * leaves dir the previous folder or the new one, whole.  (Where the file
 * system cannot exchange, the previous dir is moved aside to
 * DIR.old.XXXXXX first: killed between the two renames, it is whole there.) */
ns_status ns_dir_stage(const char *dir, char **tmp, ns_error *err);
ns_status ns_dir_commit(const char *dir, char *tmp, ns_error *err);
void ns_dir_discard(char *tmp);
/* rm -rf path (no error: best effort). */
void ns_remove_tree(const char *path);

/* Case-insensitive string equality (ASCII). */
bool ns_streq_ci(const char *a, const char *b);

/* Do two paths name the same file or directory (equal strings, or the same
 * device and inode)? */
bool ns_same_path(const char *x, const char *y);

#endif
