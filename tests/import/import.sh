#!/bin/sh
# Tests of `gpt-trace import` and of Kineto JSON accepted by every command, on the real traces of
# tests/fixtures/kineto/ and on small hand-made ones (bad input, names, number forms). One case per
# run: import.sh CASE, with GPT (the gpt-trace binary), SRC (the source tree) and WORK (a scratch
# folder, emptied first) from ctest. Exit 0 pass, 1 fail.
set -u
case_name=$1
FIX=$SRC/tests/fixtures/kineto
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
fail() { echo "FAIL $case_name: $*"; exit 1; }
ok() { echo "ok   $case_name: $*"; }

# refused NAME FILE PATTERN: import exits 2 with one line matching PATTERN, and leaves no file
refused() {
	rm -f out.sqlite out.sqlite.tmp-*
	"$GPT" import "$2" -o out.sqlite > out.txt 2> err.txt
	rc=$?
	[ "$rc" = 2 ] || fail "$1: exit $rc, want 2"
	grep -q -- "$3" err.txt || fail "$1: stderr '$(cat err.txt)' does not match '$3'"
	[ "$(wc -l < err.txt)" = 1 ] || fail "$1: more than one line on stderr: $(cat err.txt)"
	ls out.sqlite* > /dev/null 2>&1 && fail "$1: left $(ls out.sqlite*)"
	echo "ok   $1: $(cat err.txt)"
}

# sql DB QUERY: one value
sql() { sqlite3 "$1" "$2"; }

case "$case_name" in
out-of-range)
	# Values no profiler writes are kept out and counted in a note, never stored as if valid: a
	# negative dur (was stored as 0), a dur of 1e30 us (was 0), a negative ts (was a 2.8 million s
	# span), a baseTimeNanoseconds of 1e25 (was ignored silently: a trace dated 1970).
	cat > oor.json <<'JSON'
{"schemaVersion": 1, "baseTimeNanoseconds": 10000000000000000000000000, "traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "good", "pid": 0, "tid": 7, "ts": 20, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "negdur", "pid": 0, "tid": 7, "ts": 30, "dur": -5.5, "args": {"device": 0, "stream": 7, "correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "hugedur", "pid": 0, "tid": 7, "ts": 40, "dur": 1e30, "args": {"device": 0, "stream": 7, "correlation": 3}},
{"ph": "X", "cat": "kernel", "name": "negts", "pid": 0, "tid": 7, "ts": -2800000000000, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": 4}},
{"ph": "X", "cat": "kernel", "name": "strdur", "pid": 0, "tid": 7, "ts": 50, "dur": "x", "args": {"device": 0, "stream": 7, "correlation": 5}}
]}
JSON
	"$GPT" import oor.json -o oor.sqlite > out.txt 2> err.txt || fail "import: $(cat err.txt)"
	[ "$(sql oor.sqlite "SELECT group_concat(s.value) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName")" = good ] ||
		fail "kernels kept: $(sql oor.sqlite "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName")"
	sql oor.sqlite "SELECT value FROM GPT_META WHERE name LIKE 'import_note%'" > notes.txt
	grep -q '^4 events have a ts or dur out of range .* and were not imported$' notes.txt || fail "no count note: $(cat notes.txt)"
	grep -q '^baseTimeNanoseconds is out of range' notes.txt || fail "no note of the base time: $(cat notes.txt)"
	[ "$(sql oor.sqlite "SELECT max(end) - min(start) < 1000000 FROM CUPTI_ACTIVITY_KIND_KERNEL")" = 1 ] || fail "span"
	ok "out-of-range ts, dur and baseTimeNanoseconds: kept out, counted in notes"
	;;
