/* main.c — the `nextstate` command: dispatch to subcommands. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *usage;
} command;

static const command commands[] = {
    {"solve", cmd_solve, "find a plan (bfs, astar, gbfs)",
     "nextstate solve DOMAIN PROBLEM [--search bfs|astar|gbfs] [--heuristic blind|hmax|hadd|ff|lmcut]\n"
     "                [--time-limit SECONDS] [--memory-limit MB] [--plan-file FILE] [--json]\n"
     "  Default: --search astar --heuristic lmcut (optimal).  gbfs defaults to ff.\n"
     "  The plan goes to FILE, or to standard output without --plan-file.\n"
     "  Exit: 0 solved; 10 unsolvable; 11 incomplete; 22 out of memory; 23 out of time;\n"
     "        30 usage; 31 input error; 32 file error; 33 unsupported PDDL."},
    {"validate", cmd_validate, "check that a plan solves a problem",
     "nextstate validate DOMAIN PROBLEM PLAN [--json]\n"
     "  Exit 0 iff every step is applicable and the goal holds at the end; otherwise 12,\n"
     "  naming the first failing step and its unmet precondition or goal atom."},
    {"gen", cmd_gen, "write a random solvable problem",
     "nextstate gen DOMAIN --seed S [--NAME VALUE …] [--problem-name NAME] [-o FILE]\n"
     "nextstate gen --list      (domains and their size options)"},
    {"data", cmd_data, "build, inspect and export transition datasets",
     "nextstate data build DOMAIN PROBLEM|FOLDER… -o DIR [--mode optimal|full] [--max-states N]\n"
     "                     [--plans K] [--seed S] [--time-limit S] [--quiet]\n"
     "  optimal (default): the optimal-plan DAG of every problem; full: every reachable state.\n"
     "  --max-states caps the states explored per problem (default 1000000); --plans draws K\n"
     "  distinct optimal plans per problem (default 16).\n"
     "nextstate data info DIR [--json]\n"
     "nextstate data export DIR [-o FILE.jsonl] [--text [--domains DIR]]\n"
     "  One JSON object per transition: action, literals of both states, h*, optimality;\n"
     "  --text adds the EmbedPlan prompts of both states (templates from DIR/*/render*.txt,\n"
     "  default ./domains).\n"
     "nextstate data plans DIR -o OUTDIR         (the sampled optimal plans as IPC plan files)"},
    {"split", cmd_split, "evaluation splits and candidate pools",
     "nextstate split PROTOCOL DATASET_DIR… -o DIR [--test-frac F] [--dev-frac F] [--pool-size N]\n"
     "                [--with-replacement] [--seed S]\n"
     "  PROTOCOL: interpolation | plan-variant | extrapolation (one dataset);\n"
     "            multi-domain | leave-one-out (two or more: the last is held out) | cross-domain (train on\n"
     "            the first, test on the second).\n"
     "  --test-frac: test share of transitions, plans or problems (default 0.2); --dev-frac: share of the\n"
     "  training data held out for model selection (default 0.1; 0: none); --pool-size: candidates per\n"
     "  test transition, the true next state first (default 128; 0: no pools).\n"
     "  Writes DIR/split.json, train.npy, dev.npy, test.npy ((dataset, transition) rows) and pools.npy.\n"
     "nextstate split sizes ROOT [--json]\n"
     "  The first paper's size splits: the problems of ROOT/{train,validation,test-interpolation,\n"
     "  test-extrapolation}, sorted by name."},
    {"encode", cmd_encode, "WL or FSF features of dataset states or plan trajectories (.npy)",
     "nextstate encode DATASET_DIR --encoder wl|fsf -o OUT.npy [options]\n"
     "nextstate encode --plans DOMAIN PROBLEMS_DIR PLANS_DIR --encoder wl|fsf -o OUTDIR [options]\n"
     "  Dataset mode writes float32 [N, D] (one row per state, dataset order), or with --sparse a CSR as\n"
     "  OUT.indptr.npy (i64 [N+1]), OUT.indices.npy (i32), OUT.data.npy (f32).  Problems are re-grounded\n"
     "  from the manifest's file paths.  --plans rebuilds s_0..s_T of every PROBLEMS_DIR/X.pddl that has\n"
     "  PLANS_DIR/X.plan and writes OUTDIR/X.npy [T+1, D] and OUTDIR/X_goal.npy [D], as the paper did.\n"
     "  WL:  --vocab FILE (WLPlan JSON, e.g. the paper's <domain>_wl.json; either key spelling)\n"
     "       | --fit (on the encoded states) | --fit-on DATASET_DIR (on another dataset's states)\n"
     "       [--fit-goals] [--vocab-out FILE (default OUT.vocab.json)] [--key-format flat|triples]\n"
     "       [--iterations L (fit default 2)] [--set (set hashing; default multiset)]\n"
     "       [--statics in|out (default in: the paper's training setting; its inference dropped them)]\n"
     "       [--actions FILE (dataset transitions' action encodings, [T, S + A*D])]\n"
     "  FSF: [--fsf-config FILE (the paper's <domain>_fsf_config.json)] [--max-objects N]\n"
     "       [--fsf-domain blocks|gripper|logistics|visitall (default: detected)]\n"
     "  Both: [--goals FILE (goal vectors [P, D])] [--states-out FILE.jsonl (the states' atoms, for\n"
     "       side-by-side runs)] [--repeat K (best of K timed passes)] [--quiet]"},
    {"embed", cmd_embed, "neural text embeddings (MiniLM / MPNet) of prompts and actions, cached",
     "nextstate embed DATASET_DIR [--model NAME|DIR] [--cache DIR] [--batch N] [--domains DIR] [--quiet] [--json]\n"
     "  Renders every state's prompt and every transition's action text, embeds the texts the cache lacks and\n"
     "  saves the cache (default DATASET_DIR/embeddings/MODEL): embeddings.npy [N, D] float32, keys.npy, manifest.json.\n"
     "nextstate embed texts FILE.jsonl [-o OUT.npy] [--cache DIR] [--model …] [--batch N] [--json]\n"
     "  One text a line (a JSON string or {\"text\": …}); OUT.npy gets their embeddings in file order.\n"
     "nextstate embed tokenize TEXT… [--model …] [--json]      (the model-input token ids)\n"
     "  --model: a model folder, or a name in $NEXTSTATE_MODELS or ~/.cache/nextstate/models (default\n"
     "  all-MiniLM-L6-v2; scripts/fetch_models.sh fetches it).  OPENBLAS_NUM_THREADS bounds the BLAS threads.\n"
     "  Import: a folder with embeddings.npy and index.jsonl (text → row) from any tool works as a cache\n"
     "  (see include/nextstate/embed.h)."},
    {"ground", cmd_ground, "ground a problem and report its size",
     "nextstate ground DOMAIN PROBLEM [--atoms] [--statics] [--operators] [--json]"},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: nextstate COMMAND [ARGS]\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-10s %s\n", "help", "help COMMAND shows a command's options");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return NS_ERR_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
        if (argc > 2)
            for (int i = 0; i < NCOMMANDS; i++)
                if (!strcmp(argv[2], commands[i].name)) {
                    printf("%s\n", commands[i].usage);
                    return 0;
                }
        usage(stdout);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++) {
        if (strcmp(name, commands[i].name) != 0) continue;
        for (int k = 2; k < argc; k++)
            if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
                printf("%s\n", commands[i].usage);
                return 0;
            }
        return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "nextstate: unknown command '%s'\n", name);
    usage(stderr);
    return NS_ERR_USAGE;
}
