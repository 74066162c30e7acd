#!/bin/bash
# gpt-trace report --format html over the ranks of a job (analyzer/report/html/ranks-page.c): the page of the
# real two-GPU DDP traces (tests/fixtures/gpu/ddp), held to the JSON report of the same ranks. In
# every timeline window one lane group per rank, each moved by its clock correction, with its NCCL
# kernels' lane; the straggler's group marked (slow-* only) and its iterations red where the others
# waited for it; the iteration chart scaled on the steady iterations, the warm-up drawn apart with
# its times written. Then a 20-rank synthetic job (16 ranks drawn, the straggler among them), and
# every page opened in headless Chromium with the network blocked (html-check.js): no error, no
# request, nothing wider than the window. Without chromium or node the test fails, as analyzer.html.
. "$SRC/tests/analyzer/lib.sh"
DDP=$SRC/tests/fixtures/gpu/ddp
HERE=$SRC/tests/analyzer

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ] || ! command -v node > /dev/null; then
	echo "FAIL chromium or node not found (chromium: '${CHROMIUM}'): run scripts/install-deps.sh"
	exit 1
fi

# What the page holds, read back from its markup, checked against the JSON report; then $3.
cat > "$TMP/check.py" <<'PY'
import json, re, sys

page, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
ranks = {r["rank"]: r for r in rep["ranks"]}
its = rep["iterations"]
steady = [i for i in its if i["steady"]]
warm = [i for i in its if not i["steady"]]

def attrs(tag):
    return {k: v for k, v in re.findall(r'([\w-]+)="([^"]*)"', tag)}

# the timeline: one svg per window, one lane group per rank drawn
windows = re.findall(r'(<svg class="timeline ranks-timeline".*?</svg>)', page, re.S)
assert len(windows) == 2, len(windows)
lanes_per_window, stragglers, late_steps = [], set(), {}
for svg in windows:
    groups = re.split(r'(?=<g class="tl-rank")', svg)[1:]
    lanes_per_window.append(len(groups))
    for g in groups:
        a = attrs(g[:g.index(">")])
        r = ranks[int(a["data-rank"])]
        assert int(a["data-shift-ns"]) == r["clock_anchor_ns"] + r["clock_refine_ns"], a
        assert int(a["data-delay-ns"]) == r["delay_caused_ns"], a
        if a.get("data-straggler") == "1":
            stragglers.add(r["rank"])
        nccl = [attrs(t) for t in re.findall(r'<g class="tl-lane"[^>]*data-stream="-2"[^>]*>', g)]
        assert nccl and all(int(l["data-busy-ns"]) > 0 for l in nccl), (r["rank"], nccl)
        if 'data-window="steady"' in svg and 'class="tl-steps"' in g:	# many ranks: the job's row only
            late_steps[r["rank"]] = g.count('class="tl-late"')
    held = [attrs(t) for t in re.findall(r'<g class="tl-held"[^>]*>', svg)]
    for h in held:
        it = its[int(h["data-iteration"])]
        assert int(h["data-rank"]) == it["straggler_rank"] and int(h["data-delay-ns"]) == it["delay_ns"], h
# the straggler's iterations are red on its steps row: every steady one it held up, no more than all
for rank, n in late_steps.items():
    mine = [i for i in its if i["straggler_rank"] == rank]
    assert len([i for i in mine if i["steady"]]) <= n <= len(mine), (rank, n)

# the iteration chart: steady bars on a scale of their own, warm-up apart with its times written
chart = re.search(r'<svg class="iter-bars job-steady"([^>]*)>(.*?)</svg>', page, re.S)
ymax = int(attrs(chart.group(1))["data-ymax-ns"])
bars = [attrs(t) for t in re.findall(r'<g class="iter-bar"[^>]*>', chart.group(2))]
assert [int(b["data-time-ns"]) for b in bars] == [i["time_ns"] for i in steady]
top = max(i["time_ns"] for i in steady)
assert top <= ymax <= 2 * top, (ymax, top)
warmup = re.search(r'<svg class="iter-bars job-warmup"[^>]*>(.*?)</svg>', page, re.S).group(1)
wbars = re.findall(r'<g class="iter-bar"[^>]*data-time-ns="(\d+)"', warmup)
assert [int(t) for t in wbars] == [i["time_ns"] for i in warm]
assert len(re.findall(r'style="font-size:10px">[^<]+</text>', warmup)) == len(warm), "warm-up times written"
assert len(re.findall(r'<tr class="late"', page)) == sum(i["straggler_rank"] >= 0 for i in its)
lanes, stragglers = lanes_per_window, sorted(stragglers)
exec(sys.argv[3])
print("ok")
PY

