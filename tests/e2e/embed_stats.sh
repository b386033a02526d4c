# `embed stats`: word pieces per state prompt against the model's maximum
# length, with the tiny test model (max_seq_length 16): under the paper's
# prompt the CURRENT STATE block starts past the limit and is lost for every
# state; the state-first layout holds the same text (same token counts) and
# starts it right after the header; `embed --layout` embeds that text, and
# `embed --chunks` (mean of window embeddings) is a cache of its own.
. "$(dirname "$0")/lib.bash"
MODEL=tests/fixtures/bert/tiny-bert
mkdir -p "$TMP/fp"
for s in 1 2 3; do expect_exit 0 "$NS" gen ferry --seed $s --cars 2 -o "$TMP/fp/p$s.pddl"; done
expect_exit 0 "$NS" data build domains/ferry/domain.pddl "$TMP/fp" -o "$TMP/ferry" --quiet
get() { grep -oE "\"$1\": [0-9.]+" "$2" | head -n 1 | grep -oE '[0-9.]+$'; }
expect_exit 0 "$NS" embed stats "$TMP/ferry" --model "$MODEL" --json
cp "$TMP/out" "$TMP/paper.json"
expect_exit 0 "$NS" embed stats "$TMP/ferry" --model "$MODEL" --layout state-first --json
cp "$TMP/out" "$TMP/first.json"
[ "$(get max_seq_length "$TMP/paper.json")" = 16 ] || fail "max_seq_length: $(cat "$TMP/paper.json")"
[ "$(get state_lost "$TMP/paper.json")" = 1.000000 ] || fail "paper layout: the state block should be lost: $(cat "$TMP/paper.json")"
[ "$(get state_start_median "$TMP/paper.json")" -gt 16 ] || fail "paper layout: state start $(cat "$TMP/paper.json")"
[ "$(get state_lost "$TMP/first.json")" = 0.000000 ] || fail "state-first: state lost $(cat "$TMP/first.json")"
[ "$(get state_start_median "$TMP/first.json")" -lt 16 ] || fail "state-first: state start $(cat "$TMP/first.json")"
# the same blocks: the same word-piece counts
for k in min median max state_tokens_median; do
    [ "$(get $k "$TMP/paper.json")" = "$(get $k "$TMP/first.json")" ] || fail "$k differs between layouts"
done
expect_exit 0 "$NS" embed stats "$TMP/ferry" --model "$MODEL"
grep -q "merged" "$TMP/out" || fail "stats table: $(cat "$TMP/out")"
expect_exit 30 "$NS" embed stats "$TMP/ferry" --model "$MODEL" --layout goal-first
expect_exit 30 "$NS" embed stats --model "$MODEL"
# embedding with either layout: different texts, so different rows (--truncate: the first window only,
# said on stderr with the count of texts cut)
expect_exit 0 "$NS" embed "$TMP/ferry" --model "$MODEL" --cache "$TMP/cache" --states-out "$TMP/s1.npy" --quiet --truncate
grep -qE "[0-9]+ of [0-9]+ texts exceed tiny-bert's window of 16 word pieces: truncated" "$TMP/err" ||
    fail "--truncate does not say what it cut: $(cat "$TMP/err")"
