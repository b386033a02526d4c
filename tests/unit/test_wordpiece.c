/* test_wordpiece.c — the WordPiece tokenizer against HuggingFace tokenizers'
 * output (tests/fixtures/bert/NAME.ref.json, made by dev/bert_fixture.py):
 * accents, punctuation, unknown words, literal special tokens, CJK, control
 * characters, truncation; the real vocabularies when the models are present
 * (scripts/fetch_models.sh; skipped otherwise); loading errors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "nextstate/util/json.h"
#include "nextstate/util/util.h"
#include "nextstate/encode/wordpiece.h"
#include "test.h"

#define FIX "tests/fixtures/bert/"

static ns_wordpiece *load(const char *dir)
{
    ns_wordpiece *wp = NULL;
    ns_error err;
    if (ns_wordpiece_load_dir(&wp, dir, &err) != NS_OK) {
        char b[1024];
        ns_error_format(&err, b, sizeof b);
        printf("  load %s: %s\n", dir, b);
    }
    return wp;
}

/* Every case of a tiny model's reference: the model-input ids. */
static void check_reference(const char *name)
{
    char dir[256], ref[256];
    snprintf(dir, sizeof dir, FIX "%s", name);
    snprintf(ref, sizeof ref, FIX "%s.ref.json", name);
    ns_wordpiece *wp = load(dir);
    ns_json j;
    ns_error err;
    CHECK(wp != NULL);
    CHECK_EQ_INT(ns_json_read(&j, ref, &err), NS_OK);
    if (!wp || j.kind != NS_JSON_OBJECT) return;
    int64_t ms = 0;
    CHECK(ns_json_get_int(&j, "max_seq_length", &ms));
    const ns_json *cases = ns_json_get(&j, "cases");
    CHECK(cases && cases->n >= 10);
    int32_t ids[512];
    for (int i = 0; cases && i < cases->n; i++) {
        const ns_json *c = &cases->items[i], *text = ns_json_get(c, "text"), *want = ns_json_get(c, "ids");
        int n = ns_wordpiece_encode(wp, text->string, text->string_len, (int)ms, ids);
        bool same = n == want->n;
        for (int k = 0; same && k < n; k++) same = ids[k] == want->items[k].integer;
        if (!same) {
            printf("  %s case %d: got", name, i);
            for (int k = 0; k < n; k++) printf(" %s", ns_wordpiece_token(wp, ids[k]));
            printf("\n  expected");
            for (int k = 0; k < want->n; k++) printf(" %s", ns_wordpiece_token(wp, (int)want->items[k].integer));
            printf("\n");
        }
        CHECK(same);
    }
    ns_json_free(&j);
    ns_wordpiece_free(wp);
}

static void test_tiny_bert_reference(void) { check_reference("tiny-bert"); }
static void test_tiny_mpnet_reference(void) { check_reference("tiny-mpnet"); }

static void expect_norm(const ns_wordpiece *wp, const char *in, const char *want)
{
    ns_buf b;
    ns_buf_init(&b);
    ns_wordpiece_normalize(wp, in, strlen(in), &b);
    CHECK_STR(b.data ? b.data : "", want);
    ns_buf_free(&b);
}

static void test_normalize(void)
{
    ns_wordpiece *wp = load(FIX "tiny-bert");
    CHECK(wp != NULL);
    if (!wp) return;
    expect_norm(wp, "Caf\xc3\xa9 \xc3\x80\xc3\x89\xc3\x8e", "cafe aei");            /* accents stripped */
    expect_norm(wp, "\xe5\x8c\x97\xe4\xba\xac", " \xe5\x8c\x97  \xe4\xba\xac ");    /* CJK padded */
    expect_norm(wp, "a\tb\r\nc\xc2\xa0" "d", "a b  c d");                            /* whitespace → ' ' */
    expect_norm(wp, "x\xe2\x80\x8by\x07z", "xyz");                                    /* ZWSP (Cf), BEL dropped */
    expect_norm(wp, "\xc4\xb0", "i");                                                 /* İ → I → i */
    expect_norm(wp, "\xc3\x9f", "\xc3\x9f");                                          /* ß stays */
    expect_norm(wp, "\xce\xa3\xce\x91\xce\xa3", "\xcf\x83\xce\xb1\xcf\x83");          /* ΣΑΣ → σασ */
    expect_norm(wp, "\xc7\x84", "\xc7\x86");                                          /* Ǆ → ǆ */
    expect_norm(wp, "\xed\x95\x9c", "\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab");          /* 한 → jamo */
    expect_norm(wp, "\xe2\x84\xab", "a");                                             /* Å (Angstrom) */
    expect_norm(wp, "a\xff" "b\xc3", "ab");                                           /* invalid UTF-8 */
    expect_norm(wp, "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");                          /* emoji kept */
    ns_wordpiece_free(wp);
}

