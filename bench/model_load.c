/* model_load.c — CPU time of loading predictor model files, for
 * bench/learned.sh: each file is loaded REPEAT times (ns_predictor_load) and
 * the median CPU milliseconds per load printed with the file's format
 * version (3: its own container, 1–2: a params checkpoint), trees and size.  For a version-1 file (XGBoost JSON inside) the
 * part spent in libxgboost's JSON reader (ns_xgb_load_json, what loading
 * cost before the flat forest) is timed on its own too.  A learned-heuristic
 * file (hwl.h) is loaded by ns_hwl_load (version 0, no trees).
 *   model_load REPEAT MODEL...                                               */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "nextstate/learn/hwl.h"
#include "nextstate/learn/predictor.h"
#include "nextstate/util/json.h"
#include "bench_time.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: model_load REPEAT MODEL...\n");
        return 2;
    }
    int rep = atoi(argv[1]);
    if (rep < 1 || rep > 1000) {
        fprintf(stderr, "model_load: REPEAT must be 1..1000\n");
        return 2;
    }
    double *t = calloc((size_t)rep, sizeof(double)), *tx = calloc((size_t)rep, sizeof(double));
    for (int a = 2; a < argc; a++) {
        const char *path = argv[a];
        ns_error e;
        ns_error_clear(&e);
        int version = 0, trees = 0;
        bool hwl = ns_hwl_sniff(path);
        for (int r = 0; r < rep && hwl; r++) {
            ns_hwl h;
            double t0 = bench_cpu_now();
            if (ns_hwl_load(&h, path, &e) != NS_OK) {
                fprintf(stderr, "model_load: %s: %s\n", path, e.msg);
                return 1;
            }
            t[r] = bench_cpu_now() - t0;
            ns_hwl_free(&h);
        }
        for (int r = 0; r < rep && !hwl; r++) {
            ns_predictor m;
            double t0 = bench_cpu_now();
            if (ns_predictor_load(&m, path, &e) != NS_OK) {
                fprintf(stderr, "model_load: %s: %s\n", path, e.msg);
                return 1;
            }
            t[r] = bench_cpu_now() - t0;
            trees = m.forest.ntrees;
            ns_predictor_free(&m);
        }
        /* the file's version and, for version 1, libxgboost's share */
        ns_params raw;
        ns_ckpt_info info;
        double xgb_ms = -1;
        if (!hwl && ns_params_read(&raw, path, &info, &e) == NS_OK) { /* versions 1, 2: checkpoints */
            ns_json j;
            if (ns_json_parse(&j, info.meta, strlen(info.meta), path, &e) == NS_OK) {
                int64_t v = 0, dim = 0, br = 0;
                ns_json_get_int(&j, "version", &v);
                ns_json_get_int(&j, "dim", &dim);
                version = (int)v;
                const ns_json *xj = ns_json_get(&j, "xgb");
                const ns_json *xm = xj ? ns_json_get(xj, "model") : NULL;
                if (xm && xm->kind == NS_JSON_STRING && ns_json_get_int(xj, "best_round", &br)) {
                    for (int r = 0; r < rep; r++) {
                        ns_xgb x;
                        ns_xgb_init(&x);
                        double t0 = bench_cpu_now();
                        ns_status st = ns_xgb_load_json(&x, xm->string, xm->string_len, 2 * (int)dim, (int)dim,
                                                        (int)br, &e);
                        tx[r] = bench_cpu_now() - t0;
                        ns_xgb_free(&x);
                        if (st != NS_OK) break;
                    }
                    xgb_ms = 1e3 * bench_median(tx, rep);
                }
                ns_json_free(&j);
            }
            ns_params_free(&raw);
            ns_ckpt_info_free(&info);
        }
        FILE *f = fopen(path, "rb");
        long size = -1;
        unsigned char head[12];
        if (f && fread(head, 1, 12, f) == 12 && !memcmp(head, "NSPREDXG", 8)) /* version 3: own container */
            version = head[8] | head[9] << 8 | head[10] << 16 | head[11] << 24;
        if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
        if (f) fclose(f);
        printf("{\"model\": \"%s\", \"version\": %d, \"bytes\": %ld, \"trees\": %d, \"load_cpu_ms\": %.3f", path,
               version, size, trees, 1e3 * bench_median(t, rep));
        if (xgb_ms >= 0) printf(", \"libxgboost_json_load_cpu_ms\": %.3f", xgb_ms);
        printf(", \"repeat\": %d}\n", rep);
    }
    free(t);
    free(tx);
    return 0;
}
