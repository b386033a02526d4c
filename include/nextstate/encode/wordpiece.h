/* wordpiece.h — the WordPiece tokenizer of BERT-family sentence encoders,
 * matching HuggingFace tokenizers (the "fast" tokenizer sentence-transformers
 * uses) for BertNormalizer + BertPreTokenizer + WordPiece + added tokens:
 *
 *  1. added (special) tokens such as "[CLS]", "<s>", "[UNK]" are cut out of
 *     the raw text first (leftmost-longest match; lstrip / rstrip swallow the
 *     whitespace next to them; single_word ones only match between non-word
 *     characters); tokens flagged "normalized" are matched in the normalized
 *     text instead;
 *  2. normalization, per code point: clean_text drops NUL, U+FFFD and
 *     control / format / unassigned / private-use characters (tab, newline
 *     and CR excepted) and turns whitespace into ' '; handle_chinese_chars
 *     puts spaces around CJK ideographs; strip_accents (by default on when
 *     lowercasing) applies NFD and drops nonspacing marks ("Café" → "Cafe");
 *     lowercase uses the full Unicode one-character mapping;
 *  3. pre-tokenization: split on whitespace, and every punctuation character
 *     (Unicode P* or ASCII punctuation such as $ + < = > ^ ` | ~) is a word
 *     of its own;
 *  4. WordPiece: greedy longest-match-first pieces, continuation pieces
 *     prefixed "##"; a word with no segmentation, or longer than
 *     max_input_chars_per_word (100) characters, becomes the unknown token.
 *
 * Unicode tables (classes, NFD-without-marks, lowercase) are generated from
 * Python's unicodedata by dev/bert_unicode.py.  Invalid UTF-8 bytes read as
 * U+FFFD (and are dropped by clean_text).  Model input is
 * [CLS] pieces… [SEP] with the pieces truncated so the whole is at most the
 * model's maximum length (sentence-transformers' truncation). */
#ifndef NEXTSTATE_WORDPIECE_H
#define NEXTSTATE_WORDPIECE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"

typedef struct ns_wordpiece ns_wordpiece;

/* Normalizer and model settings (tokenizer.json's "normalizer" and "model"). */
typedef struct ns_wordpiece_opts {
    bool lowercase;                /* default true */
    int strip_accents;             /* -1: same as lowercase (HF's null, default); 0: no; 1: yes */
    bool clean_text;               /* default true */
    bool handle_chinese_chars;     /* default true */
    int max_input_chars_per_word;  /* default 100 */
    const char *unk_token;         /* default "[UNK]" */
    const char *cls_token;         /* default "[CLS]": first token of a model input */
    const char *sep_token;         /* default "[SEP]": last token of a model input */
    const char *prefix;            /* continuation prefix, default "##" */
} ns_wordpiece_opts;

/* A token matched in the text before word-piece splitting. */
typedef struct ns_wordpiece_added {
    const char *content;
    int id;
    bool single_word, lstrip, rstrip, normalized;
} ns_wordpiece_added;

void ns_wordpiece_opts_default(ns_wordpiece_opts *o);

/* Builds a tokenizer from the vocabulary vocab[0..n) (id = index) and the
 * added tokens (ids may lie beyond n).  The unknown, CLS and SEP tokens must
 * be in the vocabulary or among the added tokens (NS_ERR_INPUT otherwise). */
ns_status ns_wordpiece_new(ns_wordpiece **out, const char *const *vocab, int n, const ns_wordpiece_opts *o,
                           const ns_wordpiece_added *added, int nadded, ns_error *err);

/* Loads a model folder's tokenizer: dir/vocab.txt (one token a line, id =
 * line number; required) and, when present, dir/tokenizer.json (normalizer
 * flags, WordPiece settings, added tokens, the post-processor's CLS/SEP),
 * else dir/tokenizer_config.json + the conventional special tokens.
 * NS_ERR_IO when vocab.txt cannot be read; NS_ERR_INPUT (naming the file)
 * for an empty vocabulary, malformed JSON, a tokenizer.json whose vocabulary
 * size differs from vocab.txt's, special tokens missing from the vocabulary;
 * NS_ERR_UNSUPPORTED for a tokenizer.json that is not BERT-style WordPiece. */
ns_status ns_wordpiece_load_dir(ns_wordpiece **out, const char *dir, ns_error *err);
void ns_wordpiece_free(ns_wordpiece *wp);

/* Number of token ids (the largest id + 1, added tokens included). */
int ns_wordpiece_size(const ns_wordpiece *wp);
/* Text of token id (NULL when out of range or unused). */
const char *ns_wordpiece_token(const ns_wordpiece *wp, int id);
/* Id of an exact token text (vocabulary or added), or -1. */
int ns_wordpiece_id(const ns_wordpiece *wp, const char *token);
int ns_wordpiece_unk_id(const ns_wordpiece *wp);
int ns_wordpiece_cls_id(const ns_wordpiece *wp);
int ns_wordpiece_sep_id(const ns_wordpiece *wp);

/* Appends the normalized form of text[0..len) (step 2 alone) to out. */
void ns_wordpiece_normalize(const ns_wordpiece *wp, const char *text, size_t len, ns_buf *out);

/* Appends the token ids of text[0..len) (steps 1–4, no CLS/SEP) to the
 * growable array *ids (*n used, *cap allocated); stops once *n reaches
 * limit (0: no limit).  Returns the number appended. */
size_t ns_wordpiece_tokenize(const ns_wordpiece *wp, const char *text, size_t len, size_t limit, int32_t **ids,
                             size_t *n, size_t *cap);

/* Model input: CLS, the first max_len − 2 token ids, SEP, written to
 * ids[0..max_len); returns the length (2 … max_len).  max_len ≥ 2. */
int ns_wordpiece_encode(const ns_wordpiece *wp, const char *text, size_t len, int max_len, int32_t *ids);

#endif
