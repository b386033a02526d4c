/* train_export.c — writes what `nextstate train SPLIT --state-features builtin`
 * trains on, for bench/train_torch.py: the built-in state and action
 * features (vocabularies fitted on the split's training problems, exactly as
 * ns_builtin_fit_split + ns_world_inputs_load build them) as CSR triples
 * OUT/states_* and OUT/actions_* (ns_csr_save; `nextstate train
 * --state-features OUT/states --action-features OUT/actions` reads them back
 * as the same features), the action row offsets per problem
 * (OUT/action_offsets.npy, i64 [nproblems + 1]) and the dev pools the
 * training loop draws for model selection (OUT/dev_pools.npy, i64
 * [ndev, 128], ns_split_pools_draw with the training seed's dev stream).
 * One dataset per split (the benchmark's case).
 *   train_export SPLIT_DIR OUT_DIR [TRAIN_SEED]                              */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/util/csr.h"
#include "nextstate/data/dataset.h"
#include "nextstate/util/npy.h"
#include "nextstate/data/split.h"
#include "nextstate/eval/world_data.h"

static int fail(const ns_error *e)
{
    fprintf(stderr, "train_export: %s%s%s\n", e->file[0] ? e->file : "", e->file[0] ? ": " : "", e->msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: train_export SPLIT_DIR OUT_DIR [TRAIN_SEED]\n");
        return 30;
    }
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    ns_error e;
    ns_world_data wd;
    if (ns_world_data_open(&wd, argv[1], "builtin", "builtin", "none", &e)) return fail(&e);
    const ns_split *sp = &wd.sd.split;
    if (sp->ndatasets != 1) {
        fprintf(stderr, "train_export: expects a one-dataset split\n");
        return 30;
    }
    const ns_dataset *ds = wd.sd.ds[0];
    const ns_world_inputs *in = &wd.in;
    if (ns_mkdir_p(argv[2], &e)) return fail(&e);
    if (ns_csr_save(&in->state.csr, argv[2], "states", &e)) return fail(&e);
    if (ns_csr_save(&in->action.csr, argv[2], "actions", &e)) return fail(&e);
    char path[4096];
    ns_array a;
    int64_t shape[2] = {ds->nproblems + 1, 0};
    ns_array_init(&a, NS_I64, 1, shape);
    memcpy(a.data, in->action_offset[0], (size_t)(ds->nproblems + 1) * sizeof(int64_t));
    snprintf(path, sizeof path, "%s/action_offsets.npy", argv[2]);
    if (ns_npy_write(path, &a, NULL, &e)) return fail(&e);
    ns_array_free(&a);
    /* ns_world_train's dev pools, drawn by the split's rules from the dev stream */
    int pool = 128;
    int64_t *dev = sp->dev.n ? ns_split_pools_draw(sp, in->ds, &sp->dev, pool, seed ^ NS_SEED_DEV_POOLS) : NULL;
    shape[0] = sp->dev.n;
    shape[1] = pool;
    ns_array_init(&a, NS_I64, 2, shape);
    if (dev) memcpy(a.data, dev, (size_t)sp->dev.n * pool * sizeof(int64_t));
    snprintf(path, sizeof path, "%s/dev_pools.npy", argv[2]);
    if (ns_npy_write(path, &a, NULL, &e)) return fail(&e);
    ns_array_free(&a);
    printf("states [%lld x %lld] nnz %lld, actions [%lld x %lld] nnz %lld, dev pools %lld\n",
           (long long)in->state.nrows, (long long)in->state.dim, (long long)in->state.csr.nnz, (long long)in->action.nrows,
           (long long)in->action.dim, (long long)in->action.csr.nnz, (long long)sp->dev.n);
    free(dev);
    ns_world_data_free(&wd);
    return 0;
}
