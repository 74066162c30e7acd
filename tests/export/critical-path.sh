#!/bin/bash
# The steady state's critical path as its own track (issue 41): on the two-bottleneck trace of
# tests/fixtures/gpu/what-if, both formats, imported by Perfetto's trace processor: the track's
# slices per part add up to the critical path of gpt-trace report's JSON (what_if[0].recorded), in
# time order without overlap; a trace without steady iterations gets no such track.
. "$SRC/tests/export/lib.sh"
need_checker
command -v xz >/dev/null || { echo "skip: xz is needed"; exit 77; }
xz -dc "$SRC/tests/fixtures/gpu/what-if/two_fixes-bad.sqlite.xz" > "$TMP/t.sqlite"
"$GPT" report -q -f json -o "$TMP/t.json" "$TMP/t.sqlite" || { echo "FAIL report"; exit 1; }
want=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["what_if"][0]["recorded"]["critical_path_ns"]
names = {"host": "host", "compute": "compute", "comm": "communication", "copy": "copies", "launch": "launch and queue"}
print("\n".join("%s\t%d" % (names[k], v) for k, v in sorted(d.items(), key=lambda kv: names[kv[0]]) if v))' "$TMP/t.json")
for fmt in perfetto chrome; do
	"$GPT" export -q -f "$fmt" -o "$TMP/t.$fmt" "$TMP/t.sqlite" > /dev/null || { echo "FAIL export $fmt"; exit 1; }
	got=$("$CHECKER" "$TMP/t.$fmt" "select name, sum(dur) from slice where category = 'gpt-trace.critical-path' group by name order by name" 2>/dev/null |
		awk -F'\t' 'seen && NF == 2 { print } /^name\t/ { seen = 1 }')
	expect "$fmt: the critical path track adds up to the report's" "$want" "$got"
	expect "$fmt: its slices follow each other" "0" "$("$CHECKER" "$TMP/t.$fmt" "select count(*) from slice a join slice b on b.track_id = a.track_id and b.ts > a.ts and b.ts < a.ts + a.dur where a.category = 'gpt-trace.critical-path'" |
		sed -n '/^count(\*)/{n;p}')"
done
"$GPT" export -q -o "$TMP/h.perfetto" "$H200" > /dev/null
expect "a trace without steady iterations: no critical path track" "0" \
	"$("$CHECKER" "$TMP/h.perfetto" "select count(*) from slice where category = 'gpt-trace.critical-path'" | sed -n '/^count(\*)/{n;p}')"
finish
