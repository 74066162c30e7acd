#!/usr/bin/env python3
"""Hold an HTML report, as Chromium saw it (html-check.js's JSON), to the JSON report and to
gpt-trace stats of the same trace: the page loaded without console errors, exceptions or network
requests, drew the expected number of chart elements for the trace's data, and every number it
carries in data-* attributes equals the JSON's.

usage: html-compare.py PAGE.json REPORT.json STATS.json HTML-FILE
Prints "ok" or the first mismatch (an AssertionError)."""
import json
import re
import sys

page = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
stats = json.load(open(sys.argv[3]))
html = open(sys.argv[4], encoding="utf-8").read()


def els(cls, tag=None):
    """Elements whose class list holds cls (and whose tag is tag)."""
    return [e for e in page["els"] if cls in e["cls"].split() and (tag is None or e["tag"] == tag)]


def num(e, key):
    return int(e["data"][key])


# The page itself: loaded, quiet, offline, fits the window.
assert page["console"] == [], page["console"]
assert page["exceptions"] == [], page["exceptions"]
assert [l for l in page["logs"] if l["level"] in ("error", "warning")] == [], page["logs"]
assert page["requests"] == [], page["requests"]
assert page["scripts"] == 0 and page["external"] == [], (page["scripts"], page["external"])
assert not re.search(r"https?://|<link|@import|url\(", html, re.I), "the page names an external resource"
assert "Content-Security-Policy" in html
assert page["scrollWidth"] <= page["innerWidth"], ("wider than the window", page["scrollWidth"])
# "what to shorten first" where the report replayed a steady state; the memory section where the
# trace recorded memory events (the collector's since 2026-11-25)
sections = (["what-if"] if rep.get("what_if") else []) + ["phases", "timeline"] + (["memory"] if rep.get("memory") else []) + ["iterations", "kernels", "copies",
                                                                                 "idle", "findings"]
assert page["sections"] == sections, page["sections"]
for s in page["svgs"]:
    assert s["w"] > 0 and s["h"] > 0, s
assert page["load_ms"] < 2000, page["load_ms"]

# 1. The header.
summary = [e for e in page["els"] if e["id"] == "summary"][0]["data"]
assert int(summary["start-ns"]) == rep["span"]["start_ns"] and int(summary["end-ns"]) == rep["span"]["end_ns"]
assert int(summary["span-ns"]) == rep["span"]["duration_ns"] and int(summary["origin-ns"]) == rep["origin_ns"]
assert int(summary["kernels"]) == rep["events"]["kernels"] and int(summary["copies"]) == rep["events"]["copies"]
assert int(summary["api-calls"]) == rep["events"]["api_calls"]
devices = {(d["trace"], d["device"]): d for d in rep["gpu"]["devices"]}
shown = {(num(e, "trace"), num(e, "device")): e for e in els("device", "dd")}
assert set(shown) == set(devices), (shown.keys(), devices.keys())
for k, e in shown.items():
    assert num(e, "busy-ns") == devices[k]["busy_ns"] and num(e, "operations") == devices[k]["operations"], k

# Phases: every phase row, and the bar's segments, at the JSON's times.
for tp in rep["phases"]:
    rows = {e["data"]["phase"]: e for e in els("phase-row") if num(e, "trace") == tp["trace"]}
    segs = {e["data"]["phase"]: e for e in els("phase-seg") if num(e, "trace") == tp["trace"]}
    for ph in tp["phases"]:
        if rows:
            assert num(rows[ph["name"]], "duration-ns") == ph["duration_ns"], ph["name"]
        if ph["name"] in segs:
            s = segs[ph["name"]]
            assert (num(s, "start-ns"), num(s, "end-ns")) == (ph["start_ns"], ph["end_ns"]), ph["name"]
        elif rows:
            assert ph["duration_ns"] <= 0, ("phase missing from the bar", ph["name"])

