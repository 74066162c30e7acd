#!/bin/bash
# gpt-trace report's phases, iterations and idle attribution, on every real trace we have (the H200
# fixtures and both nsys exports): properties that must hold on any trace, then known answers of
# the samples (what each program does is in samples/ and tests/fixtures/gpu/runs.txt).
. "$SRC/tests/analyzer/lib.sh"
GPU=$SRC/tests/fixtures/gpu

# Properties: each phase's idle time is split into causes that add up to it (every idle ns has
# exactly one cause; start-up, which is no device idle time, adds up to its length); the steady
# iterations' splits add up to their durations; the findings' recoverable times add up to at most
# the judged span per device, and to at most the span where fixes were replayed.
cat > "$TMP/props.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for tp in d["phases"]:
    for ph in tp["phases"]:
        causes = sum(c["ns"] for c in ph["idle_causes"])
        if ph["name"] == "start-up":
            assert causes in (0, ph["duration_ns"]), (ph["name"], causes, ph["duration_ns"])
        else:
            assert causes == ph["split"]["idle_ns"], (ph["name"], causes, ph["split"]["idle_ns"])
            assert sum(ph["split"]["idle_by_kind_ns"].values()) == ph["split"]["idle_ns"], ph["name"]
    starts = [p["start_ns"] for p in tp["phases"]]
    assert starts == sorted(starts), starts
    for it in tp["iterations"]["items"]:
        s = it["split"]
        assert it["duration_ns"] == s["compute_ns"] + s["communication_ns"] + s["copies_ns"] + s["idle_ns"], it
        assert sum(s["idle_by_kind_ns"].values()) == s["idle_ns"], it
ndev = max(1, len(d["gpu"]["devices"]))
if d["steady_only"] and d["steady_window"]:
    judged = d["steady_window"]["end_ns"] - d["steady_window"]["start_ns"]
else:
    judged = d["span"]["duration_ns"]
assert d["recoverable_ns"] <= ndev * judged, (d["recoverable_ns"], ndev, judged)
# with replayed fixes, the other findings' estimates add at most what the replay left: within the span
if any(t["fixes"] for t in d.get("what_if", [])):
    assert d["recoverable_ns"] <= judged, (d["recoverable_ns"], judged)
