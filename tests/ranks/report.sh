#!/usr/bin/env bash
# The cross-rank report on synthetic jobs: the straggler named on the slow iterations with its delay
# and what it did differently (host gap, longer kernel, copy), none in a clean job, communication
# overlapped or exposed, text/Markdown/JSON, and one trace still getting the single-trace report.
. "$SRC/tests/ranks/lib.sh"

# 2 ranks, rank 1 sleeps 5 ms before the backward on every 4th step (steps 3, 7, 11)
$GEN --world 2 --slow 1:5:4 "$TMP/two" > /dev/null
"$GPT" report -q -f json -o "$TMP/two.json" "$TMP"/two/rank-*.sqlite
expect "2 ranks: schema" "gpt-trace-job-report/1" "$(json "$TMP/two.json" 'd["schema"]')"
expect "2 ranks: ranks" "[0, 1]" "$(json "$TMP/two.json" '[r["rank"] for r in d["ranks"]]')"
expect "2 ranks: straggler iterations" "[(3, 1), (7, 1), (11, 1)]" \
	"$(json "$TMP/two.json" '[(i["index"], i["straggler_rank"]) for i in d["iterations"] if i["straggler_rank"] >= 0]')"
expect "2 ranks: delay within 20% of 5 ms" "True" \
	"$(json "$TMP/two.json" 'all(4.0e6 <= i["delay_ns"] <= 6.0e6 for i in d["iterations"] if i["straggler_rank"] >= 0)')"
expect "2 ranks: cause is the host gap" "True" \
	"$(json "$TMP/two.json" 'all(i["cause"].startswith("a host gap") for i in d["iterations"] if i["straggler_rank"] >= 0)')"
expect "2 ranks: straggler finding first" "straggler" "$(json "$TMP/two.json" 'd["findings"][0]["rule"]')"
expect "2 ranks: names rank 1" "True" "$(json "$TMP/two.json" 'd["findings"][0]["message"].startswith("rank 1 held up the job in 3 ")')"
expect "2 ranks: summaries beside the traces" "2" "$(ls "$TMP"/two/*.sqlite.summary | wc -l)"
"$GPT" report -q "$TMP"/two/rank-*.sqlite > "$TMP/two.txt"
expect "2 ranks: text names the straggler" "3" "$(grep -c 'straggler rank 1: the others waited [45]\.[0-9]* ms' "$TMP/two.txt")"
"$GPT" report -q -f md "$TMP"/two/rank-*.sqlite > "$TMP/two.md"
expect "2 ranks: markdown table" "3" "$(grep -c '^| [0-9]* | .* | 1 | [45]\.' "$TMP/two.md")"

# 4 ranks, rank 2 runs a 8 ms longer kernel every 3rd step
$GEN --world 4 --slow 2:8:3:kernel "$TMP/four" > /dev/null
"$GPT" report -q -f json -o "$TMP/four.json" "$TMP"/four/rank-*.sqlite
expect "4 ranks: straggler iterations" "[(2, 2), (5, 2), (8, 2), (11, 2)]" \
	"$(json "$TMP/four.json" '[(i["index"], i["straggler_rank"]) for i in d["iterations"] if i["straggler_rank"] >= 0]')"
expect "4 ranks: delay within 20% of 8 ms" "True" \
	"$(json "$TMP/four.json" 'all(6.4e6 <= i["delay_ns"] <= 9.6e6 for i in d["iterations"] if i["straggler_rank"] >= 0)')"
expect "4 ranks: cause is the longer kernel" "True" \
	"$(json "$TMP/four.json" 'all(i["cause"].startswith("longer compute") and "sm90_xmma_gemm" in i["cause"] for i in d["iterations"] if i["straggler_rank"] >= 0)')"

expect_exit "--fail-on critical: the straggler" 1 "" "$GPT" report -q --fail-on critical "$TMP"/four/rank-*.sqlite

