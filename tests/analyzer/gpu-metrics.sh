#!/bin/bash
# What bounds each kernel, from sampled GPU metrics (analyzer/analysis/kernel-efficiency.h, `gpt-trace stats`):
# a synthetic trace whose answers are worked out in data/gpu-metrics.sql, the same rows in an
# nsys-only layout (no GPT_* table), and the H200 fixtures of tests/fixtures/gpu/busy (README there).
. "$SRC/tests/analyzer/lib.sh"

make_trace "$TMP/m.sqlite" "$SRC/tests/analyzer/data/gpu-metrics.sql"

# one line per kernel: class, SM %, tensor %, DRAM read+write %, GB/s, sampled ns
summary() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)["gpu_efficiency"]
print(" ".join("%s=%d" % (k, v["ns"]) for k, v in d["classes"].items()))
for k in d["kernels"]:
    f = lambda v: "-" if v is None else "%.3f" % v
    print(k["name"], k["class"], f(k["sm_active_pct"]), f(k["tensor_active_pct"]),
          f(k["dram_read_pct"]), f(k["dram_write_pct"]), f(k["dram_gbps"]), k["sampled_ns"])'
}

expect "synthetic: classes and per-kernel means" "unknown=500 compute-bound=1500 memory-bound=2000 latency-bound=2000
copy4 memory-bound 100.000 0.000 42.500 32.500 2514.000 2000
pointer_chase latency-bound 1.000 0.000 0.000 0.000 0.000 2000
gemm compute-bound 94.000 73.333 10.000 2.667 424.587 1500
late unknown - - - - - 0" "$("$GPT" stats -q -f json -w 0:1 "$TMP/m.sqlite" | summary)"

# Chrome/Perfetto counter tracks: one step per sample, repeats left out, 0 after the last
expect "counter track of SMs active" "100 96 90 1 0" "$("$GPT" export -q -f chrome -o "$TMP/m.json" "$TMP/m.sqlite" >/dev/null &&
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
print(" ".join("%g" % list(e["args"].values())[0] for e in ev
               if e.get("ph") == "C" and e["name"] == "GPU 0 SMs Active [Throughput %]"))' "$TMP/m.json")"

# PCIe RX/TX tracks only where the trace sampled PCIe (the synthetic trace has not: no track), with
# nsys's metric names
pcie_tracks() {
	"$GPT" export -q -f chrome -o "$TMP/$1.json" "$TMP/$1.sqlite" >/dev/null && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
names = sorted({e["name"] for e in ev if e.get("ph") == "C" and "PCIe" in e["name"]})
print("; ".join(n + ": " + " ".join("%g" % list(e["args"].values())[0] for e in ev
                                     if e.get("ph") == "C" and e["name"] == n) for n in names) or "none")' "$TMP/$1.json"
}
expect "no PCIe sampled, no PCIe track" "none" "$(pcie_tracks m)"
cp "$TMP/m.sqlite" "$TMP/pcie.sqlite"
sqlite3 "$TMP/pcie.sqlite" "INSERT INTO TARGET_INFO_GPU_METRICS VALUES
		(281479271677952, 0, 'GPU 0 PM sampling (gpt-trace)', 7, 'PCIe RX Throughput [Throughput %]'),
		(281479271677952, 0, 'GPU 0 PM sampling (gpt-trace)', 8, 'PCIe TX Throughput [Throughput %]');
	INSERT INTO GPU_METRICS (rawTimestamp, timestamp, typeId, metricId, value) VALUES
		(0, 0, 281479271677952, 7, 92), (0, 0, 281479271677952, 8, 1),
		(0, 1000, 281479271677952, 7, 92), (0, 1000, 281479271677952, 8, 3)"
expect "PCIe tracks" "GPU 0 PCIe RX Throughput [Throughput %]: 92 0; GPU 0 PCIe TX Throughput [Throughput %]: 1 3 0" \
	"$(pcie_tracks pcie)"

