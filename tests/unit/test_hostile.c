/* test_hostile.c — loaders against crafted files (issue #14): a world-model
 * checkpoint whose config asks for more than its own tensors hold (valid
 * CRC), out-of-range config integers, overlapping safetensors offsets, a
 * directory read as a file; PDDL text with a BOM, NUL or bad UTF-8. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nextstate/core/pddl.h"
#include "nextstate/core/task.h"
#include "nextstate/learn/params.h"
#include "nextstate/learn/predictor.h"
#include "nextstate/learn/world.h"
#include "nextstate/util/safetensors.h"
#include "nextstate/util/util.h"
#include "test.h"

static char tmpdir[256];

/* rewrites path with its meta's first `from` replaced by `to` (CRC recomputed) */
static bool edit_meta(const char *path, const char *out, const char *from, const char *to)
{
    ns_params p;
    ns_ckpt_info info;
    ns_error e;
    if (ns_params_read(&p, path, &info, &e) != NS_OK) return false;
    char *at = strstr(info.meta, from);
    bool ok = at != NULL;
    if (ok) {
        ns_buf b;
        ns_buf_init(&b);
        ns_buf_put(&b, info.meta, (size_t)(at - info.meta));
        ns_buf_puts(&b, to);
        ns_buf_puts(&b, at + strlen(from));
        ns_ckpt_opts o = {.moments = false, .step = info.step, .meta = b.data};
        ok = ns_params_save(&p, out, &o, &e) == NS_OK;
        ns_buf_free(&b);
    }
    ns_ckpt_info_free(&info);
    ns_params_free(&p);
    return ok;
}

