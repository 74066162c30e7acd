#!/usr/bin/env bash
# Clocks: ranks of one host share its clock (each trace's time 0 is its own process start); a rank
# on another host whose wall clock is off by milliseconds is aligned by its anchor, then refined by
# the collectives' common ends back to the truth; stragglers are found either way.
. "$SRC/tests/ranks/lib.sh"

# 4 ranks; rank 3 on nodeB, whose wall clock runs 7 ms ahead; rank 2 is slow every 4th step
$GEN --world 4 --shift 3:7 --slow 2:3:4 "$TMP/shift" > /dev/null
"$GPT" report -q -f json -o "$TMP/shift.json" "$TMP"/shift/rank-*.sqlite
expect "shift: two hosts" "2" "$(json "$TMP/shift.json" 'd["hosts"]')"
# each process starts 100 us after the previous one: that is all its clock differs by
expect "shift: same host, the host clock" "[0, 100000, 200000]" \
	"$(json "$TMP/shift.json" '[r["clock_anchor_ns"] + r["clock_refine_ns"] for r in d["ranks"][:3]]')"
expect "shift: same host, nothing refined" "[0, 0, 0]" "$(json "$TMP/shift.json" '[r["clock_refine_ns"] for r in d["ranks"][:3]]')"
expect "shift: the anchor is 7 ms off" "7300000" "$(json "$TMP/shift.json" 'd["ranks"][3]["clock_anchor_ns"]')"
expect "shift: refined by -7 ms (within 1 us)" "True" \
	"$(json "$TMP/shift.json" 'abs(d["ranks"][3]["clock_refine_ns"] + 7000000) < 1000')"
expect "shift: straggler still rank 2" "[(3, 2), (7, 2), (11, 2)]" \
	"$(json "$TMP/shift.json" '[(i["index"], i["straggler_rank"]) for i in d["iterations"] if i["straggler_rank"] >= 0]')"
"$GPT" report -q "$TMP"/shift/rank-*.sqlite > "$TMP/shift.txt"
expect "shift: text reports the correction" "1" "$(grep -c 'rank 3 (nodeB): anchor +7.300 ms, refined by -7.000 ms' "$TMP/shift.txt")"

# a clock 40 ms behind: larger than an iteration, still refined
$GEN --world 2 --shift 1:-40 "$TMP/behind" > /dev/null
"$GPT" report -q -f json -o "$TMP/behind.json" "$TMP"/behind/rank-*.sqlite
expect "behind: refined by +40 ms (within 1 us)" "True" \
	"$(json "$TMP/behind.json" 'abs(d["ranks"][1]["clock_refine_ns"] - 40000000) < 1000')"
finish
