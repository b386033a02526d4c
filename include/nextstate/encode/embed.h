/* embed.h — text embeddings as a table (text → vector): the cache of
 * `nextstate embed` and the import format for embeddings computed by any
 * other tool, which the encoders use as a text encoder E without code
 * changes (look the rendered prompt or action text up, get its row).
 *
 * ON DISK (a directory):
 *
 *   embeddings.npy   float32 [N, D]   row i = the embedding of text i
 *   index.jsonl      text → row, one line per text, either a JSON string
 *                    (its row is the line number, counting from 0) or an
 *                    object {"text": "...", "row": i}; UTF-8, exact bytes
 *                    (no normalisation: the text must be byte-identical to
 *                    the rendering that will be looked up)
 *   keys.npy         uint64 [N]       instead of index.jsonl: the key of row
 *                    i's text (written by nextstate; see ns_embed_key)
 *   manifest.json    optional: {"format": "nextstate-embeddings", "version": 1,
 *                    "model": NAME, "fingerprint": "16 hex digits", "dim": D,
 *                    "count": N, "normalized": bool, "crc32": {file: crc}}
 *
 * index.jsonl wins when both index files exist.  Making one in Python:
 *
 *   np.save("E/embeddings.npy", X.astype(np.float32))
 *   with open("E/index.jsonl", "w") as f:
 *       for t in texts: f.write(json.dumps(t) + "\n")
 *
 * A text's key is ns_hash_bytes(text, len, NS_EMBED_KEY_SEED); lookups go by
 * key (a 64-bit collision between two texts of one table is vanishingly
 * unlikely and not detected).  When a text appears twice, its first row wins.
 * Caches written by nextstate carry the model's fingerprint: embedding into a
 * cache made by another model is an error, never a silent mix. */
#ifndef NEXTSTATE_EMBED_H
#define NEXTSTATE_EMBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nextstate/encode/bert.h"
#include "nextstate/data/dataset.h"
#include "nextstate/data/render.h"
#include "nextstate/encode/features.h"
#include "nextstate/util/error.h"

#define NS_EMBED_FORMAT "nextstate-embeddings"
#define NS_EMBED_VERSION 1
#define NS_EMBED_KEY_SEED 0x656d626564ULL /* "embed" */
#define NS_EMBED_CHUNKS_SALT 0x6368756e6b73ULL /* "chunks": fingerprint of a chunking encoder = model's ^ salt */

typedef struct ns_embed_table {
    int dim;
    int64_t n, cap;    /* rows used / allocated */
    float *rows;       /* [n, dim] */
    uint64_t *keys;    /* [n]: the key of each row's (first) text */
    int64_t *slot;     /* hash of key → row (-1 empty) */
    uint64_t *slot_key;
    size_t mask, nkeys; /* nkeys: keys in the hash (aliases included) */
    char model[128];   /* "" when unknown (imported) */
    uint64_t fingerprint; /* 0 when unknown */
    bool normalized;
} ns_embed_table;

/* Key of a text. */
uint64_t ns_embed_key(const char *text, size_t len);

/* An empty table of dim-dimensional rows. */
void ns_embed_table_init(ns_embed_table *t, int dim);
void ns_embed_table_free(ns_embed_table *t);

/* Row of the text with this key, or -1. */
int64_t ns_embed_find_key(const ns_embed_table *t, uint64_t key);
/* The embedding of text[0..len), or NULL when the table lacks it. */
const float *ns_embed_get(const ns_embed_table *t, const char *text, size_t len);
/* Appends a row for key (or overwrites the row the key already has);
 * returns its row. */
int64_t ns_embed_put(ns_embed_table *t, uint64_t key, const float *vec);

/* Reads a directory in the format above.  Errors (naming the file):
 * NS_ERR_IO when embeddings.npy is missing or unreadable; NS_ERR_INPUT when
 * it is not a float32 [N, D] array, when there is neither index.jsonl nor
 * keys.npy, for a malformed index line (path:line), a row outside 0..N-1,
 * keys.npy of the wrong length, a manifest that disagrees with the arrays
 * (count, dim, CRC-32: a cache torn by an interrupted write). */
ns_status ns_embed_table_load(ns_embed_table *t, const char *dir, ns_error *err);
/* Writes embeddings.npy, keys.npy and manifest.json into a folder beside
 * dir and swaps it in whole (ns_dir_stage/ns_dir_commit): a kill at any
 * point leaves the previous cache loading, and files of an older cache
 * (an imported index.jsonl) do not outlive it. */