# a copy before the backward
$GEN --world 3 --slow 0:6:5:copy "$TMP/copy" > /dev/null
"$GPT" report -q -f json -o "$TMP/copy.json" "$TMP"/copy/rank-*.sqlite
expect "copy: straggler iterations" "[(4, 0), (9, 0)]" \
	"$(json "$TMP/copy.json" '[(i["index"], i["straggler_rank"]) for i in d["iterations"] if i["straggler_rank"] >= 0]')"
expect "copy: cause is the copy" "True" \
	"$(json "$TMP/copy.json" 'all(i["cause"].startswith("copies") for i in d["iterations"] if i["straggler_rank"] >= 0)')"

# generic NCCL kernels (NCCL 2.19+, LL128/SIMPLE): the collective named by NCCL's NVTX range around
# the launch; without the ranges the kernels are still matched, as "Other"
$GEN --world 2 --slow 1:5:4 --generic "$TMP/generic" > /dev/null
"$GPT" report -q -f json -o "$TMP/generic.json" "$TMP"/generic/rank-*.sqlite
expect "generic kernels: named by NVTX" "[('AllReduce', 44), ('AllGather', 11), ('ReduceScatter', 11)]" \
	"$(json "$TMP/generic.json" '[(c["collective"], c["calls"]) for c in d["communication"]]')"
expect "generic kernels: straggler iterations" "[(3, 1), (7, 1), (11, 1)]" \
	"$(json "$TMP/generic.json" '[(i["index"], i["straggler_rank"]) for i in d["iterations"] if i["straggler_rank"] >= 0]')"
$GEN --world 2 --slow 1:5:4 --generic --no-nccl-nvtx "$TMP/bare" > /dev/null
"$GPT" report -q -f json -o "$TMP/bare.json" "$TMP"/bare/rank-*.sqlite
expect "generic kernels, no NVTX: Other, matched" "[('Other', 66)] 72" \
	"$(json "$TMP/bare.json" '" ".join([str([(c["collective"], c["calls"]) for c in d["communication"]]), str(d["matched_collectives"])])')"
expect "generic kernels, no NVTX: straggler iterations" "[(3, 1), (7, 1), (11, 1)]" \
	"$(json "$TMP/bare.json" '[(i["index"], i["straggler_rank"]) for i in d["iterations"] if i["straggler_rank"] >= 0]')"

# rank 1's first 3 steps have no step range: its iterations are matched to the job's by time
$GEN --world 3 --slow 2:5:4 --no-steps 1:3 "$TMP/fewer" > /dev/null
"$GPT" report -q -f json -o "$TMP/fewer.json" "$TMP"/fewer/rank-*.sqlite
expect "fewer iterations on one rank: ranks' counts" "[12, 9, 12]" "$(json "$TMP/fewer.json" '[r["iterations"] for r in d["ranks"]]')"
expect "fewer iterations on one rank: straggler iterations by time" "[(3, 2), (7, 2), (11, 2)]" \
	"$(json "$TMP/fewer.json" '[(i["index"], i["straggler_rank"]) for i in d["iterations"] if i["straggler_rank"] >= 0]')"
expect "fewer iterations on one rank: iteration 3 has all ranks, 0 two" "[2, 3]" \
	"$(json "$TMP/fewer.json" '[d["iterations"][0]["ranks"], d["iterations"][3]["ranks"]]')"

# no slow rank: no straggler, no straggler finding
$GEN --world 4 "$TMP/clean" > /dev/null
"$GPT" report -q -f json -o "$TMP/clean.json" "$TMP"/clean/rank-*.sqlite
expect "clean: no straggler" "0" "$(json "$TMP/clean.json" 'sum(i["straggler_rank"] >= 0 for i in d["iterations"])')"
expect "clean: no straggler finding" "[]" "$(json "$TMP/clean.json" '[f for f in d["findings"] if f["rule"] == "straggler"]')"

