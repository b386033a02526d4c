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
# embedding with either layout: different texts, so different rows
expect_exit 0 "$NS" embed "$TMP/ferry" --model "$MODEL" --cache "$TMP/cache" --states-out "$TMP/s1.npy" --quiet
expect_exit 0 "$NS" embed "$TMP/ferry" --model "$MODEL" --cache "$TMP/cache" --states-out "$TMP/s2.npy" --layout state-first --quiet
! cmp -s "$TMP/s1.npy" "$TMP/s2.npy" || fail "state-first embeddings equal the paper layout's"
# chunks: every piece is read, its own cache (another encoder), other rows
expect_exit 0 "$NS" embed "$TMP/ferry" --model "$MODEL" --chunks --states-out "$TMP/s3.npy" --json
grep -q '"model": "tiny-bert"' "$TMP/out" || fail "embed --json: $(cat "$TMP/out")"
[ -f "$TMP/ferry/embeddings/tiny-bert+chunks/embeddings.npy" ] || fail "chunked cache not in embeddings/tiny-bert+chunks"
! cmp -s "$TMP/s1.npy" "$TMP/s3.npy" || fail "chunked embeddings equal the truncated ones"
expect_exit 31 "$NS" embed "$TMP/ferry" --model "$MODEL" --chunks --cache "$TMP/cache"
grep -q "another model" "$TMP/err" || fail "a truncating cache takes chunked rows: $(cat "$TMP/err")"
echo ok