# nsys exports have no GPT_META: the same rows read the same
sqlite3 "$TMP/m.sqlite" "DROP TABLE GPT_META; DROP TABLE GPT_GPU_METRICS" 2>/dev/null
expect "nsys layout" "copy4 memory-bound" "$("$GPT" stats -q -f json -w 0:1 "$TMP/m.sqlite" | summary | sed -n 2p | cut -d' ' -f1-2)"

# Kernels shorter than a sample: a sample's values are its interval's means, so it counts for a
# kernel only where the kernel fills at least half of it. Two samples at SM 90 / tensor 60: "tiny"
# runs twice in the first, 200 + 200 of its 1000 ns (40%: not judged, unknown); "wide" fills 600 ns
# of the second (compute-bound, the sample's values).
cp "$TMP/m.sqlite" "$TMP/short.sqlite"
sqlite3 "$TMP/short.sqlite" "INSERT INTO StringIds VALUES (5, 'tiny'), (6, 'wide');
	INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 4 LIMIT 1;
	INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 4 LIMIT 1;
	INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 4 LIMIT 1;
	UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = 5 + rowid, demangledName = 5, shortName = 5
		WHERE correlationId = 4 AND rowid > 4;
	UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 8000, end = 8200 WHERE correlationId = 5 + 5;
	UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 8500, end = 8700 WHERE correlationId = 5 + 6;
	UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 9000, end = 9600, demangledName = 6, shortName = 6
		WHERE correlationId = 5 + 7;
	INSERT INTO GPU_METRICS (rawTimestamp, timestamp, typeId, metricId, value) VALUES
		(0, 8000, 281479271677952, 2, 90), (0, 8000, 281479271677952, 3, 60),
		(0, 8000, 281479271677952, 5, 5), (0, 8000, 281479271677952, 6, 5),
		(0, 9000, 281479271677952, 2, 90), (0, 9000, 281479271677952, 3, 60),
		(0, 9000, 281479271677952, 5, 5), (0, 9000, 281479271677952, 6, 5),
		(0, 10000, 281479271677952, 2, 0), (0, 10000, 281479271677952, 3, 0),
		(0, 10000, 281479271677952, 5, 0), (0, 10000, 281479271677952, 6, 0);"
expect "short kernels: judged only by samples they fill half of" "wide compute-bound 90.000 60.000 5.000 5.000 335.200 600
tiny unknown - - - - - 0" \
	"$("$GPT" stats -q -f json -w 0:1 "$TMP/short.sqlite" | summary | grep -E '^(tiny|wide) ')"

# a trace without GPU metrics has no section
make_trace "$TMP/none.sqlite" "$SRC/tests/analyzer/data/basic.sql"
expect "no metrics, no section" "absent" "$("$GPT" stats -q -f json "$TMP/none.sqlite" |
	python3 -c 'import json,sys; print("present" if "gpu_efficiency" in json.load(sys.stdin) else "absent")')"
expect "text section title" "GPU busy time by what bounds it" \
	"$("$GPT" stats -q -w 0:1 "$TMP/m.sqlite" | grep -x 'GPU busy time by what bounds it')"

# H200 fixtures (steady state): FP32 GEMMs keep the SMs busy with the tensor pipes idle; TF32 and
# bf16 GEMMs run on the tensor pipes (HMMA); torch.compile's fused element-wise kernel is
# memory-bound.
F=$SRC/tests/fixtures/gpu/busy
gemms() {
	"$GPT" stats -q -f json "$F/$1.sqlite" | python3 -c '
import json, sys, re
d = json.load(sys.stdin)["gpu_efficiency"]
g = [k for k in d["kernels"] if re.search(sys.argv[1], k["name"])]
t = sum(k["time_ns"] for k in g)
mean = lambda f: sum(k[f] * k["time_ns"] for k in g) / t
print("%s tensor<5:%s tensor>40:%s sm>80:%s hmma>40:%s" % (
    ",".join(sorted(set(k["class"] for k in g))), mean("tensor_active_pct") < 5,
    mean("tensor_active_pct") > 40, mean("sm_active_pct") > 80, (mean("hmma_pct") or 0) > 40))' "$2"
}
expect "fp32 GEMMs: SMs busy, tensor pipes idle" "compute-bound tensor<5:True tensor>40:False sm>80:True hmma>40:False" \
	"$(gemms precision-fp32 'gemm|sgemm')"
