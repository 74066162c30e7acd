#!/bin/bash
# gpt-trace report: the three renderings of a fixed set of findings compared exactly (report-render),
# then the command on synthetic and real traces: JSON parsed back and checked against the schema
# of docs/report-json.md, ranking, rule selection, thresholds, scope, colour and exit codes.
. "$SRC/tests/analyzer/lib.sh"
RENDER=$BIN/report-render
EXP=$SRC/tests/analyzer/expected

for f in text:txt markdown:md json:json; do
	expect "render ${f%%:*}" "$(cat "$EXP/report.${f#*:}")" "$("$RENDER" "${f%%:*}" "NVTX range 'step'")"
done
expect "render colour only when asked" "0 1" \
	"$(echo $("$RENDER" text x | grep -c $'\033') $("$RENDER" text x color | grep -c $'\033\\[1;31mcritical'))"
expect "render json parses" "ok" "$("$RENDER" json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "gpt-trace-report/2" and d["scope"] is None
assert [f["rule"] for f in d["findings"]] == ["idle-gaps", "small-kernels", "uncoalesced-access"]
assert d["findings"][0]["message"] == "device 0 idle 400 us \"between\" work"
print("ok")')"

# The schema every report must follow (docs/report-json.md), checked on real reports.
cat > "$TMP/check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
need = {"schema": str, "generator": str, "traces": list, "scope": (str, type(None)), "processes": list,
        "notes": list, "origin_ns": int, "span": dict, "gpu": dict, "events": dict, "rules_run": int,
        "recoverable_ns": int, "findings": list}
for k, t in need.items():
    assert isinstance(d[k], t), (k, d.get(k))
assert d["schema"] == "gpt-trace-report/2"
assert d["span"]["duration_ns"] == d["span"]["end_ns"] - d["span"]["start_ns"]
fneed = {"rank": int, "rule": str, "severity": str, "message": str, "recoverable_ns": int,
         "recoverable_share": (int, float), "start_ns": (int, type(None)), "end_ns": (int, type(None)),
         "device": (int, type(None)), "stream": (int, type(None)), "owner": (str, type(None)), "evidence": list,
         "fix": str}
owners = {"program", "cublas", "cudnn", "cutlass", "cufft", "cusparse", "nccl", "cccl", "aten", "inductor", "triton",
          "xla", "nvfuser", "cupy"}
prev = None
for i, f in enumerate(d["findings"]):
    for k, t in fneed.items():
        assert isinstance(f[k], t), (k, f.get(k))
    assert f["rank"] == i + 1 and f["severity"] in ("info", "warning", "critical")
    assert f["owner"] is None or f["owner"] in owners, f["owner"]
    assert prev is None or prev >= f["recoverable_ns"], "not ranked by recoverable time"
    prev = f["recoverable_ns"]
# the total: the replay of all the modelled fixes of each trace, plus the other findings' estimates
replayed = {d["findings"][x["finding"] - 1]["rank"] for w in d["what_if"] for x in w["fixes"]}
assert d["recoverable_ns"] == sum(f["recoverable_ns"] for f in d["findings"] if f["rank"] not in replayed) + \
    sum(w["recorded"]["window_ns"] - w["all"]["window_ns"] for w in d["what_if"] if w["fixes"]), d["recoverable_ns"]
exec(sys.argv[2] if len(sys.argv) > 2 else "")
print("ok")
PY
nrules=$("$GPT" rules --format json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["rules"]))')