ns_status ns_embed_table_save(const ns_embed_table *t, const char *dir, ns_error *err);

typedef struct ns_embed_opts {
    int batch;     /* texts per forward pass (≤ 0: 32) */
    bool progress; /* progress line on stderr (when it is a terminal) */
    bool chunks;   /* ns_bert_encode_chunks instead of truncation: a distinct encoder, so its
                      table carries the model's name + "+chunks" and a fingerprint of its own */
    const char *save_dir; /* when set, the growing table is saved there (ns_embed_table_save) every
                             save_seconds of wall time, so a run killed midway resumes from it */
    double save_seconds;  /* ≤ 0: 600 */
} ns_embed_opts;

/* Makes sure t holds every text of texts[0..n) (lengths lens, or NULL for
 * NUL-terminated strings): the missing ones (each distinct text once) are
 * encoded with m and added.  *computed (optional) receives how many were
 * encoded.  An empty table takes on the model's name and fingerprint; a
 * table made by another model (fingerprint or dimension) is NS_ERR_INPUT, and
 * so is adding to a non-empty table without a fingerprint (an import: its
 * texts can be looked up, but another model's rows are never mixed in). */
ns_status ns_embed_texts(const ns_bert *m, ns_embed_table *t, int64_t n, const char *const *texts,
                         const size_t *lens, const ns_embed_opts *o, int64_t *computed, ns_error *err);

/* How many of texts[0..n) are longer than m's window (more than
 * max_seq_length − 2 word pieces, CLS and SEP aside): the texts that
 * truncation would cut.  `nextstate embed` chunks when this is not 0
 * (unless told to truncate) and says how many. */
int64_t ns_embed_count_over_window(const ns_bert *m, int64_t n, const char *const *texts, const size_t *lens);

/* How a model's truncation treats a dataset's state prompts (`nextstate
 * embed stats`): word pieces per prompt (CLS and SEP included) against
 * max_seq_length, where the CURRENT STATE block starts, how much of it
 * survives truncation, and how many states become indistinguishable (their
 * truncated model input equals another state's of the same problem).
 * Fractions are over the dataset's states. */
typedef struct ns_prompt_stats {
    int max_seq_length;
    int64_t prompts;
    int min, median, p90, max;                    /* word pieces per prompt */
    int state_start_median, state_tokens_median; /* the CURRENT STATE block */
    double over_max, state_cut, state_lost, state_kept_mean, merged;
} ns_prompt_stats;
/* preps: ns_feat_renders_new of ds.  NS_ERR_INPUT for a prompt without a
 * CURRENT STATE block followed by another block. */
ns_status ns_embed_prompt_stats(const ns_bert *m, const ns_dataset *ds, ns_render_prep *const *preps,
                                ns_prompt_layout layout, ns_prompt_stats *out, ns_error *err);

/* The texts a text encoder reads for a dataset: every state's prompt
 * (rows = global state ids; layout as given, preps from ns_feat_renders_new)
 * and then every action's grounded text (rows = global action ids,
 * action_offset[problem] + operator).  texts[i] points into the owned
 * buffer, lens[i] bytes. */
typedef struct ns_text_list {
    int64_t n, nstates, nactions;
    const char **texts;
    size_t *lens;
    ns_buf all;
} ns_text_list;
void ns_text_list_dataset(ns_text_list *l, const ns_dataset *ds, ns_render_prep *const *preps, ns_prompt_layout layout);
/* The same with each state's CURRENT STATE clauses in a random order when
 * shuffle_seed is non-NULL (ns_render_prep_prompt_shuffled_bits): state s
 * (global id) uses the seed ns_text_shuffle_seed(*shuffle_seed, s), so a
 * state's order depends only on the seed and its id.  NULL: canonical. */
void ns_text_list_dataset_order(ns_text_list *l, const ns_dataset *ds, ns_render_prep *const *preps,
                                ns_prompt_layout layout, const uint64_t *shuffle_seed);
/* The per-state shuffle seed: ns_hash_mix(seed ^ ns_hash_mix(state + 1)). */
uint64_t ns_text_shuffle_seed(uint64_t seed, int64_t state);
void ns_text_list_free(ns_text_list *l);