# overlapped vs exposed communication: the exposed job's all-reduces are all exposed
$GEN --world 2 --exposed "$TMP/exposed" > /dev/null
"$GPT" report -q -f json -o "$TMP/exposed.json" "$TMP"/exposed/rank-*.sqlite
over=$(json "$TMP/clean.json" '[c["exposed_transfer_ns"] for c in d["communication"] if c["collective"] == "AllReduce"][0]')
expo=$(json "$TMP/exposed.json" '[c["exposed_transfer_ns"] for c in d["communication"] if c["collective"] == "AllReduce"][0]')
# 11 steady steps x 4 buckets x 400 us, or the last bucket's alone (11 x 400 us), within 1%
expect "exposed: all 44 all-reduce transfers exposed" "True" "$(python3 -c "print(abs($expo - 17.6e6) < 0.176e6)")"
expect "overlapped: only the last bucket's exposed" "True" "$(python3 -c "print(abs($over - 4.4e6) < 0.044e6)")"
expect "exposed: the rule fires" "exposed-communication" \
	"$(json "$TMP/exposed.json" '[f["rule"] for f in d["findings"]][0]')"

# one trace: the single-trace report, byte for byte what --no-ranks gives
"$GPT" report -q "$TMP/two/rank-1.sqlite" > "$TMP/one.txt"
expect "one trace: single-trace report" "gpt-trace report" "$(head -1 "$TMP/one.txt")"
"$GPT" report -q --no-ranks "$TMP"/two/rank-*.sqlite > "$TMP/no-ranks.txt"
expect "--no-ranks: the combined single-trace report" "gpt-trace report" "$(head -1 "$TMP/no-ranks.txt")"
# the single-trace exposed-communication rule over one rank of the exposed job
"$GPT" report -q -f json -o "$TMP/one-exposed.json" "$TMP/exposed/rank-0.sqlite"
expect "one trace: exposed-communication finding" "True" \
	"$(json "$TMP/one-exposed.json" 'any(f["rule"] == "exposed-communication" for f in d["findings"])')"
"$GPT" report -q -f html -o "$TMP/two.html" "$TMP"/two/rank-*.sqlite
expect "html: the straggler's delays marked" "3" \
	"$(grep -c '^the others waited [45]\.[0-9]* ms for rank 1</title>' "$TMP/two.html")"
# Each bar stands on the axis; a straggler's wait (red) is stacked on top of the rest of its iteration.
expect "html: bars stacked on the axis" "ok" "$(python3 -c '
import re, sys
page = open(sys.argv[1]).read()
late = 0
for svg in re.findall(r"<svg class=\"iter-bars.*?</svg>", page, re.S):
    base = 240 - 30
    for bar in re.findall(r"<g class=\"iter-bar\".*?</g>", svg, re.S):
        rects = [(float(y), float(h), f) for y, h, f in
                 re.findall(r"<rect x=\"[\d.]+\" y=\"([\d.]+)\" width=\"[\d.]+\" height=\"([\d.]+)\" fill=\"(#\w+)\"", bar)]
        assert abs(rects[0][0] + rects[0][1] - base) < 0.2, (bar, base)
        if len(rects) > 1:
            assert rects[1][2] == "#D55E00" and abs(rects[1][0] + rects[1][1] - rects[0][0]) < 0.2, bar
            late += 1
assert late
print("ok")' "$TMP/two.html")"
expect "html: a row per rank" "2" \
	"$(grep -c '<tr class="rank[^"]*" data-rank="[01]"[^>]*><td class="num">[01]</td><td>nodeA</td>' "$TMP/two.html")"
expect "html: well-formed" "ok" "$(python3 -c '
import sys, html.parser
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.stack = []
    def handle_starttag(self, t, a):
        if t not in ("meta", "br"): self.stack.append(t)
    def handle_endtag(self, t):
        assert self.stack.pop() == t, t
p = P(); p.feed(open(sys.argv[1]).read()); assert not p.stack, p.stack; print("ok")' "$TMP/two.html")"
expect_exit "html of several ranks needs -o" 2 "needs an output file" "$GPT" report -f html "$TMP"/two/rank-*.sqlite
expect_exit "--window with several ranks" 2 "takes no --window" "$GPT" report -w 0:1 "$TMP"/two/rank-*.sqlite
finish
