#!/usr/bin/env python3
"""The GPU utilization chart of an HTML report (analyzer/report/html/utilization.c) held to its timeline, to
the trace and to gpt-trace stats.

usage: html-util.py PAGE.html TRACE.sqlite STATS.json REPORT.json metrics|none [RENDERED.json]

metrics: the trace holds GPU metrics. In each timeline window (SVG), one chart per GPU with its
three series (SMs active, tensor pipes, DRAM read + write), one value per pixel column; the chart's
window, bucket and x range are the SVG's (the lanes above are drawn over the same CHART_BUCKETS
columns from the same x); each series' path steps through its values; each series' mean over the
window (weighted by each column's sampled time) equals a time-weighted SQL mean of the trace's
GPU_METRICS rows over the same window, samples ending where the next starts (or one period after a
gap) and unstored samples counting 0, within 0.1 percentage point; so do the five columns with the
most SMs active, one by one; and the "what bounds the GPU" summary holds the JSON report's steady
window and gpt-trace stats' kernel time by class. With RENDERED.json (html-check.js's view of the
page in Chromium): the page loaded quietly, and each series is drawn from its first sampled column
to past its last on the SVG's own scale, where the lanes above draw those columns.
none: no chart and no summary.

Prints "ok" or the first mismatch (an AssertionError)."""
import html.parser
import json
import math
import re
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sample_means  # noqa: E402

TL_LEFT, BUCKETS = 190, 1000
page_path, trace_path, stats_path, report_path = sys.argv[1:5]
mode = sys.argv[5]
rendered = json.load(open(sys.argv[6])) if len(sys.argv) > 6 else None
page = open(page_path, encoding="utf-8").read()
stats = json.load(open(stats_path))
rep = json.load(open(report_path))