# page NAME CHECK TRACE...: the page and the JSON report of the ranks, checked, opened in Chromium
page() {
	local name=$1 extra=$2
	shift 2
	if ! "$GPT" report -q --format html -o "$TMP/$name.html" "$@" 2> "$TMP/err" ||
		! "$GPT" report -q --format json -o "$TMP/$name.json" "$@" 2>> "$TMP/err"; then
		expect "$name renders" "" "$(cat "$TMP/err")"
		return
	fi
	expect "$name" "ok" "$(python3 "$TMP/check.py" "$TMP/$name.html" "$TMP/$name.json" "$extra" 2>&1 | tail -3)"
	if ! node "$HERE/html-check.js" "$CHROMIUM" "$TMP/$name.html" --width 1400 > "$TMP/$name.page.json" \
		2> "$TMP/err"; then
		expect "$name opens in chromium" "" "$(cat "$TMP/err")"
		return
	fi
	expect "$name in chromium: no error, no request, no overflow" "0 0 0 ok" "$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
print(len(p["console"]), len(p["exceptions"]), len(p["requests"]), "ok" if p["scrollWidth"] <= p["innerWidth"] else
      "%d wider than %d" % (p["scrollWidth"], p["innerWidth"]))' "$TMP/$name.page.json")"
}

# The summaries are written beside the traces: work on copies.
mkdir -p "$TMP/ddp"
cp "$DDP"/*.sqlite "$TMP/ddp/"
# Rank 1 sleeps 50 ms on every 5th step: it is the straggler, 8 steady iterations held up.
# The old chart took its scale from the first warm-up step (313 ms): the 8 ms steady bars were 3% tall.
# The critical path row (issue 41): in the zoomed iteration rank 1 held up, it runs through rank 1
# (its 50 ms host gap) wider than anything else, and the page names rank 1's host first.
page slow-exposed "
assert lanes == [2, 2] and stragglers == [1], (lanes, stragglers)
assert late_steps[1] >= 8 and ymax < max(i['time_ns'] for i in warm) / 3
path = {}
for m in re.finditer(r'<rect class=\"tl-path\" data-rank=\"(-?\d+)\"[^>]*width=\"(\d+)\"', windows[1]):
    path[int(m.group(1))] = path.get(int(m.group(1)), 0) + int(m.group(2))
assert max(path, key=path.get) == 1 and path[1] > 600, path
assert re.search(r'id=\"critical-path\">.*collectives, rank 1.s host', page), 'the critical path paragraph'" "$TMP"/ddp/ddp-slow-exposed-rank{0,1}.sqlite
page slow-overlapped "
assert lanes == [2, 2] and stragglers == [1], (lanes, stragglers)
assert ymax < max(i['time_ns'] for i in warm) / 3" "$TMP"/ddp/ddp-slow-overlapped-rank{0,1}.sqlite
# No straggler worth a warning: nobody marked; the warm-up (~300 ms) is 30x a steady step.
page clean-exposed "
assert lanes == [2, 2] and stragglers == [], (lanes, stragglers)
assert max(i['time_ns'] for i in warm) > 20 * ymax" "$TMP"/ddp/ddp-clean-exposed-rank{0,1}.sqlite

# 20 ranks, rank 13 late on every 3rd step: 16 drawn, the straggler among them.
python3 "$SRC/tests/ranks/gen_ranks.py" --world 20 --slow 13:3:3 "$TMP/job20" > /dev/null
page twenty "
assert lanes == [16, 16] and stragglers == [13] and not late_steps, (lanes, stragglers)
assert '16 of 20 ranks drawn' in page" "$TMP"/job20/rank-*.sqlite

# Given as summaries with a trace gone: its lanes say why, the rest is drawn.
mv "$TMP/ddp/ddp-slow-exposed-rank1.sqlite" "$TMP/ddp/gone.sqlite"
"$GPT" report -q --format html -o "$TMP/gone.html" "$TMP"/ddp/ddp-slow-exposed-rank{0,1}.sqlite.summary
expect "a trace gone: drawn without its lanes" "4 2" \
	"$(grep -c '<g class="tl-rank"' "$TMP/gone.html") $(grep -c "cannot open .*ddp-slow-exposed-rank1.sqlite" "$TMP/gone.html")"
finish