static void test_world_config_against_tensors(void)
{
    ns_world_config c;
    ns_world_config_init(&c);
    c.state_dim = 12;
    c.action_dim = 7;
    c.out = 16;
    c.layers = 2;
    c.state_hidden = 8;
    c.action_hidden = 8;
    c.t_hidden = 8;
    ns_world w;
    ns_error e;
    CHECK(ns_world_create(&w, &c, 1, &e) == NS_OK);
    char path[400], bad[400];
    snprintf(path, sizeof path, "%s/w.ckpt", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", tmpdir);
    CHECK(ns_world_save(&w, path, NULL, NULL, &e) == NS_OK);
    ns_world_free(&w);
    ns_world w2;
    CHECK(ns_world_load(&w2, path, NULL, &e) == NS_OK);
    ns_world_free(&w2);
    /* D2: "out": 16 -> 65536 with a valid CRC: rejected before allocating */
    CHECK(edit_meta(path, bad, "\"out\": 16", "\"out\": 65536"));
    CHECK(ns_world_load(&w2, bad, NULL, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.file, "bad.ckpt") != NULL);
    CHECK(strstr(e.msg, "does not match its own tensors") != NULL);
    printf("  %s\n", e.msg);
    /* D17: a file problem is an input error, not usage; no truncation to int */
    CHECK(edit_meta(path, bad, "\"layers\": 2", "\"layers\": 100"));
    CHECK(ns_world_load(&w2, bad, NULL, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "layers") != NULL);
    CHECK(edit_meta(path, bad, "\"t_hidden\": 8", "\"t_hidden\": 4294967304"));
    CHECK(ns_world_load(&w2, bad, NULL, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "t_hidden") != NULL);
    CHECK(edit_meta(path, bad, "\"state_hidden\": 8", "\"state_hidden\": 9"));
    CHECK(ns_world_load(&w2, bad, NULL, &e) == NS_ERR_INPUT);
}

/* Fuzz finding (fuzz_predictor): a well-formed checkpoint whose description
 * is not JSON is refused, and the tensors read so far are freed (the SAN
 * build's leak check fails this test otherwise). */
static void test_predictor_meta_not_json(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/p.model", tmpdir);
    ns_params p;
    ns_params_init(&p);
    int64_t shape[1] = {1};
    ns_params_add(&p, "x", 1, shape, NS_INIT_ZEROS, 0);
    ns_error e;
    CHECK(ns_params_alloc(&p, &e) == NS_OK);
    ns_ckpt_opts o = {.meta = "{not json"};
    CHECK(ns_params_save(&p, path, &o, &e) == NS_OK);
    ns_params_free(&p);
    ns_predictor m;
    CHECK(ns_predictor_load(&m, path, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "not JSON") != NULL);
}

static void test_safetensors_overlap(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/o.safetensors", tmpdir);
    const char *hdr = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                      "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}";
    ns_buf f;
    ns_buf_init(&f);
    uint64_t n = strlen(hdr);
    for (int i = 0; i < 8; i++) ns_buf_putc(&f, (char)((n >> (8 * i)) & 0xFF));
    ns_buf_puts(&f, hdr);
    float z[4] = {0};
    ns_buf_put(&f, z, sizeof z);
    ns_error e;
    CHECK(ns_write_file_atomic(path, f.data, f.len, &e) == NS_OK);
    ns_buf_free(&f);
    ns_safetensors st;
    CHECK(ns_st_open(&st, path, &e) == NS_ERR_INPUT);
    CHECK(strstr(e.msg, "overlap") != NULL);
}

static void test_text_files(void)
{
    ns_error e;
    char *t;
    size_t len;
    CHECK(ns_read_file(tmpdir, &t, &len, &e) == NS_ERR_IO);
    CHECK(strstr(e.msg, "directory") != NULL);
    char path[400];
    snprintf(path, sizeof path, "%s/nul.txt", tmpdir);
    CHECK(ns_write_file_atomic(path, "ab\ncd\0ef", 8, &e) == NS_OK);
    CHECK(ns_read_text_file(path, &t, &len, &e) == NS_ERR_INPUT);
    CHECK(e.line == 2 && e.col == 3);
    snprintf(path, sizeof path, "%s/bom.txt", tmpdir);
    CHECK(ns_write_file_atomic(path, "\xEF\xBB\xBFxy", 5, &e) == NS_OK);
    CHECK(ns_read_text_file(path, &t, &len, &e) == NS_OK);
    CHECK(len == 2 && strcmp(t, "xy") == 0);
    free(t);
    CHECK(ns_utf8_valid_prefix("a\xC3\xA9z", 4) == 4);
    CHECK(ns_utf8_valid_prefix("a\xE9z", 3) == 1);
    CHECK(ns_utf8_valid_prefix("\xC0\x80", 2) == 0);       /* overlong */
    CHECK(ns_utf8_valid_prefix("\xED\xA0\x80", 3) == 0);   /* surrogate */
    CHECK(ns_utf8_valid_prefix("\xF0\x9F\x98\x80", 4) == 4);
    CHECK(ns_utf8_valid_prefix("\xF0\x9F\x98", 3) == 0);   /* cut short */
}

/* D4: grounding stops at its limits with the limit's status, and within
 * generous limits gives the same task as without them */
static void test_ground_limits(void)
{
    ns_error e;
    ns_domain d;
    ns_problem p;
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_puts(&b, "(define (problem many) (:domain blocksworld-4ops) (:objects");
    for (int i = 0; i < 300; i++) ns_buf_printf(&b, " b%d", i);
    ns_buf_puts(&b, ") (:init (handempty)");
    for (int i = 0; i < 300; i++) ns_buf_printf(&b, " (clear b%d) (ontable b%d)", i, i);
    ns_buf_puts(&b, ") (:goal (and (on b0 b1))))");
    char *dt;
    size_t dl;
    CHECK(ns_read_text_file("domains/blocksworld/domain.pddl", &dt, &dl, &e) == NS_OK);
    CHECK(ns_domain_parse(&d, dt, "domain.pddl", &e) == NS_OK);
    free(dt);
    CHECK(ns_problem_parse(&p, &d, b.data, "many.pddl", &e) == NS_OK);
    ns_buf_free(&b);
    ns_task t, u;
    CHECK(ns_task_ground(&t, &d, &p, &e) == NS_OK);
    ns_ground_limits roomy = {3600, (size_t)1 << 40}, tiny_mem = {0, 1 << 20}, no_time = {1e-9, 0};
    CHECK(ns_task_ground_limited(&u, &d, &p, &roomy, &e) == NS_OK);
    CHECK(u.natoms == t.natoms && u.nops == t.nops && t.nops == 2 * 300 * 300 + 2 * 300); /* stack/unstack x x too: no inequality */
    ns_task_free(&u);
    CHECK(ns_task_ground_limited(&u, &d, &p, &tiny_mem, &e) == NS_OUT_OF_MEMORY);
    CHECK(strstr(e.msg, "memory limit") && strcmp(e.file, "many.pddl") == 0);
    CHECK(ns_task_ground_limited(&u, &d, &p, &no_time, &e) == NS_OUT_OF_TIME);
    CHECK(strstr(e.msg, "time limit") != NULL);
    ns_task_free(&t);
    ns_problem_free(&p);
    ns_domain_free(&d);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ns_hostile_%ld", (long)getpid());
    mkdir(tmpdir, 0755);
    NS_RUN(test_world_config_against_tensors);
    NS_RUN(test_safetensors_overlap);
    NS_RUN(test_predictor_meta_not_json);
    NS_RUN(test_text_files);
    NS_RUN(test_ground_limits);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) return 1;
    return ns_test_summary("test_hostile");
}
