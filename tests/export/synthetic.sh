#!/bin/bash
# Export the synthetic trace (data/timeline.sql) in every format and compare what Perfetto's importer
# sees with expected/synthetic.txt: the same text for Perfetto protobuf, Chrome JSON and both
# gzipped, so the formats agree with each other and with the hand-computed expectation. Then two
# traces of one job in one export (data/second.sql: a second process on GPU 0).
. "$(dirname "$0")/lib.sh"
need_checker

make_trace "$TMP/t.sqlite" "$DATA/timeline.sql"
Q_BUSY="select ct.name, c.ts - (select min(ts) from slice) as ts, printf('%.6g', c.value) as value
	from counter c join counter_track ct on ct.id = c.track_id where ct.name like 'GPU _ %'
	and (ct.name like '%busy%' or c.value != 0 or c.ts = (select max(ts) from counter where track_id = ct.id))
	order by 1, 2"

for variant in perfetto perfetto-gzip chrome chrome-gzip; do
	case $variant in
	perfetto) args=(); out=t.perfetto-trace ;;
	perfetto-gzip) args=(--gzip); out=t.perfetto-trace.gz ;;
	chrome) args=(--format chrome); out=t.json ;;
	chrome-gzip) args=(--format chrome --gzip); out=t.json.gz ;;
	esac
	# No -o: the output name comes from the input's.
	expect_ok "$variant: export" "$GPT" export --no-findings "${args[@]}" "$TMP/t.sqlite"
	expect "$variant: output name" "wrote '$TMP/$out'" "$(cut -d' ' -f1-2 "$TMP/out")"
	case $variant in
	*gzip) expect "$variant: gzip magic" "1f8b" "$(head -c2 "$TMP/$out" | od -An -tx1 | tr -d ' \n')" ;;
	esac
	if [ "$variant" = chrome ]; then
		expect "chrome: strict JSON" "ok" \
			"$(python3 -c 'import json,sys; json.load(open(sys.argv[1])); print("ok")' "$TMP/$out" 2>&1)"
	fi
	check "$TMP/$out" "$Q_PROCESSES" "$Q_TRACKS" "$Q_SLICES" "$Q_FLOWS" "$Q_ARGS" "$Q_COUNTERS" "$Q_BUSY" \
		> "$TMP/$variant.txt"
	expect "$variant: timeline" "$(cat "$EXPECTED/synthetic.txt")" "$(cat "$TMP/$variant.txt")"
done

# Track order. Chrome JSON carries sort indices (Perfetto reads them as *_sort_index_hint); the
# Perfetto protobuf orders a process's child tracks by sibling_order_rank.
check "$TMP/t.json" "select p.pid, p.name, a.display_value from process p join args a using(arg_set_id)
	where a.key = 'process_sort_index_hint' order by 3" \
	"select p.name, t.name, a.display_value from thread t join process p using(upid)
	join args a on a.arg_set_id = t.arg_set_id where a.key = 'thread_sort_index_hint' order by 1, 3, 2" \
	> "$TMP/order-chrome.txt"
expect "chrome: track order" "$(cat "$EXPECTED/order-chrome.txt")" "$(cat "$TMP/order-chrome.txt")"
check "$TMP/t.perfetto-trace" "select t.name, cast(a.display_value as int) as rank from track t
	join args a on a.arg_set_id = t.source_arg_set_id where a.key = 'sibling_order_rank' order by 2, 1" \
	> "$TMP/order-perfetto.txt"
expect "perfetto: track order" "$(cat "$EXPECTED/order-perfetto.txt")" "$(cat "$TMP/order-perfetto.txt")"

# Two traces of one job: a second process shares GPU 0's stream 7.
make_trace "$TMP/u.sqlite" "$DATA/second.sql"
for fmt in perfetto chrome; do
	expect_ok "two traces, $fmt: export" "$GPT" export --no-findings --format $fmt \
		-o "$TMP/two.$fmt" "$TMP/t.sqlite" "$TMP/u.sqlite"
	check "$TMP/two.$fmt" "$Q_PROCESSES" "$Q_TRACKS" "select count(*) from flow" > "$TMP/two-$fmt.txt"
	expect "two traces, $fmt: timeline" "$(cat "$EXPECTED/two-traces.txt")" "$(cat "$TMP/two-$fmt.txt")"
done

# An empty trace (schema only) is a valid, empty timeline.
make_trace "$TMP/empty.sqlite"
for fmt in perfetto chrome; do
	expect_ok "empty trace, $fmt: export" "$GPT" export --no-findings --format $fmt -o "$TMP/empty.$fmt" \
		"$TMP/empty.sqlite"
	expect "empty trace, $fmt: no slices" "$(printf '# select count(*) from slice\ncount(*)\n0')" \
		"$(check "$TMP/empty.$fmt" "select count(*) from slice")"
done
finish