static void pieces(const ns_wordpiece *wp, const char *text, const char *want)
{
    int32_t *ids = NULL;
    size_t n = 0, cap = 0;
    ns_wordpiece_tokenize(wp, text, strlen(text), 0, &ids, &n, &cap);
    ns_buf b;
    ns_buf_init(&b);
    for (size_t i = 0; i < n; i++) ns_buf_printf(&b, "%s%s", i ? " " : "", ns_wordpiece_token(wp, ids[i]));
    CHECK_STR(b.data ? b.data : "", want);
    ns_buf_free(&b);
    free(ids);
}

static void test_pieces(void)
{
    ns_wordpiece *wp = load(FIX "tiny-bert");
    CHECK(wp != NULL);
    if (!wp) return;
    pieces(wp, "unaffable", "un ##aff ##able");
    pieces(wp, "Unaffable!!", "un ##aff ##able ! !");
    pieces(wp, "quiz", "[UNK]");                  /* no segmentation → one [UNK] */
    pieces(wp, "a-b $5 ~x", "a - b $ 5 ~ x");     /* ASCII punctuation splits */
    pieces(wp, "hello[UNK]world", "hello [UNK] world"); /* literal special token */
    pieces(wp, "[unk]", "[ un ##k ]");            /* not normalized: case matters */
    pieces(wp, "", "");
    char longw[130];
    memset(longw, 'a', 101);
    longw[101] = '\0';
    pieces(wp, longw, "[UNK]"); /* more than 100 characters */
    longw[100] = '\0';
    int32_t *ids = NULL;
    size_t n = 0, cap = 0;
    ns_wordpiece_tokenize(wp, longw, 100, 0, &ids, &n, &cap);
    CHECK_EQ_INT(n, 100); /* a ##a … */
    CHECK_STR(ns_wordpiece_token(wp, ids[99]), "##a");
    /* limit */
    n = 0;
    ns_wordpiece_tokenize(wp, "hello world hello world", 23, 3, &ids, &n, &cap);
    CHECK_EQ_INT(n, 3);
    free(ids);
    ns_wordpiece_free(wp);
}

static void test_truncation(void)
{
    ns_wordpiece *wp = load(FIX "tiny-bert");
    CHECK(wp != NULL);
    if (!wp) return;
    int32_t ids[8];
    const char *t = "hello world hello world";
    int n = ns_wordpiece_encode(wp, t, strlen(t), 5, ids);
    CHECK_EQ_INT(n, 5);
    CHECK_EQ_INT(ids[0], ns_wordpiece_cls_id(wp));
    CHECK_STR(ns_wordpiece_token(wp, ids[3]), "hello");
    CHECK_EQ_INT(ids[4], ns_wordpiece_sep_id(wp));
    n = ns_wordpiece_encode(wp, t, strlen(t), 2, ids);
    CHECK_EQ_INT(n, 2);
    n = ns_wordpiece_encode(wp, "hello", 5, 8, ids);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(ns_wordpiece_id(wp, "[UNK]"), ns_wordpiece_unk_id(wp));
    CHECK_EQ_INT(ns_wordpiece_id(wp, "no-such-token"), -1);
    ns_wordpiece_free(wp);
}

static const char *models_dir(char *buf, size_t n)
{
    const char *env = getenv("NEXTSTATE_MODELS"), *home = getenv("HOME");
    if (env && *env) snprintf(buf, n, "%s", env);
    else snprintf(buf, n, "%s/.cache/nextstate/models", home ? home : ".");
    return buf;
}

