#!/bin/bash
# Issue 38's busy-time pairs on real traces (tests/fixtures/gpu/advice, recorded on an H200 by
# tests/gpu/busy/batch6.sh from tests/gpu/busy/advice.py; untraced step medians in runs.tsv):
# each bottleneck's finding estimates within 2x of the measured saving of its fix, its "already
# optimized" variant gets no advice to do what it does, and each advising finding says which signs
# of the program's state it read.
. "$SRC/tests/analyzer/lib.sh"
A=$SRC/tests/fixtures/gpu/advice
command -v xz >/dev/null || { echo "skipped: xz is needed"; exit 77; }
for t in "$A"/*.sqlite.xz; do
	n=$(basename "$t" .sqlite.xz)
	xz -dc "$t" > "$TMP/$n.sqlite"
	"$GPT" report --format json -o "$TMP/$n.json" "$TMP/$n.sqlite"
done
cat > "$TMP/check.py" <<'PY'
import json, sys
tmp, tsv, what = sys.argv[1:4]
median = {}
for line in open(tsv):
    prog, variant, how, text = line.rstrip("\n").split("\t")
    if how == "untraced":
        kv = dict(w.split("=", 1) for w in text.split() if "=" in w)
        median.setdefault((prog, variant), float(kv["median_step_us"]) * 1e3)
load = lambda n: json.load(open("%s/advice-%s.json" % (tmp, n)))
def finding(d, rule):
    f = [f for f in d["findings"] if f["rule"] == rule]
    return f[0] if f else None
def within(prog, bad, fixed, rule):
    d = load("%s-%s" % (prog, bad))
    f = finding(d, rule)
    assert f and f["severity"] in ("warning", "critical"), [(g["rule"], g["severity"]) for g in d["findings"]]
    estimate = f["recoverable_ns"] / d["steady_iterations"]
    measured = median[(prog, bad)] - median[(prog, fixed)]
    assert 0.5 <= estimate / measured <= 2.0, (estimate, measured)
    assert any(e.startswith("signs read in the trace:") for e in f["evidence"]), f["evidence"]
    return f, "%.0f us estimated, %.0f us measured" % (estimate / 1e3, measured / 1e3)
def advice(d):
    return " ".join(f["fix"] for f in d["findings"])
if what == "fusion":
    out = []
    for prog in ("rmsnorm", "lngelu", "scores"):
        f, line = within(prog, "eager", "compiled", "fusion")
        # labelled by its own kernels (ATen's), not by the GEMM that ended a run
        assert "ATen" in f["message"] and "cuBLAS" not in f["message"], f["message"]
        assert "torch.compile" in f["fix"], f["fix"]
        compiled = load(prog + "-compiled")
        loud = [g["rule"] for g in compiled["findings"] if g["rule"] == "fusion" and g["severity"] != "info"]
        assert not loud, (prog, loud)
        out.append("%s %s" % (prog, line))
    print("ok " + "; ".join(out))
elif what == "layout":
    f, line = within("conv", "nchw", "cl", "layout-conversion")
    assert "channels_last" in f["fix"], f["fix"]
    nchw = load("conv-nchw")
    others = [g["rule"] for g in nchw["findings"] if g["rule"] != "layout-conversion" and "channels_last" in g["fix"]]
    assert not others, others	# the format's cost and its fix are said once
    cl = load("conv-cl")
    assert finding(cl, "layout-conversion") is None
    assert "channels_last" not in advice(cl), advice(cl)
    signs = [e for g in cl["findings"] for e in g["evidence"] if e.startswith("signs read")]
    assert signs and all("channels_last (NHWC convolutions, no layout conversions)" in e for e in signs), signs
    print("ok " + line)
elif what == "precision":
    f, line = within("mixed", "fp32", "bf16", "precision")
    assert "autocast" in f["fix"], f["fix"]
    bf16 = load("mixed-bf16")
    assert finding(bf16, "precision") is None
    assert "autocast" not in advice(bf16), advice(bf16)
    signs = [e for g in bf16["findings"] for e in g["evidence"] if e.startswith("signs read")]
    share = lambda e: int(e.split("bf16/fp16 on ")[1].split("%")[0])
    assert signs and all(share(e) >= 50 and "no convolutions" in e for e in signs), signs
    print("ok " + line)
PY
for w in fusion layout precision; do
	out=$(python3 "$TMP/check.py" "$TMP" "$A/runs.tsv" $w 2>&1 | tail -1)
	expect "advice $w (${out#ok })" "ok" "${out%% *}"
done
finish
