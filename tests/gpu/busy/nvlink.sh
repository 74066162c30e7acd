#!/bin/bash
# Issue 23's NVLink bytes, on a machine with two GPUs joined by NVLink, from the repository root with
# gpt-trace and libgpt_inject.so in BINDIR. usage: nvlink.sh BINDIR OUT  (OUT/nvlink.txt; ~2 minutes)
#  1. one process copies 256 MiB x 16 each way between its two GPUs (tests/gpu/busy/peer.py): both devices are
#     sampled with NVLink bytes (13 metrics), and each device's NVLink TX bytes are at least the
#     bytes it sent (CUPTI counts packets' overhead too: 1.7-1.8x in pm-probe/sets.sh);
#  2. the same with CUDA_VISIBLE_DEVICES=0 and a copy within the GPU: no peer, so NVLink is never
#     asked for (11 metrics; a single H200 refuses NVLink sets);
#  3. a 2-rank torchrun DDP job (tests/gpu/multi/mlp_ddp.py) with --gpu-metrics: every rank exits 0
#     and its device's samples hold NCCL's NVLink bytes.
# Prints PASS or FAIL lines; exit status 1 on any FAIL.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
B=${1:?usage: nvlink.sh BINDIR OUT}; OUT=${2:?}; mkdir -p "$OUT"; L=$OUT/nvlink.txt
W=$(mktemp -d /tmp/nvlink.XXXXXX); here=$(dirname "$0")
check() {	# check TRACE EXPECT: EXPECT is "peer", "none" or "ddp"
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
path, expect = sys.argv[1:3]
db = sqlite3.connect(path)
meta = dict(db.execute("SELECT name, value FROM GPT_META"))
have = "nvlrx__bytes" in meta.get("gpu_metrics_collected", "")
n = len(meta.get("gpu_metrics_collected", "").split(","))
print(f"  {path.split('/')[-1]}: complete={meta.get('trace_complete')}, {n} metrics, samples "
      f"{meta.get('gpu_metric_samples')}, decoding CPU {meta.get('gpu_metrics_decode_cpu_ms')} ms")
ok = meta.get("trace_complete") == "1" and have == (expect != "none")
for dev, rx, tx, samples in db.execute("""SELECT deviceId, sum(nvlinkRxBytes), sum(nvlinkTxBytes), count(*)
        FROM GPT_GPU_METRICS GROUP BY deviceId"""):
    sent = db.execute("""SELECT coalesce(sum(bytes), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 10
        AND srcDeviceId = ?""", (dev,)).fetchone()[0]
    print(f"  device {dev}: {samples} samples, NVLink RX {rx or 0:.4g} B, TX {tx or 0:.4g} B; peer copies sent {sent:.4g} B")
    if expect == "peer":
        ok &= (tx or 0) >= sent > 0
    elif expect == "ddp":
        ok &= (tx or 0) > 0 and (rx or 0) > 0
if expect == "peer":
    ok &= db.execute("SELECT count(DISTINCT deviceId) FROM GPT_GPU_METRICS").fetchone()[0] == 2
print(("PASS" if ok else "FAIL") + f" {expect}: {path.split('/')[-1]}")
sys.exit(0 if ok else 1)
PY
}
bad=0
{
	echo "# $(date -u +%F' '%T) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(nvidia-smi -L | wc -l) GPUs"
	GPT_TRACE_GPU_METRICS_DEBUG=1 timeout 120 "$B/gpt-trace" run -q -f --gpu-metrics -o "$W/peer.sqlite" -- \
		python3 "$here/peer.py" >"$W/peer.out" 2>&1
	echo "peer rc=$?: $(grep -h -E 'copied|tier' "$W/peer.out" | tr '\n' ';')"
	check "$W/peer.sqlite" peer || bad=1
	CUDA_VISIBLE_DEVICES=0 GPT_TRACE_GPU_METRICS_DEBUG=1 timeout 120 "$B/gpt-trace" run -q -f --gpu-metrics \
		-o "$W/one.sqlite" -- python3 "$here/peer.py" >"$W/one.out" 2>&1
	echo "one GPU rc=$?: $(grep -h -E 'copied|tier' "$W/one.out" | tr '\n' ';')"
	check "$W/one.sqlite" none || bad=1
	mkdir -p "$W/ddp"
	timeout 150 "$B/gpt-trace" run -q --gpu-metrics -o "$W/ddp/r%r.sqlite" -- torchrun --standalone \
		--nproc-per-node 2 "$here/../multi/mlp_ddp.py" --steps 30 --warmup 10 >"$W/ddp.out" 2>&1
	echo "torchrun 2 ranks rc=$?: $(grep -c median "$W/ddp.out") ranks printed their steps"
	for f in "$W"/ddp/*.sqlite; do check "$f" ddp || bad=1; done
} >"$L" 2>&1
cat "$L"
rm -rf "$W"
exit $bad