expect_exit 0 "$NS" embed "$TMP/ferry" --model "$MODEL" --cache "$TMP/cache" --states-out "$TMP/s2.npy" --layout state-first --quiet --truncate
expect_exit 30 "$NS" embed "$TMP/ferry" --model "$MODEL" --chunks --truncate
! cmp -s "$TMP/s1.npy" "$TMP/s2.npy" || fail "state-first embeddings equal the paper layout's"
# chunks: every piece is read, its own cache (another encoder), other rows
expect_exit 0 "$NS" embed "$TMP/ferry" --model "$MODEL" --chunks --states-out "$TMP/s3.npy" --json
grep -q '"model": "tiny-bert"' "$TMP/out" || fail "embed --json: $(cat "$TMP/out")"
[ -f "$TMP/ferry/embeddings/tiny-bert+chunks/embeddings.npy" ] || fail "chunked cache not in embeddings/tiny-bert+chunks"
! cmp -s "$TMP/s1.npy" "$TMP/s3.npy" || fail "chunked embeddings equal the truncated ones"
expect_exit 31 "$NS" embed "$TMP/ferry" --model "$MODEL" --chunks --cache "$TMP/cache"
grep -q "^nextstate: $TMP/cache: the embedding cache was made by another model" "$TMP/err" || fail "a truncating cache takes chunked rows (or the error does not name it): $(cat "$TMP/err")"
# the default never truncates silently: prompts beyond the window are chunked, and stderr counts them;
# the rows are those of --chunks
expect_exit 0 "$NS" embed "$TMP/ferry" --model "$MODEL" --cache "$TMP/cache-auto" --states-out "$TMP/s4.npy" --quiet
n=$(grep -oE "[0-9]+ of [0-9]+ texts exceed tiny-bert's window of 16 word pieces: chunked" "$TMP/err" | grep -oE "^[0-9]+")
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "default embed does not say it chunked: $(cat "$TMP/err")"
cmp -s "$TMP/s3.npy" "$TMP/s4.npy" || fail "default (chunked) rows differ from --chunks"
# the default directory cache of a chunked run is the +chunks one
expect_exit 0 "$NS" embed "$TMP/ferry" --model "$MODEL" --quiet
[ -f "$TMP/ferry/embeddings/tiny-bert+chunks/embeddings.npy" ] || fail "default run: no +chunks cache"
# a truncated cache file is named with what was expected
cp -r "$TMP/cache-auto" "$TMP/cache-cut"
f="$TMP/cache-cut/embeddings.npy"
head -c $(($(stat -c %s "$f") / 2)) "$f" >"$TMP/half" && mv "$TMP/half" "$f"
expect_exit 31 "$NS" embed "$TMP/ferry" --model "$MODEL" --cache "$TMP/cache-cut" --quiet
grep -q "embeddings.npy: truncated: expected" "$TMP/err" || fail "truncated cache: $(cat "$TMP/err")"
# train standardises dense (embedding) inputs by default, never sparse (builtin) ones; recorded in the checkpoint
expect_exit 0 "$NS" split interpolation "$TMP/ferry" -o "$TMP/sp" --pool-size 8 --seed 1
expect_exit 0 "$NS" train "$TMP/sp" -o "$TMP/d.ckpt" --state-features "$TMP/s4.npy" --epochs 1 --json --quiet
grep -q '"standardize": "state"' "$TMP/out" || fail "dense states, builtin actions: $(cat "$TMP/out")"
expect_exit 0 "$NS" train "$TMP/sp" -o "$TMP/n.ckpt" --state-features "$TMP/s4.npy" --standardize none --epochs 1 --json --quiet
grep -q '"standardize": "none"' "$TMP/out" || fail "--standardize none: $(cat "$TMP/out")"
expect_exit 0 "$NS" train "$TMP/sp" -o "$TMP/b.ckpt" --epochs 1 --json --quiet
grep -q '"standardize": "none"' "$TMP/out" || fail "builtin inputs standardised: $(cat "$TMP/out")"
expect_exit 30 "$NS" train "$TMP/sp" -o "$TMP/x.ckpt" --standardize sideways --epochs 1
echo ok
# the prompt templates are found from any working folder (beside the executable: the repository's
# domains), and a folder that is not there is named in the error
MODEL_ABS=$(realpath "$MODEL") DS_ABS=$(realpath "$TMP/ferry") NS_ABS=$(realpath "$NS")
(cd "$TMP" && "$NS_ABS" embed stats "$DS_ABS" --model "$MODEL_ABS" --json >"$TMP/elsewhere.json" 2>"$TMP/elsewhere.err") ||
    fail "embed stats outside the repository: $(cat "$TMP/elsewhere.err")"
cmp -s "$TMP/elsewhere.json" "$TMP/paper.json" || fail "embed stats outside the repository differs"
NEXTSTATE_DOMAINS="$TMP/no-such-folder" expect_exit 32 "$NS" embed stats "$TMP/ferry" --model "$MODEL"
grep -q "no-such-folder: cannot open the prompt templates' folder" "$TMP/err" || fail "missing templates: $(cat "$TMP/err")"
[ ! -s "$TMP/out" ] || fail "a table header before the error: $(cat "$TMP/out")"