make_trace "$TMP/basic.sqlite" "$SRC/tests/analyzer/data/basic.sql"
B=$TMP/basic.sqlite
"$GPT" report --format json "$B" > "$TMP/basic.json"
expect "report json synthetic" "ok" "$(python3 "$TMP/check.py" "$TMP/basic.json" "
assert d['rules_run'] == $nrules
assert d['span'] == {'start_ns': 900, 'end_ns': 12000, 'duration_ns': 11100} and d['origin_ns'] == 900
assert d['gpu']['devices'][0]['busy_ns'] == 6900 and d['events'] == {'kernels': 7, 'copies': 2, 'api_calls': 11}
assert d['processes'] == ['./train --steps 2 (pid 4242)'] and d['notes'] == []")"
"$GPT" report --format json --nvtx step "$B" > "$TMP/step.json"
expect "report json scoped" "ok" "$(python3 "$TMP/check.py" "$TMP/step.json" "
assert d['scope'] == \"NVTX range 'step'\" and d['events']['kernels'] == 4")"
"$GPT" report --format json --rule small-grid --rule idle-gaps "$B" > "$TMP/two-rules.json"
expect "report selected rules" "ok" "$(python3 "$TMP/check.py" "$TMP/two-rules.json" "
assert d['rules_run'] == 2 and set(f['rule'] for f in d['findings']) <= {'small-grid', 'idle-gaps'}")"

# Real exports: CloverLeaf's 279 pageable copies must surface as a pageable-memcpy finding.
"$GPT" report --format json "$CLOVER" > "$TMP/clover.json"
expect "report json cloverleaf" "ok" "$(python3 "$TMP/check.py" "$TMP/clover.json" "
assert 'pageable-memcpy' in [f['rule'] for f in d['findings']]
assert d['events'] == {'kernels': 1312, 'copies': 279, 'api_calls': 3048}
assert d['processes'] == ['cuda-cloverleaf (pid 1701896)']")"
"$GPT" report --format json "$H200" > "$TMP/h200.json"
expect "report json h200" "ok" "$(python3 "$TMP/check.py" "$TMP/h200.json" "
assert d['events']['kernels'] == 19 and d['gpu']['devices'][0]['label'] == 'GPU 0 (NVIDIA H200)'")"
"$GPT" report --format json "$H200" "$CLOVER" > "$TMP/both.json"
expect "report json two traces" "ok" "$(python3 "$TMP/check.py" "$TMP/both.json" "
assert len(d['traces']) == 2 and d['events']['kernels'] == 1331 and len(d['gpu']['devices']) == 2")"

# The owner of the kernels a finding is about (analyzer/analysis/owner.h), on real traces: cuBLAS's FP32 GEMMs,
# cuDNN's small grids and launches in a ResNet, Inductor's small kernels under torch.compile, the
# program's own strided kernels; null for a finding about no kernel (idle time, copies, syncs).
GPU=$SRC/tests/fixtures/gpu
owners() { "$GPT" report --no-ranks --format json "$1" > "$TMP/owners.json" && python3 "$TMP/check.py" "$TMP/owners.json" "
o = {}
for f in d['findings']:
    o.setdefault(f['rule'], f['owner'])
print(' '.join('%s=%s' % (r, o[r]) for r in sys.argv[3:]))" "${@:2}" | head -1; }
expect "report json owner: cuBLAS FP32 GEMMs" "precision=cublas uncoalesced-access=None" \
	"$(owners "$GPU/busy/precision-fp32.sqlite" precision uncoalesced-access)"
# (this NCHW ResNet's small grids were cuDNN's NCHW batch norms: layout-conversion's since 2026-12-07)
expect "report json owner: cuDNN in a ResNet" "layout-conversion=cudnn small-kernels=cudnn" \
	"$(owners "$GPU/real/resnet.sqlite" layout-conversion small-kernels)"
expect "report: no small-grid on an NCHW ResNet's batch norms (layout-conversion's kernels)" "" \
	"$(python3 -c 'import json, sys; print(" ".join(f["rule"] for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "small-grid"))' "$TMP/owners.json")"
expect "report json owner: torch.compile" "precision=cublas small-kernels=inductor" \
	"$(owners "$GPU/real/compile.sqlite" precision small-kernels)"
expect "report json owner: NCCL, ATen, none" "exposed-communication=nccl small-kernels=aten idle-gaps=None" \
	"$(owners "$GPU/ddp/ddp-slow-exposed-rank1.sqlite" exposed-communication small-kernels idle-gaps)"
expect "report json owner: the program's own kernels" "uncoalesced-access=program" \
	"$(owners "$GPU/access-metrics.sqlite" uncoalesced-access)"

# Markdown and text: the header and one section per finding.
"$GPT" report --format markdown "$CLOVER" > "$TMP/clover.md"
expect "report markdown" "1 1" "$(grep -c '^## gpt-trace report' "$TMP/clover.md") $(grep -c '^### Findings' "$TMP/clover.md")"
expect "report markdown sections" "$(python3 -c "import json; print(len(json.load(open('$TMP/clover.json'))['findings']))")" \
	"$(grep -c '^#### ' "$TMP/clover.md")"
"$GPT" report -o "$TMP/clover.txt" "$CLOVER"
expect "report -o file, no colour" "1 0" "$(grep -c '^gpt-trace report' "$TMP/clover.txt") $(grep -c $'\033' "$TMP/clover.txt")"
expect "report colour never on a pipe" "0" "$("$GPT" report "$B" | grep -c $'\033')"
expect "report --color always" "yes" "$("$GPT" report --color always "$B" | grep -q $'\033\\[1m' && echo yes)"
if command -v script > /dev/null; then	# util-linux script(1) gives the command a terminal
	expect "report NO_COLOR wins over a tty" "0" "$(NO_COLOR=1 script -qec "$GPT report $B" /dev/null |
		grep -c $'\033')"
	expect "report colour on a tty" "yes" "$(env -u NO_COLOR script -qec "$GPT report $B" /dev/null |
		grep -q $'\033\\[1m' && echo yes)"