# 2. The timeline: per window, one GPU row per device, one lane per stream, one step row per trace
# with iterations, one marker row per finding that says where its evidence lies.
windows = [s for s in page["svgs"] if s["cls"] == "timeline"]
ndev = len(rep["gpu"]["devices"])
streams = {(s["trace"], s["device"], s["stream"]) for s in stats["streams"]}
if ndev:
    assert len(windows) in (1, 2), windows
    assert len(windows) == (2 if rep["steady_window"] and 2 * (rep["steady_window"]["end_ns"] - rep["steady_window"]["start_ns"])
                            < rep["span"]["duration_ns"] else 1)
else:
    assert windows == [], windows
nwin = max(1, len(windows))
lanes = els("tl-lane")
assert len(lanes) == len(windows) * len(streams), (len(lanes), len(streams))
assert {(num(e, "trace"), num(e, "device"), num(e, "stream")) for e in lanes} == streams
stream_ops = {(s["trace"], s["device"], s["stream"]): s for s in stats["streams"]}
for e in lanes:
    s = stream_ops[(num(e, "trace"), num(e, "device"), num(e, "stream"))]
    assert num(e, "ops") == s["operations"] and num(e, "busy-ns") == s["busy_ns"], s
gpu_rows = els("tl-device")
assert len(gpu_rows) == len(windows) * ndev, (len(gpu_rows), ndev)
idle_total = 0
for e in gpu_rows[:ndev]:
    d = devices[(num(e, "trace"), num(e, "device"))]
    assert num(e, "busy-ns") == d["busy_ns"], ("device busy time differs from the JSON's", d)
    assert num(e, "busy-ns") + num(e, "idle-ns") == num(e, "last-ns") - num(e, "first-ns")
    idle_total += num(e, "idle-ns")
# every idle ns of the devices is attributed to one cause by the phases: the totals agree
phase_idle = sum(ph["split"]["idle_ns"] for tp in rep["phases"] for ph in tp["phases"] if ph["name"] != "start-up")
assert idle_total == phase_idle, ("device idle time differs from the phases' idle time", idle_total, phase_idle)
steps = els("tl-steps")
with_iterations = [tp for tp in rep["phases"] if tp["iterations"]["count"]]
assert len(steps) == len(windows) * len(with_iterations), (len(steps), len(with_iterations))
for e, tp in zip(steps, with_iterations * nwin):
    assert num(e, "iterations") == tp["iterations"]["count"]
placed = [f for f in rep["findings"] if f["start_ns"] is not None]
marks = els("tl-finding")
assert len(marks) == len(windows) * len(placed), (len(marks), len(placed))
for e, f in zip(marks, placed * nwin):
    assert (num(e, "rank"), num(e, "start-ns"), num(e, "end-ns")) == (f["rank"], f["start_ns"], f["end_ns"]), f["rank"]
assert len(els("tl-trace")) == len(windows) * len(rep["traces"])