signals)
	# A signal mid-conversion leaves no temporary file, in import and in report of a JSON file: the
	# JSON comes through a FIFO whose writer pauses, so the conversion is under way when the signal
	# comes. The command dies of the signal (128 + its number). Background jobs of sh start with
	# SIGINT ignored: env --default-signal gives it back, as a terminal's job has it.
	command -v mkfifo > /dev/null || { echo "skipped: mkfifo"; exit 77; }
	env --default-signal=INT true 2> /dev/null || { echo "skipped: env --default-signal"; exit 77; }
	event='{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 1}},'
	for cmd in import report; do
		for signum in INT:2 TERM:15 HUP:1; do
			sig=${signum%:*}
			rm -rf s && mkdir s && mkfifo s/in.json
			( printf '{"traceEvents": [%s' "$event"; sleep 5 ) > s/in.json &
			writer=$!
			if [ $cmd = import ]; then
				env --default-signal=INT "$GPT" import s/in.json -o s/out.sqlite > /dev/null 2>&1 &
			else
				env --default-signal=INT "$GPT" report s/in.json > /dev/null 2>&1 &
			fi
			pid=$!
			for i in $(seq 200); do ls s/*.tmp-* > /dev/null 2>&1 && break; sleep 0.05; done
			ls s/*.tmp-* > /dev/null 2>&1 || { kill $pid $writer; fail "$cmd: no temporary file (the test's premise)"; }
			kill -$sig $pid
			wait $pid
			rc=$?
			kill $writer 2> /dev/null
			wait $writer 2> /dev/null
			want=$((128 + ${signum#*:}))
			[ $rc = $want ] || fail "$cmd SIG$sig: exit $rc, want $want"
			[ "$(ls s)" = in.json ] || fail "$cmd SIG$sig: left $(ls s | tr '\n' ' ')"
		done
	done
	ok "SIGINT, SIGTERM, SIGHUP in import and report: no temporary file left, the signal's exit status"
	# A leftover of a dead conversion (SIGKILL: no handler) is removed by the next one; a live
	# process's is not.
	cp "$FIX/hta-alexnet.json.gz" a.json.gz
	dead=$(sh -c 'echo $$')
	: > a.sqlite.tmp-$dead-abcdef
	: > a.sqlite.tmp-$$-ghijkl
	"$GPT" import a.json.gz -o a.sqlite > /dev/null 2>&1 || fail "import"
	[ -e a.sqlite.tmp-$dead-abcdef ] && fail "a dead conversion's leftover stayed"
	[ -e a.sqlite.tmp-$$-ghijkl ] || fail "a live process's temporary file was removed"
	ok "a dead conversion's leftover is removed by the next, a live one's kept"
	;;
rocm)
	# HTA's MI250 trace (ROCm 6): the hip* calls are judged as their CUDA twins. Before, every idle
	# ns of it was "no API record of the launch" (unknown) and small-kernels assumed 5 us.
	cp "$FIX/hta-rocm-mi250.json.gz" .
	"$GPT" report -q -f json hta-rocm-mi250.json.gz > r.json || fail "report"
	got=$(python3 -c "
import json, re
d = json.load(open('r.json'))
kinds = {}
for p in d['phases'][0]['phases']:
    for k, v in p['split']['idle_by_kind_ns'].items():
        kinds[k] = kinds.get(k, 0) + v
idle = sum(kinds.values())
sk = next(f for f in d['findings'] if f['rule'] == 'small-kernels')
cost = next(e for e in sk['evidence'] if e.startswith('launch cost'))
print(kinds['unknown'], kinds['launch'] > idle / 2, 'measured' if 'launch API call' in cost else cost,
      re.search(r'call ([0-9.]+) us', cost) is not None)")
	[ "$got" = "0 True measured True" ] || fail "ROCm judged as CUDA: '$got'"
	[ "$(sqlite3 hta-rocm-mi250.json.gz.sqlite 'SELECT DISTINCT smCount FROM TARGET_INFO_GPU')" = 104 ] ||
		fail "CU count: $(sqlite3 hta-rocm-mi250.json.gz.sqlite 'SELECT smCount FROM TARGET_INFO_GPU')"
	ok "hip* calls judged as their CUDA twins: no unknown idle, launch cost measured in us, 104 CUs"
	;;
counts)
	# every fixture's rows and their ns times against its JSON (check_import.py)
	python3 "$SRC/tests/import/check_import.py" "$GPT" "$WORK" "$FIX"/*.json.gz || exit 1
	;;
bad-input)
	zcat "$FIX/hta-alexnet.json.gz" > full.json
	head -c $(($(wc -c < full.json) * 6 / 10)) full.json > truncated.json
	refused truncated-json truncated.json "truncated JSON: the text ends after"
	head -c $(($(wc -c < "$FIX/hta-alexnet.json.gz") / 2)) "$FIX/hta-alexnet.json.gz" > truncated.json.gz
	refused truncated-gzip truncated.json.gz "truncated gzip file"
	printf '{"traceEvents": []}' > empty.json
	refused empty-events empty.json "traceEvents is empty"
	printf '{"schemaVersion": 1, "deviceProperties": []}' > no-events.json
	refused no-trace-events no-events.json "no traceEvents"
	printf '{"traceEvents": [{"ph": "X", "cat": "gpu", "name": "draw", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}' > chrome.json
	refused foreign-chrome chrome.json "not the PyTorch profiler's"
	printf '[{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 7}]' > array.json
	refused array-form array.json "array at the top level"
	printf '{"traceEvents": [{"ph": "X", "cat": "kernel",, }]}' > malformed.json
	refused malformed malformed.json "malformed JSON near byte"
	: > zero.json
	refused empty-file zero.json "empty file"
	refused missing missing.json "no such file"
	refused sqlite "$SRC/tests/fixtures/gpu/copies.sqlite" "it is a SQLite file already"
	cp "$FIX/hta-event-sync.json.gz" self.json.gz
	"$GPT" import self.json.gz -o self.json.gz 2> err.txt && fail "import over its own input accepted"
	grep -q "it is the input trace" err.txt && cmp -s self.json.gz "$FIX/hta-event-sync.json.gz" ||
		fail "import over its own input: $(cat err.txt)"
	echo "ok   own-input: $(cat err.txt)"
	# PyTorch's execution trace (ExecutionTraceObserver) is JSON from PyTorch, but not a profiler trace
	refused execution-trace "$FIX/bad/hta-execution-trace.json.gz" "not a PyTorch profiler (Kineto) trace: no traceEvents"
	# gpt-trace's own Chrome export is a Chrome trace, not Kineto's
	"$GPT" export -q -f chrome -o ours.json "$SRC/tests/fixtures/gpu/copies.sqlite" > /dev/null 2>&1 ||
		fail "export of copies.sqlite"
	refused our-export ours.json "not the PyTorch profiler's"
	# the other commands say the same, naming the file
	"$GPT" report truncated.json > /dev/null 2> err.txt && fail "report accepted a truncated trace"
	grep -q "truncated JSON" err.txt || fail "report: $(cat err.txt)"
	ls truncated.json.sqlite* > /dev/null 2>&1 && fail "report left a cache of a truncated trace"
	ok "report refuses it too: $(cat err.txt)"
	;;
names-and-numbers)
	# quotes, backslashes, control characters and non-ASCII in names; ts forms: relative to a base
	# with 3 decimals, more decimals (rounded half up), an exponent, an integer
	cat > odd.json <<'JSON'
{"schemaVersion": 1, "baseTimeNanoseconds": 1790000000000000000, "traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::\"quoted\" \\back\\slash\ttab\u0001ctl \u00e9\u4e2d", "pid": 7, "tid": 8, "ts": 4884494739707.581, "dur": 10.0004},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 8, "ts": 4884494739708.0005, "dur": 2, "args": {"correlation": 5, "cbid": 211}},
 {"ph": "X", "cat": "kernel", "name": "void k<\"x\">(int)", "pid": 0, "tid": 7, "ts": 4.8844947397095e12, "dur": 1.5, "args": {"correlation": 5, "device": 0, "stream": 7, "grid": [1, 2, 3], "block": [32, 1, 1], "registers per thread": 16, "shared memory": 48}},
 {"ph": "X", "cat": "kernel", "name": "late", "pid": 0, "tid": 7, "ts": 4884494739000, "dur": 0, "args": {"correlation": 6, "device": 0, "stream": 7, "grid": [1, 1, 1], "block": [1, 1, 1]}}
]}
JSON
	"$GPT" import -q odd.json -o odd.sqlite || fail "import"
	got=$(sql odd.sqlite "SELECT s.value FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId" | od -c | head -3)
	want=$(printf 'aten::"quoted" \\back\\slash\ttab\001ctl \303\251\344\270\255\n' | od -c | head -3)
	[ "$got" = "$want" ] || fail "range name: $got, want $want"
	origin=$(sql odd.sqlite "SELECT value FROM GPT_META WHERE name = 'time_origin_ns'")
	got=$(sql odd.sqlite "SELECT group_concat(t, ' ') FROM (SELECT (start + $origin) || '-' || (end - start) AS t FROM (
		SELECT start, end FROM NVTX_EVENTS UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME
		UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL) ORDER BY 1)")
	# base + ts in ns: .581 exact, .0005 rounds up, 4.8844947397095e12 = ...709500, the late kernel
	# (earlier than the first event's second) moves time 0 back rather than going negative
	want="1794884494739000000-0 1794884494739707581-10000 1794884494739708001-2000 1794884494739709500-1500"
	[ "$got" = "$want" ] || fail "times: $got, want $want"
	[ "$(sql odd.sqlite "SELECT min(start) >= 0 FROM CUPTI_ACTIVITY_KIND_KERNEL")" = 1 ] || fail "negative time"
	got=$(sql odd.sqlite "SELECT d.value, s.value, k.gridY, k.gridZ, k.blockX, k.staticSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL k
		JOIN StringIds d ON d.id = k.demangledName JOIN StringIds s ON s.id = k.shortName WHERE k.correlationId = 5")
	[ "$got" = 'void k<"x">(int)|k|2|3|32|48' ] || fail "kernel: $got"
	got=$(sql odd.sqlite "SELECT r.nameId IS NOT NULL FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r USING (correlationId)")
	[ "$got" = 1 ] || fail "kernel not linked to its launch"
	ok "names byte for byte, times exact to the ns"
	;;
meta)
	"$GPT" import -q "$FIX/hta-nccl-ddp-rank0.json.gz" -o nccl.sqlite || fail "import"
	got=$(sql nccl.sqlite "SELECT name || '=' || value FROM GPT_META WHERE name IN ('rank', 'world_size',
		'distributed_backend', 'nccl_version', 'pid', 'import_format', 'time_origin_ns', 'gpt_schema_version') ORDER BY name")
	want="distributed_backend=nccl
gpt_schema_version=5
import_format=kineto schemaVersion 1
nccl_version=2.17.1
pid=2910249
rank=0
time_origin_ns=1716423322000000000
world_size=2"
	[ "$got" = "$want" ] || fail "meta: $got"
	[ "$(sql nccl.sqlite "SELECT name || ' ' || smCount || ' ' || totalMemory FROM TARGET_INFO_GPU WHERE id = 0")" = \
		"NVIDIA A100-PG509-200 108 42297524224" ] || fail "gpu row"
	[ "$(sql nccl.sqlite "SELECT count(*) FROM ThreadNames")" -ge 2 ] || fail "thread names"
	"$GPT" import -q "$FIX/hta-no-distributed-info.json.gz" -o nodist.sqlite || fail "import"
	sql nodist.sqlite "SELECT value FROM GPT_META WHERE name LIKE 'import_note_%'" | grep -q "no distributedInfo" ||
		fail "no note on the missing distributedInfo"
	[ -z "$(sql nodist.sqlite "SELECT value FROM GPT_META WHERE name = 'rank'")" ] || fail "a rank was made up"
	"$GPT" import -q "$FIX/tb-plugin-legacy-resnet50.json.gz" -o legacy.sqlite || fail "import"
	sql legacy.sqlite "SELECT value FROM GPT_META WHERE name = 'import_format'" | grep -q "legacy categories" ||
		fail "legacy not said"
	ok "rank, devices, threads, notes, format"
	;;
iterations)
	# the report's iterations are the ProfilerSteps, on the JSON given directly; however few (1 or 2:
	# an op's range, aten::t or forward, was taken instead), less those without GPU work (MI250's
	# second of 2)
	for f in device-resnet18-schedule.pt.trace.json.gz:3 tb-plugin-legacy-resnet50.json.gz:3 \
		 hta-nccl-ddp-rank0.json.gz:3 device-mlp-memory.pt.trace.json.gz:4 \
		 device-resnet18-gz.pt.trace.json.gz:2 hta-sampled-rank0.json.gz:2 hta-event-sync.json.gz:1 \
		 hta-rocm-mi250.json.gz:1; do
		cp "$FIX/${f%%:*}" .
		got=$("$GPT" report -q -f json "${f%%:*}" | python3 -c "
import json, sys
it = json.load(sys.stdin)['phases'][0]['iterations']
print(it['source'], it['name'], it['count'])")
		[ "$got" = "nvtx ProfilerStep# ${f##*:}" ] || fail "${f%%:*}: iterations '$got', want ${f##*:} ProfilerSteps"
	done
	ok "ProfilerSteps are the iterations"
	# a repeating range that is not ProfilerStep: 0 ns instances (SGLang's) are no iterations, and
	# instances that overlap their own kind (each 15 ms, every 10 ms) give iterations that never
	# overlap, each as long as end - start
	for kind in zero:0 overlap:15000; do
		python3 - "${kind##*:}" > "${kind%%:*}.json" <<'PY'
import json, sys
dur, ev, corr = int(sys.argv[1]), [], 1
for i in range(6):
    t = 1000 + i * 10000
    ev.append({"ph": "X", "cat": "user_annotation", "name": "decode", "pid": 1, "tid": 1, "ts": t, "dur": dur})
    for k in range(3):
        ts = t + 100 + k * 2000
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts,
                   "dur": 5, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": f"k{k}", "pid": 0, "tid": 7, "ts": ts + 20, "dur": 1000,
                   "args": {"device": 0, "stream": 7, "correlation": corr}})
        corr += 1
print(json.dumps({"traceEvents": ev}))
PY
		"$GPT" report -q -f json "${kind%%:*}.json" | python3 -c "
import json, sys
it = json.load(sys.stdin)['phases'][0]['iterations']
items = it['items']
assert it['source'] != 'nvtx' or '${kind%%:*}' == 'overlap', it['source']
assert all(i['duration_ns'] > 0 for i in items), [i['duration_ns'] for i in items]
assert all(i['duration_ns'] == i['end_ns'] - i['start_ns'] for i in items)
assert all(a['end_ns'] <= b['start_ns'] for a, b in zip(items, items[1:]))
print(it['source'], it['count'])" > "${kind%%:*}.txt" || fail "${kind%%:*} ranges: $(cat "${kind%%:*}.txt")"
	done
	# each idle cause once per phase (aten::empty was listed twice in the steady state of this DDP
	# trace: more than 64 distinct texts apart, its two copies were not merged)
	cp "$FIX/hta-nccl-ddp-rank0.json.gz" .
	"$GPT" report -q -f json hta-nccl-ddp-rank0.json.gz | python3 -c "
import json, sys
for p in json.load(sys.stdin)['phases'][0]['phases']:
    labels = [c['label'] for c in p['idle_causes']]
    assert len(labels) == len(set(labels)), (p['name'], labels)" || fail "an idle cause listed twice"
	ok "repeating ranges: 0 ns ones are no iterations ($(cat zero.txt)); overlapping ones never overlap ($(cat overlap.txt))"
	;;
cache)
	cp "$FIX/hta-alexnet.json.gz" a.json.gz
	"$GPT" stats a.json.gz > stats1.txt || fail "stats on JSON"
	[ -f a.json.gz.sqlite ] || fail "no cache beside the JSON"
	m1=$(stat -c %Y.%N a.json.gz.sqlite 2>/dev/null || stat -c %Y a.json.gz.sqlite)
	sleep 1
	"$GPT" stats a.json.gz > stats2.txt || fail "stats again"
	[ "$(stat -c %Y a.json.gz.sqlite)" = "${m1%%.*}" ] || fail "the cache was made again for an unchanged file"
	cmp -s stats1.txt stats2.txt || fail "stats differ on the cache"
	touch a.json.gz
	"$GPT" stats a.json.gz > /dev/null || fail "stats after touch"
	[ "$(stat -c %Y a.json.gz.sqlite)" != "${m1%%.*}" ] || fail "a changed file kept its old cache"
	mkdir ro tmp && cp "$FIX/hta-alexnet.json.gz" ro/b.json.gz && chmod 555 ro
	if [ "$(id -u)" != 0 ]; then
		TMPDIR=$WORK/tmp "$GPT" stats ro/b.json.gz > stats3.txt || fail "stats in a read-only folder"
		[ -e ro/b.json.gz.sqlite ] && fail "wrote into a read-only folder"
		[ -z "$(ls tmp)" ] || fail "left $(ls tmp) in TMPDIR"
		cmp -s stats1.txt stats3.txt || true
	fi
	chmod 755 ro
	ok "cache made once, made again after a change$([ "$(id -u)" = 0 ] && echo ' (read-only folder not checked as root)')"
	;;
commands)
	# every command that reads traces reads the JSON
	cp "$FIX/device-resnet18-schedule.pt.trace.json.gz" a.json.gz
	cp "$FIX/device-resnet18-gz.pt.trace.json.gz" b.json.gz
	"$GPT" report -q a.json.gz > /dev/null || fail report
	"$GPT" report -q -f html -o r.html a.json.gz > /dev/null || fail "report html"
	"$GPT" stats -q -f json a.json.gz > /dev/null || fail stats
	"$GPT" export -q a.json.gz -o a.perfetto-trace > /dev/null || fail "export perfetto"
	"$GPT" export -q -f chrome a.json.gz -o a.chrome.json > /dev/null || fail "export chrome"
	"$GPT" diff a.json.gz b.json.gz > /dev/null; [ $? -le 1 ] || fail diff
	"$GPT" baseline save a.json.gz -o base.json > /dev/null || fail "baseline save"
	"$GPT" check --baseline base.json b.json.gz > /dev/null; [ $? -le 1 ] || fail check
	ok "report, stats, export, diff, baseline, check read Kineto JSON"
	;;
ranks)
	# two ranks of one job (HTA's sampled trace_filter pair): the cross-rank report
	cp "$FIX/hta-sampled-rank0.json.gz" "$FIX/hta-sampled-rank1.json.gz" .
	"$GPT" report hta-sampled-rank0.json.gz hta-sampled-rank1.json.gz > ranks.txt 2>&1 || fail "$(cat ranks.txt)"
	grep -q "2 ranks (world size 128)" ranks.txt || fail "not a cross-rank report: $(head -3 ranks.txt)"
	# the cross-rank median is a rank's own, never two overlapping ranges added (was 216.559 ms
	# against the ranks' 39.6 and 54.5 ms, from an op's range taken as the iteration)
	"$GPT" report -q -f json -o ranks.json hta-sampled-rank0.json.gz hta-sampled-rank1.json.gz ||
		fail "report -f json of the ranks"
	python3 - ranks.json <<'PY' || fail "cross-rank median"
import json, sys
d = json.load(open(sys.argv[1]))
own = [r["median_iteration_ns"] for r in d["ranks"]]
job = d["median_iteration_ns"]
assert own == [622789000, 630512000], own
assert job == max(own), (job, own)
PY
	mkdir job && cp hta-sampled-rank*.json.gz job/
	"$GPT" report job > folder.txt 2>&1 || fail "report of a folder: $(cat folder.txt)"
	cmp -s ranks.txt folder.txt || fail "a folder's report differs from its files': $(diff ranks.txt folder.txt | head -5)"
	"$GPT" import -q job || fail "import of a folder"
	[ -f job/hta-sampled-rank0.sqlite ] && [ -f job/hta-sampled-rank1.sqlite ] || fail "folder: $(ls job)"
	mkdir empty
	"$GPT" report empty 2> err.txt && fail "an empty folder accepted"
	grep -q "is a directory with no PyTorch profiler trace" err.txt || fail "empty folder: $(cat err.txt)"
	ok "cross-rank report from two rank files and from their folder; a folder imports each"
	;;
last-step)
	# four 10 ms ProfilerSteps and a fifth cut to 2 ms by the end of the recording window
	python3 - > steps.json <<'PY'
import json
ev = []
for i in range(5):
    ts, dur = 1000 + i * 10000, (2000 if i == 4 else 10000)
    ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1, "ts": ts, "dur": dur})
    for k in range(3):
        c = i * 10 + k
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": ts + 100 + k * 1000, "dur": 5, "args": {"correlation": c}})
        ev.append({"ph": "X", "cat": "kernel", "name": f"k{k}", "pid": 0, "tid": 7, "ts": ts + 200 + k * 1000,
                   "dur": 500, "args": {"correlation": c, "device": 0, "stream": 7, "grid": [1, 1, 1], "block": [1, 1, 1]}})
ev.append({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 43000})
print(json.dumps({"schemaVersion": 1, "baseTimeNanoseconds": 1790000000000000000, "traceEvents": ev}))
PY
	"$GPT" import steps.json -o steps.sqlite > out.txt || fail "import"
	grep -q "note: the last ProfilerStep (2.000 ms, median 10.000 ms) ends with the recording window: it was cut short" out.txt ||
		fail "no cut-short note: $(cat out.txt)"
	"$GPT" report steps.json | grep -q "the last ProfilerStep" || fail "the report does not carry the note"
	ok "the cut-short last step is noted"
	;;
offsets)
	# Times before the report's origin print signed. An imported trace's first CPU op (an NVTX range
	# here) comes before its first CUDA call, so its start-up begins before the origin (the first API
	# call or GPU operation): 265.089 us before in the ResNet-18 schedule trace, which read
	# "+-265.089 us". No report of a fixture may print "+-".
	cp "$FIX/device-resnet18-schedule.pt.trace.json.gz" a.json.gz
	"$GPT" report -q -f json -o a.json a.json.gz || fail "report json"
	got=$(python3 -c "
import json
d = json.load(open('a.json'))
print(d['phases'][0]['phases'][0]['start_ns'] - d['origin_ns'])")
	[ "$got" = "-265089" ] || fail "start-up at $got ns from the origin, want -265089"
	"$GPT" report a.json.gz | grep -q '^  start-up   -265.089 us    265.089 us ' ||
		fail "text: $("$GPT" report a.json.gz | grep start-up)"
	"$GPT" report -f markdown a.json.gz | grep -q '^| start-up | -265.089 us | 265.089 us |' ||
		fail "markdown: $("$GPT" report -f markdown a.json.gz | grep start-up)"
	for f in "$FIX"/*.json.gz; do
		cp "$f" b.json.gz
		for fmt in text markdown; do
			"$GPT" report -f $fmt b.json.gz > b.txt 2>&1 || fail "report $fmt of $(basename "$f")"
			! grep -n -- '+-' b.txt || fail "'+-' in the $fmt report of $(basename "$f")"
		done
		rm -f b.json.gz.sqlite
	done
	ok "negative offsets signed, in text and Markdown"
	;;
ddp-straggler)
	# a 2-rank DDP job recorded with torch.profiler, rank 1 slow every third step
	# (tests/gpu/kineto/record_ddp.py): the cross-rank report names rank 1
	[ -f "$FIX/ddp-slow-rank0.pt.trace.json.gz" ] || { echo "skip: no DDP pair in $FIX (tests/gpu/README.md)"; exit 77; }
	cp "$FIX"/ddp-slow-rank*.pt.trace.json.gz .
	"$GPT" report -q -f json -o job.json ddp-slow-rank0.pt.trace.json.gz ddp-slow-rank1.pt.trace.json.gz ||
		fail "cross-rank report"
	got=$(python3 -c "
import json
d = json.load(open('job.json'))
print(sorted({i['straggler_rank'] for i in d['iterations'] if i['straggler_rank'] >= 0}))")
	[ "$got" = "[1]" ] || fail "stragglers $got, want [1]"
	ok "rank 1 named the straggler"
	# the recorded job (tests/fixtures/kineto/README.md): rank 1 slept 30 ms before steps 3, 6 and 9,
	# the trace's iterations 0, 3 and 6; the others waited about that long there, and less elsewhere
	got=$(python3 -c "
import json
d = json.load(open('job.json'))
print([(i['index'], i['straggler_rank']) for i in d['iterations'] if i['delay_ns'] >= 25e6],
      d['findings'][0]['rule'], d['findings'][0]['message'].split(' held')[0])")
	[ "$got" = "[(0, 1), (3, 1), (6, 1)] straggler rank 1" ] || fail "slept iterations: $got"
	ok "the slept iterations, and the straggler finding first"
	;;
*)
	echo "unknown case $case_name"
	exit 2
	;;
esac
