#!/bin/bash
# The report's findings on the timeline: exporting the CloverLeaf fixture (196 pageable copies in its
# steady state, a device sync after every kernel) puts exactly the findings `gpt-trace report` makes -
# the same rule, severity and message, judged on the steady state - as instant events on the
# "findings" track of the "gpt-trace findings" process, each with its rule, severity, message and fix
# as arguments; with --no-findings there is no such track. Both formats.
. "$(dirname "$0")/lib.sh"
need_checker

"$GPT" report -q -f json "$CLOVER" > "$TMP/report.json" || { echo "FAIL report on $CLOVER"; exit 1; }
python3 -c '
import json, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    print(f["rule"] + "\t" + f["severity"] + "\t" + f["message"])
' "$TMP/report.json" | sort > "$TMP/want"

arg() {
	echo "coalesce(extract_arg(s.arg_set_id, 'debug.$1'), extract_arg(s.arg_set_id, 'args.$1'))"
}
for fmt in perfetto chrome; do
	expect_ok "$fmt: export" "$GPT" export --format $fmt -o "$TMP/clover.$fmt" "$CLOVER"
	check "$TMP/clover.$fmt" \
		"select p.name, th.name, count(*) from slice s join thread_track tt on tt.id = s.track_id
			join thread th using(utid) join process p using(upid) where s.category = 'gpt-trace.finding'
			group by 1, 2" \
		"select $(arg rule), $(arg severity), s.name from slice s where s.category = 'gpt-trace.finding'
			order by 1, 2, 3" \
		"select count(*) from slice s where s.category = 'gpt-trace.finding' and (s.dur != 0
			or $(arg message) is not s.name or $(arg fix) is null or $(arg 'recoverable ms') is null)" \
		"select count(*) from slice s where s.category = 'gpt-trace.finding' and $(arg rule) = 'pageable-memcpy'" \
		> "$TMP/got"
	n=$(block "$TMP/got" 1 | tail -n +2 | cut -f3)
	expect "$fmt: findings track" "gpt-trace findings	findings	$n" "$(block "$TMP/got" 1 | tail -n +2)"
	expect "$fmt: the report's findings, at least four" "yes" "$([ "$(wc -l < "$TMP/want")" -ge 4 ] && echo yes)"
	expect "$fmt: the report's findings" "$(cat "$TMP/want")" "$(block "$TMP/got" 2 | tail -n +2 | sort)"
	expect "$fmt: every finding an instant with message, fix, recoverable time" 0 \
		"$(block "$TMP/got" 3 | tail -n +2)"
	expect "$fmt: pageable copies found" 1 "$(block "$TMP/got" 4 | tail -n +2)"

	expect_ok "$fmt --no-findings: export" "$GPT" export --no-findings --format $fmt -o "$TMP/none.$fmt" "$CLOVER"
	expect "$fmt --no-findings: no findings" "0	0" "$(check "$TMP/none.$fmt" \
		"select count(*), (select count(*) from process where name = 'gpt-trace findings') from slice
			where category = 'gpt-trace.finding'" | tail -n 1)"
done
finish
