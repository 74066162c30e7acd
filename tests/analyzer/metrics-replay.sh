#!/bin/bash
# Issue 38 item 4: under --metrics, a measured launch's call holds its kernel replay (counters) or
# SASS patching, and the library's setup before it is the profiler's too (PROFILER_OVERHEAD, one
# row per launch measured). None of that time is the program's: no launch cost is taken from it
# and no idle cause holds it. Fixtures from tests/gpu/metrics-replay.sh (H200, 2026-12-04):
# access --metrics (every launch of the steady state measured), launch_bound --launches 2000
# with --metrics=first=2 (3 of 2000 measured) and the same without --metrics, resnet18 with
# --metrics=first=2 (118 launches measured, all in the warm-up).
. "$SRC/tests/analyzer/lib.sh"
GPU=$SRC/tests/fixtures/gpu

for t in access-metrics launch-metrics; do
	"$GPT" report -q -f json -o "$TMP/$t.json" "$GPU/$t.sqlite" || { echo "FAIL report $t"; exit 1; }
	"$GPT" report -q -f json --whole-trace -o "$TMP/$t-whole.json" "$GPU/$t.sqlite" ||
		{ echo "FAIL report --whole-trace $t"; exit 1; }
done
"$GPT" report -q -f json -o "$TMP/plain.json" "$GPU/launch_bound_small.sqlite" || { echo "FAIL report plain"; exit 1; }
q() {	# q JSON PYTHON: the python's output, with d the report
	python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
def finding(rule):
    return next((f for f in d['findings'] if f['rule'] == rule), None)
def split(name):
    return next(p for p in d['phases'][0]['phases'] if p['name'] == name)['split']
$2" "$1"
}

# The rows: one per launch measured, on the launching thread, each holding its launch call.
expect "PROFILER_OVERHEAD rows of access" "gpt-trace: SASS patching for source-line metrics (--metrics)|4
gpt-trace: kernel replay for hardware counters (--metrics)|12" \
	"$(sqlite3 -readonly "$GPU/access-metrics.sqlite" "SELECT s.value, count(*) FROM PROFILER_OVERHEAD o
		JOIN StringIds s ON s.id = o.nameId GROUP BY 1 ORDER BY 1")"
expect "each row holds its measured launch call" "16" \
	"$(sqlite3 -readonly "$GPU/access-metrics.sqlite" "SELECT count(*) FROM GPT_KERNEL_METRICS m
		JOIN CUPTI_ACTIVITY_KIND_RUNTIME r USING (correlationId) JOIN PROFILER_OVERHEAD o
		ON o.globalTid = r.globalTid AND o.start <= r.start AND o.\"end\" >= r.\"end\"")"

# access: 2.2 s of idle time, of which 2.06 s the profiler's; host-wait (what idle-gaps can
# recover) is what is left, under a millisecond. Before: 2.8 s of "launch" and host code, critical.
expect "access: the steady idle time is mostly the profiler's" "True True" \
	"$(q "$TMP/access-metrics.json" "s = split('steady'); k = s['idle_by_kind_ns']
print(k['profiler'] > 0.9 * s['idle_ns'], k['launch'] < 0.001 * s['idle_ns'])")"
expect "access: idle-gaps recovers no profiler time" "info True True" \
	"$(q "$TMP/access-metrics.json" "f = finding('idle-gaps')
print(f['severity'], f['recoverable_ns'] < 1000000, any(e.startswith(\"the profiler's own work: 2.06\") for e in f['evidence']))")"
expect "access: host-pinning-in-loop's idle is the program's" "True" \
	"$(q "$TMP/access-metrics.json" "f = finding('host-pinning-in-loop'); print('GPU idled 463.2 us' in f['message'])")"
expect "access: the largest gaps say their launch was replayed" "5" \
	"$(q "$TMP/access-metrics.json" "print(sum('its launch replayed for --metrics' in e for e in finding('idle-gaps')['evidence']))")"

# launch_bound: the launch cost is the unmeasured launches' (3.7 us untraced by --metrics, 3.9 us
# here), not a replay's (milliseconds), in the steady state and over the whole trace.
for t in launch-metrics launch-metrics-whole; do
	expect "$t: launch cost from launches not replayed" "True" \
		"$(q "$TMP/$t.json" "import re
e = next(e for e in finding('small-kernels')['evidence'] if e.startswith('launch cost'))
us = float(re.search(r'call ([0-9.]+) us over', e).group(1)); print(3.0 < us < 5.0)")"
done
expect "launch-metrics-whole: the replayed launches left out, said" "True" \
	"$(q "$TMP/launch-metrics-whole.json" "print(any(e.endswith('(first launch of each kernel left out, and 3 launches that --metrics replayed)')
          for e in finding('small-kernels')['evidence']))")"
expect "launch-metrics: start-up and warm-up idle is the profiler's" "True True" \
	"$(q "$TMP/launch-metrics.json" "w = split('warm-up')
print(w['idle_by_kind_ns']['profiler'] > 0.99 * w['idle_ns'], w['idle_by_kind_ns']['launch'] < 0.001 * w['idle_ns'])")"
expect "launch-metrics: the steady state as without --metrics" "$(q "$TMP/plain.json" "print(finding('small-kernels')['severity'], [f['rule'] for f in d['findings']][:2])")" \
	"$(q "$TMP/launch-metrics.json" "print(finding('small-kernels')['severity'], [f['rule'] for f in d['findings']][:2])")"
expect "a trace without --metrics has no profiler time" "0" \
	"$(q "$TMP/plain.json" "print(sum(p['split']['idle_by_kind_ns']['profiler'] for p in d['phases'][0]['phases']))")"

# resnet18: the warm-up's 6.9 s of replay is the profiler's, and the steady state is judged as
# without --metrics (layout-conversion first).
"$GPT" report -q -f json -o "$TMP/resnet.json" "$GPU/real/resnet-metrics.sqlite" || { echo "FAIL report resnet"; exit 1; }
expect "resnet-metrics: warm-up idle mostly the profiler's, steady judged" "True layout-conversion critical" \
	"$(q "$TMP/resnet.json" "w = split('warm-up')
print(w['idle_by_kind_ns']['profiler'] > 0.75 * w['idle_ns'], d['findings'][0]['rule'], d['findings'][0]['severity'])")"
exit $((failures > 0))