/* Texts from a file of JSON lines, each a string or {"text": string} (empty
 * lines skipped): nstates = n, nactions = 0.  A bad line is NS_ERR_INPUT at
 * file:line. */
ns_status ns_text_list_jsonl(ns_text_list *l, const char *file, ns_error *err);

/* ---- `nextstate embed` ---------------------------------------------------- */

/* The folder of a model given by name: name itself when it holds a '/' or
 * is a folder, else $NEXTSTATE_MODELS/name, else
 * ~/.cache/nextstate/models/name; into path.  Returns whether it is a
 * folder. */
bool ns_embed_model_dir(const char *name, ns_buf *path);

/* ns_bert_load of the model folder of name (ns_embed_model_dir); a folder
 * that is not there is NS_ERR_IO without a file, its message saying how to
 * fetch the model. */
ns_status ns_embed_model_load(ns_bert **m, const char *name, ns_error *err);

/* What ns_embed_cached did: texts computed (the others were in the cache
 * or repeated), wall and process CPU seconds of the computation. */
typedef struct ns_embed_run {
    int64_t computed;
    double seconds, cpu;
} ns_embed_run;

/* ns_embed_texts through a cache folder: the table is loaded from cache
 * (when it holds embeddings.npy) or started empty, the missing texts are
 * computed, and the table is saved back when any were.  cache NULL: no
 * folder. */
ns_status ns_embed_cached(const ns_bert *m, const char *cache, int64_t n, const char *const *texts, const size_t *lens,
                          const ns_embed_opts *o, ns_embed_table *t, ns_embed_run *run, ns_error *err);

/* NS_OK when t holds every one of texts[0..n), else NS_ERR_INPUT naming
 * name (the table's folder or the file to be written), how many are missing
 * and the first of them. */
ns_status ns_embed_require(const ns_embed_table *t, const char *name, int64_t n, const char *const *texts,
                          const size_t *lens, ns_error *err);
/* The rows of texts[0..n), in order, from t to path as float32 [n, dim];
 * ns_embed_require's error (nothing written) when t lacks any of them. */
ns_status ns_embed_write_rows(const char *path, const ns_embed_table *t, int64_t n, const char *const *texts,
                              const size_t *lens, ns_error *err);
/* texts[0..n) to path as JSON strings, one a line: an import's index.jsonl
 * (row i = line i) once embeddings.npy holds their rows in that order. */
ns_status ns_embed_write_texts(const char *path, int64_t n, const char *const *texts, const size_t *lens, ns_error *err);

/* ns_text_list_dataset_order of the dataset folder dir, its prompts rendered
 * with the templates under domains_dir (shuffle_seed NULL: canonical order). */
ns_status ns_text_list_dir(ns_text_list *l, const char *dir, const char *domains_dir, ns_prompt_layout layout,
                           const uint64_t *shuffle_seed, ns_error *err);

/* A dataset's text embeddings as feature rows (`train --text-encoder`, the
 * "text:NAME" feature spec of inputs.h): states [nstates × D] (their paper-
 * layout prompts) and actions [nactions × D] (their grounded text), either
 * may be NULL.  A text longer than the window is chunked as `embed` does
 * (ns_bert_encode_chunks for every text, once any exceeds it), and said on
 * stderr when progress is on.  Through the cache DATASET_DIR/embeddings/NAME
 * (NAME+chunks when chunked) when dataset_dir is not NULL, else computed in
 * memory.  *texts (optional) receives the list the rows come from. */
ns_status ns_embed_dataset_features(const ns_bert *m, const ns_dataset *ds, const char *domains_dir,
                                    const char *dataset_dir, bool progress, ns_features *states,
                                    ns_features *actions, ns_text_list *texts, ns_error *err);

/* ns_embed_prompt_stats of the dataset folder dir; its domain's name into
 * domain. */
ns_status ns_embed_prompt_stats_dir(const ns_bert *m, const char *dir, const char *domains_dir,
                                    ns_prompt_layout layout, ns_prompt_stats *out, ns_buf *domain, ns_error *err);

/* `embed stats --json`: one dataset's statistics as a JSON object. */
void ns_prompt_stats_json(ns_buf *b, const ns_prompt_stats *q, const char *dataset, const char *domain,
                          const char *model, ns_prompt_layout layout);

#endif