else
	echo "skip colour-on-a-tty checks: no script(1) to make a terminal"
fi

# Thresholds: --set and --config reach the rules; bad ones are errors.
printf '[small-kernels]\nmax_duration_us = 7\n' > "$TMP/good.conf"
printf '[small-kernels]\nno_such_param = 7\n' > "$TMP/bad.conf"
expect_exit "report --config" 0 "" "$GPT" report --config "$TMP/good.conf" "$B"
expect_exit "report --set" 0 "" "$GPT" report --set small-kernels.max_duration_us=2 "$B"
expect_exit "report bad --config" 2 "no_such_param" "$GPT" report --config "$TMP/bad.conf" "$B"
expect_exit "report missing --config" 2 "$TMP/nope.conf" "$GPT" report --config "$TMP/nope.conf" "$B"
expect_exit "report bad --set" 2 "nope" "$GPT" report --set small-kernels.nope=1 "$B"
expect_exit "report unknown rule" 2 "unknown rule 'no-such-rule'" "$GPT" report --rule no-such-rule "$B"
expect_exit "report bad format" 2 "unknown format" "$GPT" report --format pdf "$B"
expect_exit "report bad option" 2 "unknown option" "$GPT" report --bogus "$B"
expect_exit "report missing value" 2 "needs a value" "$GPT" report "$B" --format
# the refused option as written: alone, not its cluster nor the word before it; without "=VALUE"
expect_exit "report unknown short option in a cluster" 2 "unknown option '-Z'; see" "$GPT" report -Zq "$B"
expect_exit "report unknown short option ending a cluster" 2 "unknown option '-Z'; see" "$GPT" report -qZ "$B"
expect_exit "report short option without its value in a cluster" 2 "option '-f' needs a value" "$GPT" report "$B" -qf
expect_exit "report unknown long option with a value" 2 "unknown option '--bogus'; see" "$GPT" report --bogus=1 "$B"
expect_exit "report no trace" 2 "no trace given" "$GPT" report
expect_exit "report unwritable output" 2 "cannot write" "$GPT" report -o "$TMP/no/such/dir/r.txt" "$B"

