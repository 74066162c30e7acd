#!/usr/bin/env bash
# The cross-rank report at CI size: 64 ranks (more than SQLite can attach together), one slow,
# summarized in parallel and merged; the full 1,024-rank benchmark is bench/multirank/.
. "$SRC/tests/ranks/lib.sh"

$GEN --world 64 --steps 8 --slow 37:4:4 "$TMP/job" > /dev/null
start=$(date +%s)
"$GPT" report -q -j 2 -f json -o "$TMP/scale.json" "$TMP"/job/rank-*.sqlite
echo "64 ranks reported in $(($(date +%s) - start)) s"
expect "64 ranks" "64" "$(json "$TMP/scale.json" 'len(d["ranks"])')"
expect "64 ranks: the straggler" "[(3, 37), (7, 37)]" \
	"$(json "$TMP/scale.json" '[(i["index"], i["straggler_rank"]) for i in d["iterations"] if i["straggler_rank"] >= 0]')"
expect "64 ranks: no note" "[]" "$(json "$TMP/scale.json" 'd["notes"]')"
finish
