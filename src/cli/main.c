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
    {"solve", cmd_solve, "find a plan (bfs, astar, gbfs, lazy, lama)",
     "nextstate solve DOMAIN PROBLEM [--search bfs|astar|gbfs|lazy|lama] [--heuristic blind|hmax|hadd|ff|lmcut]\n"
     "                [--time-limit SECONDS] [--memory-limit MB] [--plan-file FILE] [--json]\n"
     "  Default: --search astar --heuristic lmcut (optimal).  gbfs defaults to ff, with preferred operators (helpful actions\n"
     "  in a boosted second open list; --no-preferred turns them off).  lama is LAMA-first: lazy GBFS over h^FF and the\n"
     "  landmark count, four open lists.  --eliminate drops redundant steps (greedy).  The plan goes to FILE or stdout.\n"
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
     "                     [--plans K] [--seed S] [--time-limit S] [--successors] [--quiet]\n"
     "  optimal (default): the optimal-plan DAG of every problem; full: every reachable state.  --max-states caps the states\n"
     "  explored per problem (default 1000000); --plans draws K distinct optimal plans per problem (default 16); --successors\n"
     "  adds, for every kept state, the transitions of all its applicable actions (off-plan successors get g = -1, h* = -2).\n"
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
     "nextstate encode DATASET_DIR --encoder wl|fsf -o OUT.npy|OUT [options]\n"
     "nextstate encode --plans DOMAIN PROBLEMS_DIR PLANS_DIR --encoder wl|fsf -o OUTDIR [options]\n"
     "  Dataset mode writes one row per state (dataset order): OUT.npy float32 [N, D], or for any other OUT\n"
     "  (or with --sparse) the CSR files OUT_{indptr,indices,values,shape}.npy — both are feature specs of\n"
     "  `nextstate train` (OUT.npy / OUT).  Problems are re-grounded\n"
     "  from the manifest's file paths.  --plans rebuilds s_0..s_T of every PROBLEMS_DIR/X.pddl that has\n"
     "  PLANS_DIR/X.plan and writes OUTDIR/X.npy [T+1, D] and OUTDIR/X_goal.npy [D], as the paper did.\n"
     "  WL:  --vocab FILE (WLPlan JSON, e.g. the paper's <domain>_wl.json; either key spelling)\n"
     "       | --fit (on the encoded states) | --fit-on DATASET_DIR (on another dataset's states)\n"
     "       | --fit-on SPLIT_DIR (on the states of the split's training transitions of this dataset)\n"
     "       [--fit-goals] [--vocab-out FILE (default OUT.vocab.json)] [--key-format flat|triples]\n"
     "       [--iterations L (fit default 2)] [--set (set hashing; default multiset)]\n"
     "       [--statics in|out (default in: the paper's training setting; its inference dropped them)]\n"
     "       [--actions SPEC (lifted action encodings of every (state, applicable action) pair, rows in\n"
     "        the dataset's applicable_ops order: schema one-hot + WL colours of each argument in the state,\n"
     "        width S + A*D; CSR unless SPEC ends in .npy; SPEC.rows.json marks them as state-action rows\n"
     "        for `nextstate train --action-features SPEC`)]\n"
     "  FSF: [--fsf-config FILE (the paper's <domain>_fsf_config.json)] [--max-objects N]\n"
     "       [--fsf-domain blocks|gripper|logistics|visitall (default: detected)]\n"
     "  Both: [--goals FILE (goal vectors [P, D])] [--states-out FILE.jsonl (the states' atoms, for\n"
     "       side-by-side runs)] [--repeat K (best of K timed passes)] [--quiet]"},
    {"embed", cmd_embed, "neural text embeddings (MiniLM / MPNet) of prompts and actions, cached",
     "nextstate embed DATASET_DIR [--model NAME|DIR] [--cache DIR] [--batch N] [--domains DIR] [--quiet] [--json]\n"
     "                [--states-out S.npy] [--actions-out A.npy] [--layout paper|state-first] [--chunks|--truncate]\n"
     "                [--shuffle-facts SEED] [--threads N (default: $OPENBLAS_NUM_THREADS, else every core)]\n"
     "  Renders every state's prompt and every action's text, embeds the texts the cache lacks and\n"
     "  saves the cache (default DATASET_DIR/embeddings/MODEL: embeddings.npy, keys.npy, manifest.json) at the end\n"
     "  and every --save-every S (600) while it grows, so a killed run resumes where the last save left it.\n"
     "  --states-out / --actions-out also write row-aligned float32 matrices (rows = global state ids /\n"
     "  global action ids = action_offset[problem] + operator) for `nextstate train --state-features`.\n"
     "  --layout: paper (default, the exact EmbedPlan prompt) or state-first (the CURRENT STATE block first,\n"
     "  then the problem and goal blocks: a model that truncates — MiniLM reads 256 word pieces — keeps the state).\n"
     "  --chunks: no truncation, a text embedded as the mean of its windows of max_seq_length − 2 word pieces (its\n"
     "  own encoder: cache MODEL+chunks), the default when any text exceeds the window; --truncate: the first only.\n"
     "  --shuffle-facts SEED: each state's CURRENT STATE clauses in a random order (seeded per state by SEED and\n"
     "  its id; problem and goal text untouched): the paper's fact-order sensitivity (appendix N).\n"
     "nextstate embed stats DATASET_DIR… [--model …] [--layout …] [--json]\n"
     "  Word pieces per state prompt against the model's max_seq_length: how many prompts are truncated,\n"
     "  where the CURRENT STATE block starts, how many states lose part or all of it, and how many become\n"
     "  indistinguishable (same truncated model input as another state of their problem).\n"
     "nextstate embed texts FILE.jsonl [-o OUT.npy] [--cache DIR] [--model …] [--batch N] [--json]\n"
     "  One text a line (a JSON string or {\"text\": …}); OUT.npy gets their embeddings in file order.\n"
     "nextstate embed tokenize TEXT… [--model …] [--json]      (the model-input token ids)\n"
     "  --model: a model folder, or a name in $NEXTSTATE_MODELS or ~/.cache/nextstate/models (default\n"
     "  all-MiniLM-L6-v2; scripts/fetch_models.sh fetches it).  OPENBLAS_NUM_THREADS bounds the BLAS threads.\n"
     "  Embeddings made elsewhere, no model read: --texts-out T.jsonl lists the texts (states, then actions);\n"
     "  their rows in DIR/embeddings.npy beside T.jsonl as DIR/index.jsonl: --import DIR (encode/embed.h)."},
    {"train", cmd_train, "train the EmbedPlan world model on a split", cli_train_usage},
    {"eval", cmd_eval, "Hit@k, Acc@k and latency of a trained world model",
     "nextstate eval SPLIT_DIR MODEL [--on test|dev] [--state-features SPEC] [--action-features SPEC]\n"
     "               [--query-features SPEC]\n"
     "               [--seed S] [--no-acc] [--latency N] [--pool-sweep N,N,…,full] [--rollout]\n"
     "               [--rollout-pool N] [--bf16|--int8|--int4] [--json] [--quiet]\n"
     "  Ranks each test transition's pool by cosine to the prediction: Hit@1/5/10 with random (seeded) and\n"
     "  worst-case tie-breaking; Acc@1/5/10 of the true action among every applicable action; latency per\n"
     "  query (a) heads + T + 128-way scoring, (b) T + scoring, over N queries (default 200; 0: none).\n"
     "  Plans (when the datasets hold sampled plans): the plans whose every step is in the list, each step\n"
     "  teacher-forced and ranked in its transition's pool — per-step Hit@1/5, mean over plans of the\n"
     "  per-step Hit@5, and exact trajectory Hit@5 (every step a Hit@5); JSON \"plans\".\n"
     "  --pool-sweep: Hit@1/5/10 and MRR in fresh pools of each size N (drawn as the protocol draws them,\n"
     "  keyed by --seed); full = every state of the query's dataset (interpolation, cross-domain,\n"
     "  leave-one-out) or problem (extrapolation, multi-domain, plan-variant); JSON \"pool_sweep\".\n"
     "  --rollout: closed-loop rollout along the maximal runs of plan steps in the list (distinct runs),\n"
     "  by depth: Hit@1/5 when the next step's state input is the true state (teacher), the previous\n"
     "  step's top-1 retrieved state (snapped) or its raw prediction (unsnapped); retention = regime ÷\n"
     "  teacher Hit@1; drift = mean cosine of the unsnapped prediction to its nearest pool candidate.\n"
     "  Pools: each step transition's pool, or fresh pools of N with --rollout-pool N (implies --rollout;\n"
     "  the paper uses 1000 under interpolation); JSON \"rollout\".\n"
     "  --bf16: the projection heads' and the residual-MLP T's dense layers compute with bfloat16 weights\n"
     "  and inputs (float sums): half the weight bytes, so a batch-1 query's weights fit in a core's L2;\n"
     "  every number then comes from that mode (JSON \"weights\": \"bfloat16\"; the split T stays float).\n"
     "  --int8: the same layers in int8 (per-row scales; inputs quantised per row; exact int32 sums); --int4:\n"
     "  the heads' layers 64·k inputs wide in int4 (a scale per 64 inputs) (JSON \"weights\": \"int8\"/\"int4\").\n"
     "  Splits over several datasets (cross-domain, leave-one-out, multi-domain) also get each dataset's\n"
     "  share of the list on its own: JSON \"per_dataset\" (null where the list has none of it), a table.\n"
     "  By cost to go (always): Hit@1/5 per h* of the query state (its optimal distance to the goal; JSON\n"
     "  \"cost_to_go\"); misses: for each query whose truth is not top-1 (and each not in the top 5), how many\n"
     "  facts the top-1 state differs by from the true next state (symmetric difference of their literals;\n"
     "  median, IQR, histogram; JSON \"misses\").\n"
     "  --query-features SPEC: the query states' inputs from SPEC (same rows and width, e.g. `embed\n"
     "  --shuffle-facts` rows), the candidates' from the model's features: Hit@k under another rendering.\n"
     "  Features default to what the checkpoint was trained with."},
    {"reference", cmd_reference, "non-learned reference methods (identity, offset, lifted STRIPS) on a split",
     "nextstate reference SPLIT_DIR --method identity|offset-action|offset-schema|strips [--on test|dev]\n"
     "                    [--state-features builtin|SPEC[,SPEC…]] [--seed S] [--json]\n"
     "  identity: the current state's features; offset-action / offset-schema: plus the mean training\n"
     "  displacement of the ground action / schema (unseen: the global mean); ranked by cosine.  strips:\n"
     "  lifted add/delete effects induced per schema from the training transitions, applied to the state's\n"
     "  atoms, candidates ranked by Jaccard similarity of atom sets (unseen schema: a miss).  Same Hit@k\n"
     "  fields as `nextstate eval` (random and worst-case ties); --json adds schemas and disagreements."},
    {"learn", cmd_learn, "train a next-state model (LSTM / XGBoost on WL / FSF) or a learned WL heuristic on expert plans",
     "nextstate learn DOMAIN TRAIN_PROBLEMS_DIR -o MODEL [--plans DIR | --save-plans DIR] [--val DIR [--val-plans DIR]]\n"
     "                [--model hwl|lstm|xgb] [--encoder wl|fsf] [--mode state|delta] [--seed S] [--json] [--quiet] [--jobs N]\n"
     "                [--iterations L] [--statics in|out] [--max-objects N]            (encoder)\n"
     "                [--epochs N] [--hidden H] [--layers L] [--lr X] [--batch B]         (LSTM)\n"
     "                [--rounds N] [--depth D] [--threads T]                              (XGBoost)\n"
     "                [--lambda X] [--rank K] [--rank-weight X] [--choose N] [--choose-budget E] [--bootstrap] (hwl)\n"
     "                [--solve-work W] [--solve-time-limit S] [--solve-memory-limit MB] [--optimal-only]  (solving)\n"
     "  Default (hwl, the best learned planner we have): h(s) = w . phi(s) + b on WL features of state and goal, ridge\n"
     "  regression (--lambda 1) of the cost-to-go along the training plans (WL-GOOSE), plus a ranking term: a plan step looks\n"
     "  >= 1 better than K siblings (--rank 4; 0: off; squared hinge x --rank-weight 1; none above 8191 features).  On\n"
     "  held-out training problems, the N largest and N of the larger half (--choose 8; 0: lama), h^FF's ties (the last\n"
     "  equally cheap supporter if LAMA-first needs 20 % fewer evaluations), then `plan`'s search (lama, guided, lama-h,\n"
     "  search) and WL iterations (2 or 4; --iterations) are chosen: most solved in E evaluations (--choose-budget 100000),\n"
     "  then 5 % fewer.  lstm, xgb: the first paper's progress models: inputs [phi(s_t), phi(g)], targets phi(s_t+1) (state\n"
     "  mode, 1 - cosine) or the change (delta mode, squared error).  Trajectories follow DIR/X.plan for every problem X.pddl\n"
     "  of the folder that has one (--plans), else an optimal plan found by A*-LM-cut within --solve-work W steps of\n"
     "  heuristic work (default 1e9, a few CPU s: a budget, so the plans and the model are the same on every machine;\n"
     "  --solve-time-limit S, default 60, a safety cap, said on stderr when it stops a search first; --solve-memory-limit MB,\n"
     "  default 4096; --jobs N at once, default: the CPUs the memory allows); past them GBFS-h^FF's plan in the same limits,\n"
     "  shortened by plan neighbourhood search (a budget of work too); a problem neither solves is skipped (said on stderr;\n"
     "  --optimal-only: both are errors); --bootstrap: hwl plans those with its h in the same limits, learns again with them,\n"
     "  keeps that when it chooses better.  --save-plans DIR keeps the plans for --plans (GBFS's as found in DIR/raw).  WL\n"
     "  vocabulary: fitted on the training states (2 iterations, statics in); FSF slots: the largest training/validation\n"
     "  problem's.  Defaults as the paper: wl, 2 x 256, state, Adam lr 1e-2, 500 epochs, batch 32, seed 13; XGBoost depth 8,\n"
     "  eta 0.1, up to 1000 rounds, early stopping after 10 on validation; the file keeps the LSTM epoch or XGBoost round of\n"
     "  least validation loss."},
    {"plan", cmd_plan, "plan with a learned next-state model (beam decoding or model-guided search)",
     "nextstate plan --model MODEL DOMAIN PROBLEM|FOLDER… [--algo beam|restart|search|guided|lama|lama-h] [--prefer M]\n"
     "      [--width W] [--max-steps N] [--time-limit S] [--memory-limit MB] [--fallback F] [--plan-file F|--plan-dir D] [--json]\n"
     "  Moves only along valid successors; the model ranks them by the distance between each successor's encoding\n"
     "  and its prediction (cosine in state mode, L2 in delta mode).  beam (default): the paper's decoder, width 3,\n"
     "  no revisits on a path, step cap max(100, 10 x objects).  restart: beams 4x wider until solved.  search:\n"
     "  best-first over states keyed by summed regret (a successor's cost minus the best sibling's), complete on\n"
     "  finite tasks.  guided: GBFS with h^FF preferring the model's choice among FF's helpful actions (XGBoost).\n"
     "  With a learned heuristic (hwl) model, the default is the model's own choice (made by `learn`; else lama):\n"
     "  lama: LAMA-first's lazy search with h beside h^FF and the landmark count h^LM, h^FF's helpful actions\n"
     "  preferred; lama-h: h in h^FF's place; guided: GBFS on h with FF's helpful actions preferred in a second\n"
     "  queue (--prefer M: only those next-state model M picks); search: GBFS on h alone.  --time-limit S: CPU s\n"
     "  (one problem: from the start, the model's loading included); its last share F (0.2; 0: none; all of it\n"
     "  after --memory-limit MB of search data) goes to LAMA-first without h if h's search found no plan.  Plans\n"
     "  are checked and shortened (action elimination, then the cheapest path near the plan; --raw-plan: as found).\n"
     "  Exit: 0 solved; 10 search exhausted; 11 beam gave up; 23 out of time; 31 a bad model or a problem it cannot encode."},
    {"featurize", cmd_featurize, "text and literal features (bag of literals/words, TF-IDF, char n-grams, random, one-hot)",
     "nextstate featurize DATASET_DIR --kind literals|bow|tfidf|char|random|context|onehot -o OUTDIR\n"
     "                    [--fit-on SPLIT_DIR | --vocab FILE | --fit-all] [--what states|actions]\n"
     "  Fits on the states (or actions) of the split's training transitions only (--fit-on), reuses a fitted\n"
     "  featurizer (--vocab OUTDIR/featurizer.json), or fits on the whole dataset (--fit-all: test included).\n"
     "  States: one row per dataset state; texts are the EmbedPlan prompts (tfidf, char, bow, random), the\n"
     "  prompt with the CURRENT STATE block emptied (context), or the true literals (literals, onehot).\n"
     "  Actions: one row per (problem, operator), the grounded text \"(board c1 l1)\"; action_offsets.npy and\n"
     "  transition_action.npy map transitions to rows.\n"
     "  Writes OUTDIR/{states|actions}.npy (dense: random, SVD) or {states|actions}_{indptr,indices,values,shape}.npy\n"
     "  (CSR), featurizer.json (+ featurizer.svd.npy) and features.json (files with sizes and CRC-32).\n"
     "  tfidf/char: scikit-learn TfidfVectorizer(sublinear_tf) semantics, words [a-z0-9_-]+ 1-2-grams or\n"
     "  characters 3-5-grams, min_df 2 (states) / 1 (actions), L2 rows, truncated SVD to 1024 when larger.\n"
     "  Options: [--min-df N] [--svd-dim N (0: none)] [--svd-iters N (5)] [--svd-max-rows N (0: all)]\n"
     "           [--dim N (random, 512)] [--seed S] [--context-kind tfidf|bow] [--source prompt|context|literals]\n"
     "           [--onehot-unknown (reserve a column for unseen states)] [--domains DIR] [--quiet]\n"
     "nextstate featurize pca SPEC… -o COORDS.npy [--components K (2)] [--seed S (1)] [--json]\n"
     "  Principal components of feature rows (dense .npy or CSR prefix; several SPECs are stacked in order and\n"
     "  must share one space, e.g. each domain's text embeddings): COORDS.npy gets each row's coordinates,\n"
     "  float32 [N, K]; stdout the variance each component explains (--json: rows per SPEC too)."},
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
    cli_blas_threads(argv);
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
