#!/bin/bash
# The sample pairs (a bottleneck and its fix; samples/steady_*.cu, tests/gpu/pairs/*.py), recorded
# on the H200 by tests/gpu/pairs/run.sh with the program's own step times in pairs.tsv. For each
# pair: the bad variant's top steady-state finding names the problem, the fixed variant has no
# warning or critical finding, and the estimated saving per iteration (the bad report's total
# recoverable time over its steady iterations) is within 2x of the measured one (the difference of
# the untraced mean step times, which cover the whole loop and its final synchronization).
. "$SRC/tests/analyzer/lib.sh"
P=$SRC/tests/fixtures/gpu/pairs

for t in "$P"/*-bad.sqlite "$P"/*-fixed.sqlite "$P"/*-clean.sqlite; do
	"$GPT" report --format json -o "$TMP/$(basename "$t" .sqlite).json" "$t"
done

cat > "$TMP/pair.py" <<'PY'
import json, sys
tmp, tsv, name, rule, words = sys.argv[1:6]
# Rules whose findings belong to the model in both variants, not to the pair's bottleneck.
model = set(sys.argv[6].split(",")) if len(sys.argv) > 6 else set()
mean = {}
for line in open(tsv):
    f = line.rstrip("\n").split("\t")
    if f[0] == name:
        kv = dict(w.split("=", 1) for w in f[2].split() if "=" in w)
        mean[f[1]] = float(kv["mean_step_us"]) * 1e3
bad = json.load(open("%s/%s-bad.json" % (tmp, name)))
fixed = json.load(open("%s/%s-fixed.json" % (tmp, name)))
top = [f for f in bad["findings"] if f["rule"] not in model][0]
assert top["rule"] == rule and top["severity"] in ("warning", "critical"), (top["rule"], top["severity"])
for w in words.split(",") if words else []:
    assert w in top["message"] + " ".join(top["evidence"]) + top["fix"], (w, top["message"])
loud = [f["rule"] for f in fixed["findings"] if f["severity"] != "info" and f["rule"] not in model]
assert not loud, loud
estimate = top["recoverable_ns"] / bad["steady_iterations"] if model else \
    bad["recoverable_ns"] / bad["steady_iterations"]
measured = mean["bad"] - mean["fixed"]
assert measured > 0 and 0.5 <= estimate / measured <= 2.0, (estimate, measured)
print("ok %.0f us estimated, %.0f us measured" % (estimate / 1e3, measured / 1e3))
PY
pair() {
	local out
	out=$(python3 "$TMP/pair.py" "$TMP" "$P/pairs.tsv" "$@" 2>&1 | tail -1)
	expect "pair $1 (${out#ok })" "ok" "${out%% *}"
}
# A blocking read-back of the loss every step (cudaMemcpy, to pageable memory), then host work. Two
# rules see that copy; the what-if replay orders pageable-memcpy's fix (pinned and asynchronous)
# first, as it saves what sync-memcpy's would and a few us more, and leaves sync-memcpy nothing.
pair steady_sync pageable-memcpy cudaMemcpy
# cudaMalloc + cudaFree of a scratch buffer every step: allocation-churn claims the host-wait spent
# in the calls (idle-gaps, whose headline reads "mostly allocation", keeps the rest).
pair steady_malloc allocation-churn "cudaFree_v3020 200,cudaMalloc_v3020 200,1.0 per iteration,Allocate once"
# A CPU-bound input pipeline before each step's kernels, then a stream sync: the sync keeps the
# host from preparing the next batch while the GPU runs.
pair steady_hostbound excessive-sync cudaStreamSynchronize
# PyTorch: loss.item() every step vs accumulating on the GPU. Its MLP runs FP32 GEMMs on the CUDA
# cores in both variants (precision, the model's finding: the estimate compared is the top one's).
pair item_sync excessive-sync cudaStreamSynchronize precision
# PyTorch's default FP32 matmuls (SIMT sgemm) vs TF32 allowed: the GEMMs' time times 1 - 67/494.7
# (Hopper's FP32 over TF32 dense peak) against the measured difference of the step times. The
# MLP's GELU backward and bias-gradient sums are eager element-wise runs in both variants (fusion,
# the model's).
pair precision precision "FP32 matrix products,set_float32_matmul_precision,(cuBLAS)" fusion
# An eager chain of eleven element-wise ops over 256 MB tensors vs the same under torch.compile.
pair fusion fusion "element-wise,torch.compile"

# PyTorch: torch.cuda.empty_cache() after every step vs not (H100, 2026-11-27): every step frees the
# allocator's cache (cudaFree, which synchronizes) and allocates it again. Its FP32 MLP is the model's
# precision finding in both variants.
pair empty_cache allocation-churn "cudaFree_v3020 78,cudaMalloc_v3020 78,4.0 per iteration,empty_cache(),expandable_segments" precision

# A monitoring loss kept with its graph every step vs a detached clone (H200): memory in use grows
# by the graph's activations each step (memory-growth) in the bad variant and not in the fixed one.
# The loop is GPU-bound, so the bad variant's cudaMalloc calls cost no step time: allocation-churn
# says the GPU idled 0 ns for them, and the untraced means differ by 3.7 us of 3 ms. The estimate
# and the measured difference must agree within 3% of the step (README.md, "The leak pair").
expect "pair leak" "ok" "$(python3 - "$TMP" "$P/pairs.tsv" <<'PY' 2>&1 | tail -1
import json, re, sys
tmp, tsv = sys.argv[1:3]
mean = {}
for line in open(tsv):
    f = line.split("\t")
    if f[0] == "leak":
        mean[f[1]] = float(dict(w.split("=", 1) for w in f[2].split() if "=" in w)["mean_step_us"]) * 1e3
bad = json.load(open(tmp + "/leak-bad.json"))
fixed = json.load(open(tmp + "/leak-fixed.json"))
rate = lambda d: [float(re.search(r"grows by ([0-9.]+) MB", f["message"]).group(1))
                  for f in d["findings"] if f["rule"] == "memory-growth"]
assert rate(bad) and rate(bad)[0] > 50, rate(bad)
assert not rate(fixed), rate(fixed)
churn = [f for f in bad["findings"] if f["rule"] == "allocation-churn"][0]
assert "4.0 per iteration" in churn["message"], churn["message"]
assert not [f for f in fixed["findings"] if f["rule"] == "allocation-churn"]
estimate = churn["recoverable_ns"] / bad["steady_iterations"]
measured = mean["bad"] - mean["fixed"]
assert abs(estimate - measured) <= 0.03 * mean["fixed"], (estimate, measured)
print("ok")
PY
)"

# Memory filled to 92% of the H100 vs 50%: near-oom names the peak against TARGET_INFO_GPU's
# capacity (the ballast allocation and its iteration); no finding in the fixed variant.
expect "pair near_oom" "ok" "$(python3 - "$TMP" <<'PY' 2>&1 | tail -1
import json, sys
bad = json.load(open(sys.argv[1] + "/near_oom-bad.json"))
fixed = json.load(open(sys.argv[1] + "/near_oom-fixed.json"))
oom = [f for f in bad["findings"] if f["rule"] == "near-oom"]
assert oom and oom[0]["severity"] == "warning" and "92.2% of its 85.02 GB" in oom[0]["message"], oom
assert "iteration #2" in oom[0]["message"] and "77.98 GB" in " ".join(oom[0]["evidence"]), oom[0]
assert not [f for f in fixed["findings"] if f["rule"] == "near-oom"]
print("ok")
PY
)"

# PyTorch DataLoader: pageable batches with .cuda() vs pin_memory=True and non_blocking. The
# pageable copy blocks the host until the previous step is done, so the step's Python launch
# overhead is exposed too: the top finding is that exposed host time (idle-gaps), then
# pageable-memcpy; both are gone with the fix. The conv net's small grids (small-grid, a warning in
# the H200 recording, below the warning line in the H100 one) are the model's, and so are its
# eager element-wise runs (fusion, 2.1 ms per step in both: the input normalization and the
# activations) and its NCHW layout (layout-conversion, in both), which the estimate leaves out.
expect "pair dataloader_pinned" "ok" "$(python3 - "$TMP" "$P/pairs.tsv" <<'PY' 2>&1 | tail -1
import json, sys
tmp, tsv = sys.argv[1:3]
mean = {}
for line in open(tsv):
    f = line.split("\t")
    if f[0] == "dataloader_pinned":
        mean[f[1]] = float(dict(w.split("=", 1) for w in f[2].split() if "=" in w)["mean_step_us"]) * 1e3
bad = json.load(open(tmp + "/dataloader_pinned-bad.json"))
fixed = json.load(open(tmp + "/dataloader_pinned-fixed.json"))
loud = lambda d: {f["rule"] for f in d["findings"] if f["severity"] != "info"}
assert loud(bad) >= {"idle-gaps", "pageable-memcpy"}, loud(bad)
model = {"fusion", "layout-conversion"}
assert loud(fixed) <= {"small-grid"} | model, loud(fixed)
estimate = sum(f["recoverable_ns"] for f in bad["findings"] if f["rule"] not in model) / bad["steady_iterations"]
measured = mean["bad"] - mean["fixed"]
assert 0.5 <= estimate / measured <= 2.0, (estimate, measured)
print("ok")
PY
)"

# bf16 autocast: the GEMMs run on the Tensor Cores (nvjet kernels), no precision finding.
expect "precision_bf16 clean of precision" "[]" "$(python3 -c "
import json; d = json.load(open('$TMP/precision_bf16-clean.json'))
print([f['rule'] for f in d['findings'] if f['rule'] == 'precision'])")"

# Warm-up of 2 s (an NVTX 'compile' range, 20 autotuning launches with syncs) before a clean loop:
# one-time costs, no warning or critical finding.
expect "steady_warmup clean" "0" "$(python3 -c "
import json; d = json.load(open('$TMP/steady_warmup-clean.json'))
print(sum(f['severity'] != 'info' for f in d['findings']))")"
expect "steady_warmup one-time" "1" "$(python3 -c "
import json; d = json.load(open('$TMP/steady_warmup-clean.json')); ph = d['phases'][0]['phases']
print(int(ph[0]['duration_ns'] + ph[1]['duration_ns'] > 1.5e9 and any('compile' in (c['detail'] or '') for c in ph[0]['idle_causes'] + ph[1]['idle_causes'])))")"
finish
