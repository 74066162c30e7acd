#!/bin/bash
# The cross-rank report on the real two-GPU DDP traces of tests/fixtures/gpu/ddp (recorded by
# tests/gpu/multirank.sh on 2 H100s; see their README): its checks replayed with -R, and every one
# must pass: the straggler on all slow steps of the slow variants, none on the clean ones (DDP's
# bucket rebuild at the second step is warm-up), the exposed communication.
. "$(dirname "$0")/lib.sh"

out=$(bash "$SRC/tests/gpu/multirank.sh" -b "$BIN/.." -w "$TMP/work" -R "$SRC/tests/fixtures/gpu/ddp" 2>&1)
for want in "slow-overlapped: straggler rank 1 on steps 4, 9, ... within 20% of 50 ms" \
	"slow-overlapped: the straggler finding names rank 1" \
	"slow-exposed: straggler rank 1 on steps 4, 9, ... within 20% of 50 ms" \
	"slow-exposed: the straggler finding names rank 1" \
	"clean-overlapped: no straggler" \
	"clean-exposed: no straggler" \
	"exposed: more exposed transfer time than overlapped" \
	"exposed: the exposed-communication finding"; do
	expect "$want" "PASS $want" "$(grep -F "PASS $want" <<< "$out")"
done
expect "no check fails" "" "$(grep '^FAIL' <<< "$out")"

# The critical path across ranks (issue 41): on the slow variants it runs through rank 1's host
# (it sleeps 50 ms before backward on 8 steady steps: at least 400 ms of host time that rank 0
# has not); on the clean ones neither rank's host holds the path much longer than the other's.
for v in slow-overlapped slow-exposed clean-overlapped clean-exposed; do
	mkdir -p "$TMP/path-$v"
	cp "$SRC/tests/fixtures/gpu/ddp/ddp-$v-rank0.sqlite" "$SRC/tests/fixtures/gpu/ddp/ddp-$v-rank1.sqlite" "$TMP/path-$v/"
	"$GPT" report -q -f json -o "$TMP/path-$v.json" "$TMP/path-$v"/ddp-$v-rank*.sqlite
	"$GPT" report -q -o "$TMP/path-$v.txt" "$TMP/path-$v"/ddp-$v-rank*.sqlite
done
host='{r["rank"]: r["host_ns"] for r in d["critical_path"]["ranks"]}'
for v in slow-overlapped slow-exposed; do
	expect "$v: the critical path holds rank 1's 50 ms host gaps" True \
		"$(json "$TMP/path-$v.json" "($host)[1] >= 400e6 and ($host)[1] > 5 * ($host)[0]")"
	expect "$v: its parts add up to at most its span" True \
		"$(json "$TMP/path-$v.json" 'd["critical_path"]["comm_ns"] + d["critical_path"]["unknown_ns"] + sum(sum(v for k, v in r.items() if k.endswith("_ns")) for r in d["critical_path"]["ranks"]) <= d["critical_path"]["span_ns"]')"
	expect "$v: the text's path starts with rank 1's host" 1 \
		"$(grep -A1 '^what bounds the step' "$TMP/path-$v.txt" | grep -c "^  rank 1's host ")"
	expect "$v: the straggler's cause names its host on its critical path" True \
		"$(json "$TMP/path-$v.json" 'all("on its critical path there: host " in i["cause"] for i in d["iterations"] if i["steady"] and i["straggler_rank"] == 1)')"
	expect "$v: the straggler finding names the path through rank 1's host" 1 \
		"$(json "$TMP/path-$v.json" 'sum("rank 1 before" in e and "most in its host" in e for f in d["findings"] if f["rule"] == "straggler" for e in f["evidence"])')"
done
for v in clean-overlapped clean-exposed; do
	expect "$v: neither rank's host holds the path 1.5x the other's" True \
		"$(json "$TMP/path-$v.json" "max(($host).values()) < 1.5 * min(($host).values())")"
done
# The job's timeline holds the path as a process of its own, read back by Perfetto's importer: on
# slow-exposed its longest kind of stretch is rank 1's host, as in the report.
"$GPT" export -q -o "$TMP/path.json" "$TMP/path-slow-exposed"/ddp-slow-exposed-rank*.sqlite
if command -v node > /dev/null && [ -x "$CHECKER" ]; then
	sql="select s.name from slice s join thread_track tt on s.track_id = tt.id join thread using (utid)"
	sql="$sql join process p using (upid) where p.name = 'gpt-trace critical path across ranks'"
	"$CHECKER" "$TMP/path.json" "$sql group by s.name order by sum(s.dur) desc limit 1" > "$TMP/path.check" 2>&1
	expect "slow-exposed: the timeline's critical path is longest in rank 1's host" "rank 1: host" \
		"$(sed -n 3p "$TMP/path.check")"
else
	expect "slow-exposed: the timeline's critical path track" 1 \
		"$(grep -c '"name":"rank 1: host"' "$TMP/path.json" | sed 's/^[1-9][0-9]*$/1/')"
fi
finish
