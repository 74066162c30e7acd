#!/usr/bin/env bash
# gpt-trace export of several ranks: one process per rank in rank order, the clocks aligned (the
# kernels of a collective end together on every rank, a rank on another host included), each
# collective's kernels linked rank to rank by flows, clean in Perfetto's importer
# (../shared/tools/perfetto-check); a truncated rank gets no dangling arrow.
. "$SRC/tests/ranks/lib.sh"

if ! command -v node > /dev/null || [ ! -x "$CHECKER" ]; then
	echo "skip: perfetto-check or node not found"
	exit 77
fi
check() {	# check TRACE SQL...: the checker's rows, or FAIL with its output
	"$CHECKER" "$@" > "$TMP/check.out" 2>&1 || { echo "FAIL perfetto-check $1"; sed 's/^/     /' "$TMP/check.out"; exit 1; }
	grep -v '^#\|^perfetto-check' "$TMP/check.out"
}
flow_stats="select count(*) from stats where value > 0 and name like '%flow%'"
ends="select max(abs((s2.ts + s2.dur) - (s1.ts + s1.dur))) from flow f join slice s1 on f.slice_out = s1.id join slice s2 on f.slice_in = s2.id"
same="select count(*) from flow f join slice s1 on f.slice_out = s1.id join slice s2 on f.slice_in = s2.id where s1.name != s2.name"
procs="select group_concat(name, '|') from (select name from process where name like 'rank %' order by name)"

$GEN --world 3 --shift 2:5 --slow 1:5:4 "$TMP/job" > /dev/null
expect "export: ranks" "wrote '$TMP/job/rank-0.ranks.json' (chrome json of 3 ranks)" "$("$GPT" export "$TMP"/job/rank-*.sqlite)"
out=$(check "$TMP/job/rank-0.ranks.json" "select count(*) from flow" "$flow_stats" "$ends" "$same" "$procs")
expect "export: flows, no flow problem, ends aligned, same collective, processes" \
	"$(printf 'count(*)\n144\ncount(*)\n0\nmax(abs((s2.ts + s2.dur) - (s1.ts + s1.dur)))\n0\ncount(*)\n0\ngroup_concat(name, '"'|'"')\nrank 0 (nodeA, pid 4000)|rank 1 (nodeA, pid 4001)|rank 2 (nodeB, pid 4002)')" "$out"

$GEN --world 3 --truncate 1:5 "$TMP/cut" > /dev/null
"$GPT" export -q -z -o "$TMP/cut.json.gz" "$TMP"/cut/rank-*.sqlite 2> "$TMP/cut.err"
expect "truncated rank: the note on stderr" "1" "$(grep -c "rank 1's trace is incomplete" "$TMP/cut.err")"
out=$(check "$TMP/cut.json.gz" "select count(*) from flow" "$flow_stats")
# rank 1 has 5 steps of 6 collectives: 30 collectives joined twice
expect "truncated rank: arrows only where every rank has the collective" \
	"$(printf 'count(*)\n60\ncount(*)\n0')" "$out"

"$GPT" export -q -o "$TMP/one.perfetto-trace" "$TMP/job/rank-0.sqlite"
out=$(check "$TMP/one.perfetto-trace" "select count(*) from process where name like 'rank %'")
expect "one trace: the single-trace timeline" "$(printf 'count(*)\n0')" "$out"
finish