print("ok")
PY
for f in "$GPU"/*.sqlite "$GPU"/pairs/*.sqlite "$GPU"/real/*.sqlite "$H200" "$CLOVER"; do
	name=$(basename "$f" .sqlite)
	"$GPT" report --format json -o "$TMP/$name.json" "$f"
	expect "properties $name" "ok" "$(python3 "$TMP/props.py" "$TMP/$name.json" 2>&1 | tail -1)"
done

q() { python3 -c "import json, sys; d = json.load(open('$TMP/$1.json')); tp = d['phases'][0]; $2"; }

# idle_gaps: 50 launches of add_one, 200 us of host work before each: a period of one kernel,
# the first launch is warm-up, the steady gaps are host code (about 200 us each), and the top
# finding is idle-gaps.
expect "idle_gaps iterations" "kernel-sequence 50 49" \
	"$(q idle_gaps "i = tp['iterations']; print(i['source'], i['count'], i['steady_count'])")"
expect "idle_gaps steady cause" "host" \
	"$(q idle_gaps "print(tp['phases'][2]['idle_causes'][0]['kind'])")"
expect "idle_gaps median" "1" \
	"$(q idle_gaps "print(int(195000 < tp['iterations']['median_ns'] < 215000))")"
expect "idle_gaps top finding" "idle-gaps critical" \
	"$(q idle_gaps "print(d['findings'][0]['rule'], d['findings'][0]['severity'])")"

# sync_every_launch: the host is blocked in cudaDeviceSynchronize after every launch: the top
# finding is excessive-sync, and idle-gaps does not claim the same idle time again.
expect "sync_every_launch top finding" "excessive-sync" \
	"$(q sync_every_launch "print(d['findings'][0]['rule'])")"
expect "sync_every_launch idle-gaps not critical" "info" \
	"$(q sync_every_launch "print([f['severity'] for f in d['findings'] if f['rule'] == 'idle-gaps'][0])")"

# train_small: a PyTorch loop of 20 steps in NVTX 'train_step'; 3 s of start-up and warm-up
# (imports, model construction, first launches) are one-time costs, not findings.
expect "train_small iterations" "nvtx train_step 20" \
	"$(q train_small "i = tp['iterations']; print(i['source'], i['name'], i['count'])")"
expect "train_small warm-up is one-time" "1" \
	"$(q train_small "print(int(tp['phases'][1]['duration_ns'] > 2e9 and d['steady_window']['end_ns'] - d['steady_window']['start_ns'] < 1e8))")"
expect "train_small no finding over the steady span" "1" \
	"$(q train_small "print(int(all(f['recoverable_ns'] <= d['steady_window']['end_ns'] - d['steady_window']['start_ns'] for f in d['findings'])))")"

# well_written: 20 iterations of scale+saxpy back to back: no warning or critical finding.
expect "well_written clean" "0" \
	"$(q well_written "print(sum(f['severity'] != 'info' for f in d['findings']))")"

# nvFuser: every kernel runs about once (JIT-compiled fusions): no steady state; the 392 ms of
# NVRTC compilation is a one-time cost named by its innermost NVTX range.
expect "nvfuser no steady state" "none 0" \
	"$(q nvfuser_report1_h200 "print(tp['iterations']['source'], tp['phases'][2]['duration_ns'])")"
expect "nvfuser compile named" "executor_utils::Nvrtc::CompileProgram" \
	"$(q nvfuser_report1_h200 "print(tp['phases'][1]['idle_causes'][0]['detail'])")"

# item_sync-hostbound (an earlier, host-bound version of tests/gpu/pairs/item_sync.py, recorded on
# the H200): an MLP loop, 300 steps in NVTX 'step', .item() every step. Its 4 s of imports and model
# construction are warm-up; the GPU never runs ahead of the host, so the sync drains nothing: the
# finding is the host, and excessive-sync claims nothing (before phases, this trace's report said
# "critical excessive-sync 3.842 s": start-up that followed a sync).
"$GPT" report --format json -o "$TMP/item-hostbound.json" "$GPU/pairs/item_sync-hostbound.sqlite"
expect "item_sync-hostbound properties" "ok" "$(python3 "$TMP/props.py" "$TMP/item-hostbound.json" 2>&1 | tail -1)"
expect "item_sync-hostbound" "nvtx step 300 299 idle-gaps critical 0" "$(q item-hostbound "i = tp['iterations']
print(i['source'], i['name'], i['count'], i['steady_count'], d['findings'][0]['rule'], d['findings'][0]['severity'],
      sum(f['recoverable_ns'] for f in d['findings'] if f['rule'] == 'excessive-sync'))")"
expect "item_sync-hostbound warm-up" "1" "$(q item-hostbound "print(int(tp['phases'][1]['duration_ns'] > 3e9))")"

# jax_mlp (tests/gpu/real/programs.py jax, on an H100): 200 steps of a jax.jit training step. XLA's
# compiler ranges (XlaCompile, XlaEmitGpuAsm..., with the autotuner's kernels inside) cover 20 s of
# ranges; they are not steps: the steps are XLA's range around each execution of jit_step, the
# 2.5 s of compilation is warm-up, and the loop (about 167 us per step) is GPU-bound.
expect "jax_mlp iterations" "nvtx XlaModule:#hlo_module=jit_step,program_id=3315# 200 198" \
	"$(q jax_mlp "i = tp['iterations']; print(i['source'], i['name'], i['count'], i['steady_count'])")"
expect "jax_mlp compilation is warm-up" "1" "$(q jax_mlp "print(int(tp['phases'][1]['duration_ns'] > 2e9))")"
expect "jax_mlp steady loop clean" "[]" \
	"$(python3 -c "import json; print([f['rule'] for f in json.load(open('$TMP/jax_mlp.json'))['findings'] if f['severity'] != 'info'])")"

# ddp_1rank (samples/ddp_straggler.py under torchrun, one process, on an H100; its rank 0 sleeps 30 ms
# inside 'train_step' before backward() on every 5th step): 20 'train_step' iterations; besides the
# first, exactly steps 5, 10, 15 and 20 (indexes 4, 9, 14, 19) are slow, each by its 30 ms of host
# time inside the range.
expect "ddp_1rank iterations" "nvtx train_step 20" \
	"$(q ddp_1rank "i = tp['iterations']; print(i['source'], i['name'], i['count'])")"
expect "ddp_1rank slow steps" "[(4, 30), (9, 30), (14, 30), (19, 30)]" \
	"$(q ddp_1rank "print([(x['index'], x['split']['idle_by_kind_ns']['nvtx-range'] // 1000000)
	for x in tp['iterations']['items'] if x['index'] and x['duration_ns'] > 20e6])")"

# The slow steps repeat, so they are the steady state's, not warm-up: only the first step (its
# first launches) is warm-up, though steps 5 and 10 take over twice the median.
expect "ddp_1rank periodic slow steps are steady" "1 19" \
	"$(q ddp_1rank "i = tp['iterations']; print(i['first_steady'], i['steady_count'])")"

# A real two-GPU DDP rank (tests/fixtures/gpu/ddp): at the second step DDP rebuilds its buckets, a
# host gap of about 17 ms before a Broadcast that no later step runs. That step (1.97x the median,
# under the 2x threshold) is one-time work: warm-up, with the first.
"$GPT" report --format json -o "$TMP/ddp-rank0.json" "$GPU/ddp/ddp-clean-overlapped-rank0.sqlite"
expect "ddp bucket rebuild is warm-up, named" "2 True" \
	"$(q ddp-rank0 "i = tp['iterations']; print(i['first_steady'], 'one-time work: ncclDevKernel_Broadcast' in tp['phases'][1]['reason'])")"

# --step picks the iterations; a pattern that matches nothing is an error.
"$GPT" report --format json --step '^forward$' -o "$TMP/step.json" "$GPU/train_small.sqlite"
expect "--step" "step ^forward$ 20" \
	"$(python3 -c "import json; i = json.load(open('$TMP/step.json'))['phases'][0]['iterations']; print(i['source'], i['name'], i['count'])")"
expect_exit "--step matching nothing" 2 "matches no NVTX range" "$GPT" report --step nope "$GPU/train_small.sqlite"
expect_exit "--step bad pattern" 2 "invalid --step" "$GPT" report --step '(' "$GPU/train_small.sqlite"

# --whole-trace judges everything, as before phases existed.
"$GPT" report --format json --whole-trace -o "$TMP/whole.json" "$GPU/train_small.sqlite"
expect "--whole-trace" "False" "$(python3 -c "import json; print(json.load(open('$TMP/whole.json'))['steady_only'])")"
# Ranges in a library's NVTX domain are no iteration candidates (issue 31): the precision pair's
# 'step' ranges moved into a domain created as "CCCL" and renamed as CUB names them. Without --step
# the iterations come from the kernel sequence; --step still picks them when asked.
cp "$GPU/pairs/precision-bad.sqlite" "$TMP/cccl.sqlite"
sqlite3 "$TMP/cccl.sqlite" "UPDATE NVTX_EVENTS SET domainId = 7, text = 'cub::DeviceRadixSort', textId = NULL
	WHERE COALESCE(text, (SELECT value FROM StringIds WHERE id = textId)) = 'step';
	INSERT INTO NVTX_EVENTS(start, eventType, text, globalTid, domainId)
	SELECT MIN(start) - 1, 75, 'CCCL', globalTid, 7 FROM NVTX_EVENTS WHERE domainId = 7"
expect "library domain is no step" "kernel-sequence" "$("$GPT" report -q --format json "$TMP/cccl.sqlite" |
	python3 -c "import json,sys; print(json.load(sys.stdin)['phases'][0]['iterations']['source'])")"
expect "library domain by --step" "step" "$("$GPT" report -q --format json --step 'cub::' "$TMP/cccl.sqlite" |
	python3 -c "import json,sys; print(json.load(sys.stdin)['phases'][0]['iterations']['source'])")"
# The same on a real trace (H200, tests/gpu/busy/cub_loop.py: 3 warm-up + 12 steps, no NVTX of its
# own, 90 cub::DeviceRadixSort ranges in CCCL's domain): before, the iterations were those ranges;
# now the kernel sequence, one iteration per step. The kernel it recurs by is AdamW's second
# (LerpFunctor); each iteration starts instead after the idle gap that recurs once a step, the
# host's ~300 us in AdamW's Python before its first kernel (the weight decay's foreach multiply).
iters() { "$GPT" report -q --format json "$1" | python3 -c "import json,sys
i = json.load(sys.stdin)['phases'][0]['iterations']; s = i['start']
print(i['source'], i['count'], s['by'], int(250e3 < (s['gap_ns'] or 0) < 1e6), i['name'].split('::')[-1])"; }
expect "cub_loop iterations" "kernel-sequence 15 recurring-gap 1 multiplies<float>, float)" \
	"$(iters "$GPU/real/cub_loop.sqlite")"
# The same loop with a range of the user's own, one per step, beside CUB's six per step in CCCL's
# domain: the user's range is the iteration (issue 31). The ranges are laid over the kernel
# sequence's iterations (default domain, push/pop on the program's thread).
cp "$GPU/real/cub_loop.sqlite" "$TMP/cub_user.sqlite"
"$GPT" report -q --format json "$GPU/real/cub_loop.sqlite" | python3 -c "
import json, sys
tid = sys.argv[1]
for it in json.load(sys.stdin)['phases'][0]['iterations']['items']:
    print(\"INSERT INTO NVTX_EVENTS(start, end, eventType, text, globalTid, domainId) VALUES (%d, %d, 59, 'train_step', %s, 0);\" %
          (it['start_ns'] - 50000, it['end_ns'] - 50000, tid))" \
	"$(sqlite3 "$GPU/real/cub_loop.sqlite" 'SELECT globalTid FROM NVTX_EVENTS LIMIT 1')" | sqlite3 "$TMP/cub_user.sqlite"
expect "cub_loop with a user range" "nvtx train_step 15" "$("$GPT" report -q --format json "$TMP/cub_user.sqlite" |
	python3 -c "import json,sys; i = json.load(sys.stdin)['phases'][0]['iterations']; print(i['source'], i['name'], i['count'])")"
# CloverLeaf (nsys export, A100): each timestep starts with ideal_gas after the host's ~0.84 ms
# between timesteps (the dt reduction read back): not the recurring update_halo kernel.
expect "cloverleaf iterations" "kernel-sequence 10 recurring-gap 1 Range2d, T1)" "$(iters "$CLOVER")"
expect "cloverleaf starts at ideal_gas" "1" "$("$GPT" report "$CLOVER" | grep -c '^  iterations .*idle gap, first kernel .*ideal_gas_kernel')"
# resnet18 (H100, GPU-bound: no gap recurs above launch latency): at SGD's first kernel. The first
# step's SGD differs (no momentum buffers yet) and the last's has no step after it: 38 of 40.
expect "resnet iterations" "kernel-sequence 38 optimizer 0 multiplies<float>, float)" \
	"$(iters "$GPU/real/resnet.sqlite")"
finish