/* The real vocabularies: ids of real_texts.jsonl as sentence-transformers makes them. */
static void check_real(const char *name, int max_len)
{
    char md[512], dir[1024], ids_path[256];
    snprintf(dir, sizeof dir, "%s/%s", models_dir(md, sizeof md), name);
    snprintf(ids_path, sizeof ids_path, FIX "%s.ids.jsonl", name);
    ns_wordpiece *wp = load(dir);
    CHECK(wp != NULL);
    char *texts, *want;
    size_t tl, wl;
    ns_error err;
    CHECK_EQ_INT(ns_read_file(FIX "real_texts.jsonl", &texts, &tl, &err), NS_OK);
    CHECK_EQ_INT(ns_read_file(ids_path, &want, &wl, &err), NS_OK);
    int32_t *ids = malloc((size_t)max_len * sizeof *ids);
    char *tp = texts, *wpp = want;
    int line = 0;
    while (wp && *tp && *wpp) {
        char *te = strchr(tp, '\n'), *we = strchr(wpp, '\n');
        ns_json t, w;
        CHECK_EQ_INT(ns_json_parse(&t, tp, (size_t)(te - tp), "texts", &err), NS_OK);
        CHECK_EQ_INT(ns_json_parse(&w, wpp, (size_t)(we - wpp), "ids", &err), NS_OK);
        int n = ns_wordpiece_encode(wp, t.string, t.string_len, max_len, ids);
        bool same = n == w.n;
        for (int k = 0; same && k < n; k++) same = ids[k] == w.items[k].integer;
        if (!same) printf("  %s: text %d tokenizes differently (%d vs %d ids)\n", name, line, n, w.n);
        CHECK(same);
        ns_json_free(&t);
        ns_json_free(&w);
        tp = te + 1;
        wpp = we + 1;
        line++;
    }
    CHECK(line >= 10);
    free(ids);
    free(texts);
    free(want);
    ns_wordpiece_free(wp);
}

static bool have_model(const char *name)
{
    char md[512], p[1024];
    snprintf(p, sizeof p, "%s/%s/vocab.txt", models_dir(md, sizeof md), name);
    return access(p, R_OK) == 0;
}

static void test_real_minilm_vocab(void) { check_real("all-MiniLM-L6-v2", 256); }
static void test_real_mpnet_vocab(void) { check_real("all-mpnet-base-v2", 384); }

static void test_errors(void)
{
    ns_wordpiece *wp = NULL;
    ns_error err;
    CHECK_EQ_INT(ns_wordpiece_load_dir(&wp, "/nonexistent/model", &err), NS_ERR_IO);
    CHECK(strstr(err.file, "vocab.txt") != NULL);
    char dir[] = "/tmp/ns_test_wp_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    CHECK_EQ_INT(ns_write_file_atomic(path, "", 0, &err), NS_OK);
    CHECK_EQ_INT(ns_wordpiece_load_dir(&wp, dir, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "empty vocabulary") != NULL);
    CHECK_EQ_INT(ns_write_file_atomic(path, "a\nb\n", 4, &err), NS_OK);
    CHECK_EQ_INT(ns_wordpiece_load_dir(&wp, dir, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "[UNK]") != NULL);
    /* tokenizer.json whose vocabulary disagrees with vocab.txt */
    char *tj;
    size_t tl;
    CHECK_EQ_INT(ns_read_file(FIX "tiny-mpnet/tokenizer.json", &tj, &tl, &err), NS_OK);
    char tpath[256];
    snprintf(tpath, sizeof tpath, "%s/tokenizer.json", dir);
    CHECK_EQ_INT(ns_write_file_atomic(tpath, tj, tl, &err), NS_OK);
    CHECK_EQ_INT(ns_write_file_atomic(path, "[UNK]\n<s>\n</s>\n", 15, &err), NS_OK);
    CHECK_EQ_INT(ns_wordpiece_load_dir(&wp, dir, &err), NS_ERR_INPUT);
    CHECK(strstr(err.msg, "vocabulary entries") != NULL);
    /* malformed tokenizer.json */
    CHECK_EQ_INT(ns_write_file_atomic(tpath, "{\"model\": ", 10, &err), NS_OK);
    CHECK_EQ_INT(ns_wordpiece_load_dir(&wp, dir, &err), NS_ERR_INPUT);
    CHECK(strstr(err.file, "tokenizer.json") != NULL);
    free(tj);
    remove(tpath);
    remove(path);
    rmdir(dir);
    CHECK(wp == NULL);
}

int main(void)
{
    NS_RUN(test_tiny_bert_reference);
    NS_RUN(test_tiny_mpnet_reference);
    NS_RUN(test_normalize);
    NS_RUN(test_pieces);
    NS_RUN(test_truncation);
    NS_RUN(test_errors);
    if (have_model("all-MiniLM-L6-v2")) NS_RUN(test_real_minilm_vocab);
    else NS_SKIP(test_real_minilm_vocab, "all-MiniLM-L6-v2 not fetched (scripts/fetch_models.sh)");
    if (have_model("all-mpnet-base-v2")) NS_RUN(test_real_mpnet_vocab);
    else NS_SKIP(test_real_mpnet_vocab, "all-mpnet-base-v2 not fetched (scripts/fetch_models.sh --all)");
    return ns_test_summary("test_wordpiece");
}