expect "tf32 GEMMs: tensor pipes busy" "compute-bound tensor<5:False tensor>40:True sm>80:True hmma>40:True" \
	"$(gemms precision-tf32 'gemm')"
expect "bf16 GEMMs: tensor pipes busy" "compute-bound tensor<5:False tensor>40:True sm>80:True hmma>40:True" \
	"$(gemms precision-bf16 'nvjet')"
expect "compiled element-wise chain: memory-bound" "memory-bound tensor<5:False tensor>40:False sm>80:True hmma>40:False" \
	"$(gemms fusion-compiled 'triton_poi_fused')"

# the sample pair: membw's float4 copy saturates DRAM, chase's single-warp pointer chase waits on
# latency with the SMs almost idle; fusion eager's unfused element-wise kernels are memory-bound
expect "membw copy4: memory-bound" "memory-bound tensor<5:True tensor>40:False sm>80:True hmma>40:False" \
	"$(gemms membw 'copy4')"
expect "chase pointer_chase: latency-bound" "latency-bound tensor<5:True tensor>40:False sm>80:False hmma>40:False" \
	"$(gemms chase 'pointer_chase')"
expect "eager element-wise kernels: memory-bound" "memory-bound" \
	"$(gemms fusion-eager 'elementwise' | cut -d' ' -f1)"
expect "fixtures complete" "1 1 1 1 1 1 1" "$(for f in membw chase precision-fp32 precision-tf32 precision-bf16 fusion-eager fusion-compiled; do
	sqlite3 "$F/$f.sqlite" "SELECT value FROM GPT_META WHERE name = 'trace_complete'"; done | paste -sd' ')"

# tensor-idle, the vocabulary pair (tests/gpu/busy/vocab.py, H200): GPT-2 with 50257 tokens runs its
# LM head on cuBLAS's align1 CUTLASS kernels with the tensor pipes at 18-28%; padded to 50304 it does
# not. Untraced, the padding saved 0.57 ms per step (medians of 3: 18.80 against 18.23 ms); the
# rule's own estimate must be within 2x of that (its recoverable time is the what-if replay's,
# which finds the traced step host-bound: tests/analyzer/what-if.sh).
tensor_idle() {
	"$GPT" report -q -f json "$F/$1.sqlite" | python3 -c '
import json, sys
d = json.load(sys.stdin)
f = [x for x in d["findings"] if x["rule"] == "tensor-idle"]
if not f:
    print("none")
else:
    f = f[0]
    per = [x["estimate_ns"] for w in d["what_if"] for x in w["fixes"] if x["rule"] == "tensor-idle"][0] / d["steady_iterations"]
    print(f["owner"], "align1-fix:%s" % ("50304" in f["fix"]), "within2x:%s" % (570e3 / 2 <= per <= 570e3 * 2))'
}
expect "tensor-idle on the 50257-token vocabulary" "cublas align1-fix:True within2x:True" "$(tensor_idle vocab-bad)"
expect "tensor-idle clean once padded" "none" "$(tensor_idle vocab-fixed)"
expect "tensor-idle: not on FP32 (precision's) nor well-used bf16 GEMMs" "none none none" \
	"$(tensor_idle precision-fp32) $(tensor_idle precision-tf32) $(tensor_idle precision-bf16)"

# precision, confirmed by the samples: the FP32 GEMMs ran with the tensor pipes idle; with the
# threshold at 0% (every sampled kernel counts as tensor-busy), the samples overrule the names
expect "precision confirmed by GPU metrics" "1" \
	"$("$GPT" report -q -r precision "$F/precision-fp32.sqlite" | grep -c 'GPU metrics confirm it: over .* the tensor pipes were 0% busy and the SMs 9[0-9]%')"
expect "precision overruled by busy tensor pipes" "0" \
	"$("$GPT" report -q -r precision -s precision.max_tensor_pct=0 "$F/precision-fp32.sqlite" | grep -c 'precision  device')"