# 3. Iterations: one bar per steady iteration (averaged in groups beyond 300), the histogram holds
# every steady iteration.
for tp in rep["phases"]:
    it = tp["iterations"]
    svg_bars = [e for e in els("iter-bars") if num(e, "trace") == tp["trace"]]
    if not it["steady_count"]:
        assert not svg_bars
        continue
    group = -(-it["steady_count"] // 300)
    assert num(svg_bars[0], "group") == group and num(svg_bars[0], "bars") == -(-it["steady_count"] // group)
    hist = [e for e in els("iter-hist") if num(e, "trace") == tp["trace"]]
    assert num(hist[0], "iterations") == it["steady_count"]
items = [i for tp in rep["phases"] for i in tp["iterations"]["items"] if not i["warmup"]]
bars = els("iter-bar")
if items and len(bars) == len(items):
    for e, i in zip(bars, items):
        assert num(e, "first") == i["index"] and num(e, "duration-ns") == i["duration_ns"], i["index"]
        parts = [i["split"]["compute_ns"], i["split"]["communication_ns"], i["split"]["copies_ns"]] + \
            list(i["split"]["idle_by_kind_ns"].values())
        assert [int(e["data"].get("p%d" % k, 0)) for k in range(len(parts))] == parts, i["index"]
assert sum(num(e, "count") for e in els("hist-bin")) == sum(tp["iterations"]["steady_count"] for tp in rep["phases"])

# 4. Top kernels (as gpt-trace stats counts them), copies by kind, idle causes, idle gaps.
rows = els("kernel", "tr")
assert len(rows) == min(20, len(stats["kernels"])), (len(rows), len(stats["kernels"]))
by_name = {k["name"]: k for k in stats["kernels"]}
totals = [num(e, "total-ns") for e in rows]
assert totals == sorted(totals, reverse=True)
assert totals == [k["total_ns"] for k in stats["kernels"][:len(rows)]]
for e in rows:
    k = by_name[e["data"]["name"]]
    assert num(e, "count") == k["count"] and num(e, "total-ns") == k["total_ns"], k["name"]
    assert abs(float(e["data"]["median-ns"]) - k["median_ns"]) < 0.01, (k["name"], e["data"]["median-ns"], k["median_ns"])
copies = els("copy", "tr")
assert len(copies) == len(stats["memory"]), (len(copies), len(stats["memory"]))
by_kind = {((-1 if m["copy_kind"] is None else m["copy_kind"]),
            (-1 if (m["mem_kind"] if m["copy_kind"] is None else m["src_kind"]) is None
             else (m["mem_kind"] if m["copy_kind"] is None else m["src_kind"])),
            (-1 if m["dst_kind"] is None else m["dst_kind"])): m for m in stats["memory"]}
for e in copies:
    m = by_kind[(num(e, "copy-kind"), num(e, "src-kind"), num(e, "dst-kind"))]
    assert (num(e, "count"), num(e, "bytes"), num(e, "total-ns")) == (m["count"], m["bytes"], m["total_ns"]), m
    assert num(e, "pageable") == int(m["copy_kind"] is not None and 0 in (m["src_kind"], m["dst_kind"])), m
    assert ("pageable" in e["cls"].split()) == bool(num(e, "pageable"))
for tp in rep["phases"]:
    for ph in tp["phases"][1:]:
        shown = [e for e in els("idle-cause") if num(e, "trace") == tp["trace"] and e["data"]["phase"] == ph["name"]]
        want = ph["idle_causes"][:6]
        assert len(shown) == len(want), (ph["name"], len(shown), len(want))
        for e, c in zip(shown, want):
            assert (e["data"]["kind"], num(e, "ns"), num(e, "gaps")) == (c["kind"], c["ns"], c["gaps"]), c
        head = [e for e in els("idle-phase") if num(e, "trace") == tp["trace"] and e["data"]["phase"] == ph["name"]]
        assert [num(e, "idle-ns") for e in head] == ([ph["split"]["idle_ns"]] if want else []), ph["name"]
bins = els("gap-bin")
assert sum(num(e, "ns") for e in bins) == idle_total
assert sum(num(e, "count") for e in bins) == sum(num(e, "gaps") for e in gpu_rows[:ndev])

# 5. Findings, ranked, with what the JSON says of them.
cards = els("finding", "article")
assert len(cards) == len(rep["findings"]), (len(cards), len(rep["findings"]))
for e, f in zip(cards, rep["findings"]):
    d = e["data"]
    assert (num(e, "rank"), d["rule"], d["severity"], num(e, "recoverable-ns")) == \
        (f["rank"], f["rule"], f["severity"], f["recoverable_ns"]), f["rank"]
    assert int(d.get("per-iteration-ns", -1)) == (-1 if f["recoverable_per_iteration_ns"] is None
                                                else f["recoverable_per_iteration_ns"]), f["rank"]
    if f["start_ns"] is not None:
        assert (num(e, "start-ns"), num(e, "end-ns")) == (f["start_ns"], f["end_ns"]), f["rank"]
    assert f["message"] in e["text"], f["rank"]
    src = [l for l in f["evidence"] if l.startswith("source ")]
    for line in src:
        assert line in page["src_lines"], ("source line not shown", line)
if rep["findings"]:
    total = [e for e in page["els"] if e["id"] == "findings-total"][0]
    assert num(total, "recoverable-ns") == rep["recoverable_ns"]
exec(sys.argv[5] if len(sys.argv) > 5 else "")
print("ok")