class Page(html.parser.HTMLParser):
    """The timeline SVGs, the util groups in each with their paths, the bounds summary's elements."""

    def __init__(self):
        super().__init__()
        self.svgs, self.svg, self.util, self.bounds, self.bound_rows, self.axis_x = [], None, None, None, [], {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "svg" and "timeline" in cls:
            self.svg = {"attrs": a, "utils": [], "lanes": 0}
            self.svgs.append(self.svg)
        elif tag == "g" and "util" in cls and self.svg is not None:
            self.util = {"attrs": a, "series": {}}
            self.svg["utils"].append(self.util)
        elif tag == "g" and "tl-lane" in cls and self.svg is not None:
            self.svg["lanes"] += 1
        elif tag == "path" and "util-series" in cls and self.util is not None:
            self.util["series"][a["data-series"]] = a
        elif tag == "line" and "axis" in cls and self.svg is not None and a.get("x1") == a.get("x2"):
            self.svg["axis_x"] = int(a["x1"])
        elif tag == "div" and a.get("id") == "bounds":
            self.bounds = a
        elif tag == "tr" and "bound" in cls:
            self.bound_rows.append(a)

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg = None


p = Page()
p.feed(page)
assert p.svgs, "no timeline"

if mode == "none":
    assert all(not s["utils"] for s in p.svgs), "a utilization chart on a trace without GPU metrics"
    assert p.bounds is None and not p.bound_rows, "a bounds summary on a trace without GPU metrics"
    assert "GPU utilization rows" not in page and "util-series" not in page
    print("ok")
    sys.exit(0)

db = sqlite3.connect(trace_path)


def sql_mean(device, names, lo, hi):
    """sample_means.mean over the trace (unstored samples counting 0)."""
    return sample_means.mean(db, device, names, lo, hi)


METRICS = {"sm": ["SMs Active [Throughput %]"], "tensor": ["Tensor Active [Throughput %]"],
           "dram": ["DRAM Read Bandwidth [Throughput %]", "DRAM Write Bandwidth [Throughput %]"]}
tensor_idle, nseries, pcie_peak = 0, 0, 0
for svg in p.svgs:
    sa = svg["attrs"]
    w0, w1, width = int(sa["data-start-ns"]), int(sa["data-end-ns"]), int(sa["data-bucket-ns"])
    assert len(svg["utils"]) == 1, ("one chart per GPU in each window", len(svg["utils"]))
    assert svg["lanes"] >= 1
    u = svg["utils"][0]
    ua = u["attrs"]
    # the same window, columns and x as the timeline above it
    assert (int(ua["data-start-ns"]), int(ua["data-end-ns"]), int(ua["data-bucket-ns"])) == (w0, w1, width), ua
    assert int(ua["data-x0"]) == svg["axis_x"] == TL_LEFT and int(ua["data-x1"]) == TL_LEFT + BUCKETS, ua
    assert w1 - w0 == width * BUCKETS
    first, last, device = int(ua["data-first-ns"]), int(ua["data-last-ns"]), int(ua["data-device"])
    has_pcie = db.execute("SELECT count(*) FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS i USING (typeId, metricId) "
                          "WHERE (g.typeId & 255) = ? AND i.metricName LIKE 'PCIe%'", (device,)).fetchone()[0] > 0
    # a PCIe band exactly where the device's samples have PCIe
    assert set(u["series"]) == {"sm", "tensor", "dram"} | ({"pcie"} if has_pcie else set()), u["series"].keys()
    nseries += len(u["series"])
    values = {}
    for name, path in u["series"].items():
        vals = [None if v == "-" else float(v) for v in path["data-pct"].split()]
        assert len(vals) == BUCKETS, (name, len(vals))
        values[name] = vals
        # the path steps through the values: its x from the first sampled column to past the last
        xs = [int(x) for x in re.findall(r"[MH](\d+)", path["d"])]
        sampled = [b for b, v in enumerate(vals) if v is not None]
        assert sampled and min(xs) == TL_LEFT + sampled[0] and max(xs) == TL_LEFT + sampled[-1] + 1, (name, xs[:3])
    cov = [max(0, min(w0 + (b + 1) * width, last) - max(w0 + b * width, first)) for b in range(BUCKETS)]
    assert all((values["sm"][b] is None) == (cov[b] == 0) for b in range(BUCKETS)), "blank exactly where not sampled"
    lo, hi = max(w0, first), min(w1, last)
    for name, names in METRICS.items():
        shown = sum(values[name][b] * cov[b] for b in range(BUCKETS) if cov[b]) / sum(cov)
        want, median = sql_mean(device, names, lo, hi)
        assert median == int(ua["data-period-ns"]), (median, ua["data-period-ns"])
        assert abs(shown - want) < 0.1, (sa["data-window"], name, "chart mean", shown, "SQL", want)
    # the busiest columns, one by one
    top = sorted((b for b in range(BUCKETS) if cov[b] == width), key=lambda b: -values["sm"][b])[:5]
    for b in top:
        want, _ = sql_mean(device, METRICS["sm"], w0 + b * width, w0 + (b + 1) * width)
        assert abs(values["sm"][b] - want) < 0.1, (sa["data-window"], b, values["sm"][b], want)
    tensor_idle += sum(1 for b in range(BUCKETS) if cov[b] and values["sm"][b] >= 90 and values["tensor"][b] < 1)
    # PCIe: the busier direction's mean in each column, checked in the busiest ones
    for b in sorted((b for b in range(BUCKETS) if cov[b] == width and has_pcie), key=lambda b: -values["pcie"][b])[:5]:
        want = max(sql_mean(device, ["PCIe %s Throughput [Throughput %%]" % d], w0 + b * width,
                            w0 + (b + 1) * width)[0] for d in ("RX", "TX"))
        assert abs(values["pcie"][b] - want) < 0.1, (sa["data-window"], b, values["pcie"][b], want)
        pcie_peak = max(pcie_peak, values["pcie"][b])

# What bounds the GPU: the report's steady window, stats' classes.
eff = stats["gpu_efficiency"]
sw = rep["steady_window"]
if eff["kernel_ns"] == 0:	# no kernel ran (copies only): nothing to bound, no summary
    assert p.bounds is None, "a bounds summary without kernels"
else:
    assert p.bounds is not None, "no bounds summary"
    assert (int(p.bounds["data-start-ns"]), int(p.bounds["data-end-ns"])) == (sw["start_ns"], sw["end_ns"]) == \
        (eff["start_ns"], eff["end_ns"]), (p.bounds, sw)
    assert int(p.bounds["data-kernel-ns"]) == eff["kernel_ns"] and int(p.bounds["data-samples"]) == eff["samples"]
    shown = {r["data-class"]: int(r["data-ns"]) for r in p.bound_rows}
    assert shown == {k: v["ns"] for k, v in eff["classes"].items() if v["ns"]}, (shown, eff["classes"])

# As Chromium drew it: quiet, and each series on its SVG's scale (viewBox 1200 wide).
if rendered:
    assert rendered["console"] == [] and rendered["exceptions"] == [] and rendered["requests"] == [], rendered["console"]
    assert rendered["scrollWidth"] <= rendered["innerWidth"], "wider than the window"
    drawn = [s for s in rendered["svgs"] if s["cls"] == "timeline"]
    paths = [e for e in rendered["els"] if e["tag"] == "path" and "util-series" in e["cls"].split()]
    assert len(drawn) == len(p.svgs) and len(paths) == nseries, (len(drawn), len(paths))
    first_path = 0
    for svg, box in zip(p.svgs, drawn):
        scale = box["w"] / 1200
        n = len(svg["utils"][0]["series"])
        first_path += n
        for e in paths[first_path - n:first_path]:
            vals = [b for b, v in enumerate(e["data"]["pct"].split()) if v != "-"]
            left, right = box["x"] + (TL_LEFT + vals[0]) * scale, box["x"] + (TL_LEFT + vals[-1] + 1) * scale
            assert abs(e["x"] - left) < 0.5 and abs(e["x"] + e["w"] - right) < 0.5, (e["data"]["series"], e["x"], left)
print("ok tensor-idle-columns=%d pcie-peak=%.0f" % (tensor_idle, pcie_peak))