# --fail-on: exit 1 when a finding reaches the severity (CloverLeaf has findings; empty has none).
make_trace "$TMP/empty.sqlite"
expect_exit "report --fail-on info with findings" 1 "" "$GPT" report --fail-on info "$CLOVER"
expect_exit "report --fail-on on an empty trace" 0 "" "$GPT" report --fail-on info --rule small-grid \
	"$TMP/empty.sqlite"
expect_exit "report bad --fail-on" 2 "invalid --fail-on" "$GPT" report --fail-on severe "$B"
expect "report empty trace" "no GPU work" "$("$GPT" report "$TMP/empty.sqlite" | grep -o 'no GPU work')"

# gpt-trace rules: every rule with its parameters; one rule; unknown rule.
expect "rules lists every rule" "$nrules" "$("$GPT" rules | grep -c '^[a-z-]*: ')"
expect "rules one" "1" "$("$GPT" rules small-kernels | grep -c '^[a-z-]*: ')"
expect "rules params have defaults and units" "ok" "$("$GPT" rules --format json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["rules"]:
    assert r["id"] and r["title"] and r["measures"]
    for p in r["params"]:
        assert isinstance(p["default"], (int, float)) and p["unit"] and p["help"], p
print("ok")')"
expect "rules markdown" "$nrules" "$("$GPT" rules --format markdown | grep -c '^### ')"
expect_exit "rules unknown" 2 "unknown rule 'nope'" "$GPT" rules nope

# The memory section's steady state, worded for rare and fractional counts (real H100/H200 pairs):
# near_oom allocates once in its 40 steady iterations (it used to read "0.0 allocations (419.43 KB)
# and 0.0 releases per iteration"), leak-fixed once (three times in a copy), leak-bad 161 times (4.0 per iteration),
# empty_cache-bad twice per iteration, empty_cache-fixed never.
PAIRS=$SRC/tests/fixtures/gpu/pairs
steady_memory() { "$GPT" report "$PAIRS/$1.sqlite" | sed -n 's/^ *steady: \([^;]*\);.*/\1/p'; }
expect "memory: one allocation in the steady state" "1 allocation in 40 steady iterations (16.78 MB) and no releases" \
	"$(steady_memory near_oom-bad)"
expect "memory: once in the steady state" "1 allocation in 40 steady iterations (20.97 MB) and no releases" \
	"$(steady_memory leak-fixed)"
# leak-fixed with its one steady allocation made three times (two copies, 1 and 2 ms later)
cp "$PAIRS/leak-fixed.sqlite" "$TMP/leak3.sqlite"
sqlite3 "$TMP/leak3.sqlite" "CREATE TEMP TABLE one AS SELECT * FROM CUDA_GPU_MEMORY_USAGE_EVENTS
	WHERE memKind = 2 AND bytes = 20971520 ORDER BY start DESC LIMIT 1;
	UPDATE one SET start = start + 1000000, address = address + 1; INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS SELECT * FROM one;
	UPDATE one SET start = start + 1000000, address = address + 1; INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS SELECT * FROM one;"
expect "memory: rarer than once an iteration" "3 allocations in 40 steady iterations (62.91 MB) and no releases" \
	"$("$GPT" report "$TMP/leak3.sqlite" | sed -n 's/^ *steady: \([^;]*\);.*/\1/p')"
expect "memory: fractional per iteration" "4.0 allocations (75.81 MB) per iteration and no releases" \
	"$(steady_memory leak-bad)"
expect "memory: whole per iteration" "2 allocations (33.55 MB) and 2 releases per iteration" \
	"$(steady_memory empty_cache-bad)"
expect "memory: none" "no allocations or releases" "$(steady_memory empty_cache-fixed)"
expect "memory: one allocation, singular" "1" "$("$GPT" report --format markdown "$PAIRS/near_oom-bad.sqlite" |
	grep -c '| 1 allocation in 40 steady iterations (16.78 MB) and no releases; in use ')"
finish