# PCIe and NVLink on real traces (2 H200s joined by NVLink, 13 metrics): copies' pinned copies fill
# the link both ways (PCIe RX and TX tracks reach 92% and 94%); peer copies of 4 x 64 MiB each way
# are sampled on both devices, each with NVLink TX above the bytes it sent (packets count more).
pcie_peaks() {
	"$GPT" export -q -f chrome -o "$TMP/c.json" "$F/traffic-copies.sqlite" >/dev/null && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
peak = {}
for e in ev:
    if e.get("ph") == "C" and "PCIe" in e["name"]:
        peak[e["name"]] = max(peak.get(e["name"], 0), list(e["args"].values())[0])
print(" ".join("%s=%g" % (k.split()[3], v) for k, v in sorted(peak.items())))' "$TMP/c.json"
}
expect "PCIe tracks on a real trace" "RX=92 TX=94" "$(pcie_peaks)"
expect "NVLink bytes on both devices of a peer-copy process" "0 1 1
1 1 1" "$(sqlite3 -readonly "$F/traffic-peer.sqlite" "SELECT g.deviceId, sum(g.nvlinkTxBytes) >= s.sent, sum(g.nvlinkRxBytes) >= s.sent
	FROM GPT_GPU_METRICS g JOIN (SELECT srcDeviceId AS dev, sum(bytes) AS sent FROM CUPTI_ACTIVITY_KIND_MEMCPY
	WHERE copyKind = 10 GROUP BY srcDeviceId) s ON s.dev = g.deviceId GROUP BY g.deviceId" | tr '|' ' ')"
expect "both devices' counter tracks" "GPU 0 SMs Active [Throughput %]
GPU 1 SMs Active [Throughput %]" "$("$GPT" export -q -f chrome -o "$TMP/p.json" "$F/traffic-peer.sqlite" >/dev/null &&
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
print("\n".join(sorted({e["name"] for e in ev if e.get("ph") == "C" and "SMs Active" in e["name"]})))' "$TMP/p.json")"

# stats' per-GPU means over the window equal SQL's over GPU_METRICS (sample_means.py, as
# html-util.py reads the chart)
device_means() {
	"$GPT" stats -q -f json "$1" > "$TMP/dm.json" && python3 - "$1" "$TMP/dm.json" "$SRC/tests/analyzer" <<'PY'
import json, sqlite3, sys
sys.path.insert(0, sys.argv[3])
import sample_means
db = sqlite3.connect(sys.argv[1])
eff = json.load(open(sys.argv[2]))["gpu_efficiency"]
names = {"sm_active_pct": "SMs Active [Throughput %]", "dram_read_pct": "DRAM Read Bandwidth [Throughput %]",
         "pcie_rx_pct": "PCIe RX Throughput [Throughput %]", "pcie_tx_pct": "PCIe TX Throughput [Throughput %]"}
out = []
for d in eff["devices"]:
    rows, _ = sample_means.samples(db, d["device"], [])
    lo, hi = max(rows[0][0], eff["start_ns"]), min(rows[-1][1], eff["end_ns"] or rows[-1][1])
    ok = d["ns"] == hi - lo
    for key, name in names.items():
        held = db.execute("SELECT count(*) FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS i USING (typeId, metricId) "
                          "WHERE (g.typeId & 255) = ? AND i.metricName = ?", (d["device"], name)).fetchone()[0]
        want = sample_means.mean(db, d["device"], [name], lo, hi)[0] if held else None
        ok &= d[key] is None if want is None else d[key] is not None and abs(d[key] - want) < 0.05
    out.append("%d:%s" % (d["device"], "ok" if ok else "differ %s" % d))
print(" ".join(out))
PY
}
expect "per-GPU means: membw" "0:ok" "$(device_means "$F/membw.sqlite")"
expect "per-GPU means: traffic-copies (PCIe)" "0:ok" "$(device_means "$F/traffic-copies.sqlite")"
expect "per-GPU means: precision-fp32" "0:ok" "$(device_means "$F/precision-fp32.sqlite")"

exit $((failures > 0))
