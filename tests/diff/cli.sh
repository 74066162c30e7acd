#!/bin/bash
# gpt-trace diff / baseline / check on synthetic traces: verdicts, exit codes, the four report
# formats, baseline round trip, config file, NVTX scope, warm-up skip, launch configurations, and
# bad input. One case per ctest test: cli.sh CASE.
. "$(dirname "$0")/lib.sh"

case_same() {
	standard_trace base.sqlite 1
	standard_trace rerun.sqlite 11
	run 0 "$GPT" diff base.sqlite rerun.sqlite
	count_lines '^same ' 3
	count_lines '^(slower|faster|new|missing|insufficient) ' 0
	expect_line '^result: ok'
	# A trace against itself: every ratio exactly 1.
	run 0 "$GPT" diff base.sqlite base.sqlite
	count_lines '^same +1\.000 ' 3
}

case_slower() {
	standard_trace base.sqlite 1
	standard_trace slow.sqlite 21 21600	# gemm 8% slower, the rest as before
	run 1 "$GPT" diff base.sqlite slow.sqlite
	count_lines '^slower ' 1
	expect_line '^slower +1\.0[78][0-9] .*gemm_kernel\(float const\*, float\*\)$'
	expect_line '^same .*relu_kernel$'
	expect_line '^result: REGRESSION'
	# Swapped, the same kernel is faster and nothing regressed.
	run 0 "$GPT" diff slow.sqlite base.sqlite
	expect_line '^faster +0\.9[23][0-9] .*gemm_kernel'
	# A 2% slowdown is below the 3% threshold: same; with --threshold 1% it counts.
	standard_trace slight.sqlite 31 20400
	run 0 "$GPT" diff base.sqlite slight.sqlite
	expect_line '^same +1\.02[0-9] .*gemm_kernel'
	run 1 "$GPT" diff --threshold 1% base.sqlite slight.sqlite
	expect_line '^slower .*gemm_kernel'
	run 1 "$GPT" diff -t 0.01 base.sqlite slight.sqlite
}

case_new_missing() {
	standard_trace base.sqlite 1
	# old_kernel gone, new_kernel added; gemm and relu unchanged.
	mktrace changed.sqlite "$(kernels 1 200 20000 0.015 41 128 256 1000000)" \
		"$(kernels 2 200 5000 0.015 42 64 128 1050000)" \
		"$(kernels 4 30 4000 0.01 43 1 32 1070000)"
	run 0 "$GPT" diff base.sqlite changed.sqlite
	expect_line '^new .* - / 30 .*new_kernel$'
	expect_line '^missing .* 50 / - .*old_kernel$'
	count_lines '^same ' 2
	expect_line '^kernels: 0 slower, 0 faster, 2 same, 1 new, 1 missing'
	# Too few launches to judge: insufficient, not slower, even when 3x slower.
	mktrace few.sqlite "$(kernels 1 5 20000 0.015 1 128 256 1000000)"
	mktrace fewslow.sqlite "$(kernels 1 5 60000 0.015 2 128 256 1000000)"
	run 0 "$GPT" diff few.sqlite fewslow.sqlite
	expect_line '^insufficient .*gemm_kernel'
	run 1 "$GPT" diff --min-samples 5 few.sqlite fewslow.sqlite
}

case_junit() {
	standard_trace base.sqlite 1
	mktrace slow.sqlite "$(kernels 1 200 21600 0.015 21 128 256 1000000)" \
		"$(kernels 2 200 5000 0.015 22 64 128 1050000)" \
		"$(kernels 4 30 4000 0.01 43 1 32 1070000)"
	run 1 "$GPT" diff -f junit -o report.xml base.sqlite slow.sqlite
	[ -s out.txt ] && fail "-o report.xml still wrote to stdout"
	# Text on stdout and JUnit beside it, as CI uses it.
	run 1 "$GPT" diff --junit report2.xml base.sqlite slow.sqlite
	expect_line '^slower .*gemm_kernel'
	cmp -s report.xml report2.xml || fail "--junit and -f junit -o differ"
	python3 - report.xml <<'EOF' || fail "JUnit report is wrong"
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
suites = doc.documentElement
assert suites.tagName == "testsuites", suites.tagName
assert suites.getAttribute("tests") == "4" and suites.getAttribute("failures") == "1", suites.toxml()[:200]
cases = doc.getElementsByTagName("testcase")
assert len(cases) == 4, len(cases)
failed = [c.getAttribute("name") for c in cases if c.getElementsByTagName("failure")]
assert failed == ["gemm_kernel(float const*, float*)"], failed
skipped = [c.getAttribute("name") for c in cases if c.getElementsByTagName("skipped")]
assert skipped == ["old_kernel"], skipped
msg = cases[0].getElementsByTagName("failure")[0].getAttribute("message")
assert "ratio 1.0" in msg and "above 1.030" in msg, msg
for c in cases:
    float(c.getAttribute("time"))
EOF
	# Names that need escaping in XML and Markdown.
	mktrace odd.sqlite "$(kernels 1 20 1000 0.01 1 1 32 1000000)"
	sqlite3 odd.sqlite "UPDATE StringIds SET value = 'void k<a&b, \"q\">|x''' || char(1) WHERE id = 1"
	run 0 "$GPT" diff -f junit odd.sqlite odd.sqlite
	python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' out.txt ||
		fail "JUnit with odd names is not XML"
	run 0 "$GPT" diff -f json odd.sqlite odd.sqlite
	python3 -c 'import sys, json; d = json.load(open(sys.argv[1])); assert d["kernels"][0]["name"].startswith("void k<a&b, \"q\">|x\x27\x01"), d' out.txt ||
		fail "JSON with odd names is wrong"
	run 0 "$GPT" diff -f markdown odd.sqlite odd.sqlite
	expect_line '`void k<a&b, "q">\\\|x'
}

case_json_markdown() {
	standard_trace base.sqlite 1
	standard_trace slow.sqlite 21 21600
	run 1 "$GPT" diff -f json base.sqlite slow.sqlite
	python3 - out.txt <<'EOF' || fail "JSON report is wrong"
import sys, json
d = json.load(open(sys.argv[1]))
assert d["command"] == "diff" and d["regression"] is True, d
assert d["counts"]["slower"] == 1 and d["counts"]["same"] == 2, d["counts"]
k = d["kernels"][0]
assert k["verdict"] == "slower" and k["name"].startswith("gemm_kernel"), k
assert 1.07 < k["ratio"] < 1.09 and k["ci"][0] > 1.03 and k["p_value"] < 0.01, k
assert k["base"]["launches"] == 200 and k["base"]["grid"] == [128, 1, 1], k
assert d["base"]["totals"]["copies"] == 1 and d["base"]["totals"]["copy_ns"] == 2000, d["base"]
t = d["base"]["totals"]
assert t["idle_ns"] == t["span_ns"] - (t["kernel_ns"] + t["copy_ns"]), t  # nothing overlaps here
EOF
	run 1 "$GPT" diff --format markdown base.sqlite slow.sqlite
	expect_line '^### gpt-trace diff: 1 kernel slower$'
	expect_line '^\| \*\*slower\*\* \| `gemm_kernel\(float const\*, float\*\)` \| 1\.0'
	expect_line '^\| GPU totals \| BASE \| NEW \| NEW/BASE \|$'
	# All three extra outputs at once.
	run 1 "$GPT" diff --json r.json --markdown r.md --junit r.xml base.sqlite slow.sqlite
	[ -s r.json ] && [ -s r.md ] && [ -s r.xml ] || fail "extra outputs missing"
}

case_baseline() {
	standard_trace base.sqlite 1
	standard_trace rerun.sqlite 11
	standard_trace slow.sqlite 21 21600
	run 0 "$GPT" baseline save base.sqlite -o baseline.json
	[ -s out.txt ] && fail "baseline save -o wrote to stdout"
	python3 - baseline.json <<'EOF' || fail "baseline file is wrong"
import sys, json
text = open(sys.argv[1]).read()
d = json.loads(text)
assert d["gpt_trace_baseline"] == 1 and d["source"] == "base.sqlite", d
assert list(d)[:6] == ["gpt_trace_baseline", "source", "nvtx", "skip_first", "points", "totals"], list(d)
names = [k["name"] for k in d["kernels"]]
assert names == sorted(names) and len(names) == 3, names
g = d["kernels"][0]
assert list(g) == ["name", "grid", "block", "count", "median", "p5", "p25", "p75", "p95", "min",
                   "max", "mean", "stddev", "mad", "total", "points"], list(g)
assert g["count"] == 200 and len(g["points"]) == 64 and g["points"] == sorted(g["points"]), g
assert g["min"] <= g["p5"] <= g["p25"] <= g["median"] <= g["p75"] <= g["p95"] <= g["max"], g
assert abs(g["median"] / 20000 - 1) < 0.01 and g["mad"] > 0 and g["stddev"] > 0, g
o = d["kernels"][1]
assert o["name"] == "old_kernel" and o["count"] == 50 and len(o["points"]) == 50, o
# Reviewable: one kernel per two or three lines.
assert len(text.splitlines()) <= 12 + 3 * len(names), len(text.splitlines())
EOF
	# Deterministic: the same trace gives the same bytes.
	run 0 "$GPT" baseline save base.sqlite
	cmp -s out.txt baseline.json || fail "baseline save is not deterministic"
	run 0 "$GPT" check --baseline baseline.json rerun.sqlite
	count_lines '^same ' 3
	expect_line '^gpt-trace check: BASE baseline baseline.json'
	run 1 "$GPT" check --baseline baseline.json slow.sqlite --junit check.xml
	count_lines '^slower ' 1
	expect_line '^slower +1\.0[78][0-9] .*gemm_kernel'
	python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.documentElement.getAttribute("failures") == "1"' check.xml ||
		fail "check JUnit"
	run 1 "$GPT" check -b baseline.json -f json slow.sqlite
	python3 -c 'import sys, json; d = json.load(open(sys.argv[1])); assert d["command"] == "check" and d["base"]["baseline"] and d["kernels"][0]["base"]["launches"] == 200' out.txt ||
		fail "check JSON"
	# --points
	run 0 "$GPT" baseline save --points 16 base.sqlite -o b16.json
	python3 -c 'import sys, json; d = json.load(open(sys.argv[1])); assert [len(k["points"]) for k in d["kernels"]] == [16, 16, 16]' b16.json ||
		fail "--points 16"
	run 1 "$GPT" check --baseline b16.json slow.sqlite
	# A baseline file on the BASE side of diff works as in check.
	run 1 "$GPT" diff baseline.json slow.sqlite
	expect_line '^slower .*gemm_kernel'
	# A hand-edited baseline without the optional summaries still loads.
	python3 - baseline.json <<'EOF' >slim.json
import sys, json
d = json.load(open(sys.argv[1]))
for k in d["kernels"]:
    for key in ("p5", "p25", "p75", "p95", "min", "max", "mean", "stddev", "mad", "total"):
        del k[key]
del d["totals"]
print(json.dumps(d))
EOF
	run 0 "$GPT" check --baseline slim.json rerun.sqlite
	count_lines '^same ' 3
}

case_config() {
	standard_trace base.sqlite 1
	standard_trace slow.sqlite 21 21600
	cat >loose.conf <<'EOF'
# gemm may vary by 10%
[kernel "gemm_*"]
threshold = 10%
EOF
	run 0 "$GPT" diff --config loose.conf base.sqlite slow.sqlite
	expect_line '^same .*gemm_kernel.*\(threshold 10%, alpha 0.01, min 10 launches\)$'
	cat >ignore.conf <<'EOF'
[defaults]
threshold = 0.02
alpha = 1%
min-samples = 20

[ignore]
*gemm*
EOF
	run 0 "$GPT" diff -c ignore.conf base.sqlite slow.sqlite
	expect_line '^ignored .*gemm_kernel'
	expect_line 'lies above 1\.020 \(threshold 2%\); at least 20 launches'
	cat >defaults.conf <<'EOF'
[defaults]
threshold = 10%
EOF
	run 0 "$GPT" diff -c defaults.conf base.sqlite slow.sqlite
	# The command line wins over the file.
	run 1 "$GPT" diff -c defaults.conf --threshold 3% base.sqlite slow.sqlite
	# --ignore on the command line; and a kernel section that ignores.
	run 0 "$GPT" diff --ignore 'gemm*' base.sqlite slow.sqlite
	printf '[kernel "gemm_kernel(float const\\**"]\nignore = true\n' >ig2.conf
	run 0 "$GPT" diff -c ig2.conf base.sqlite slow.sqlite
	expect_line '^ignored .*gemm_kernel'
	# First matching section wins.
	printf '[kernel "relu*"]\nthreshold = 50%%\n[kernel "*"]\nthreshold = 20%%\n' >order.conf
	run 0 "$GPT" diff -c order.conf -f json base.sqlite slow.sqlite
	python3 -c 'import sys, json; d = json.load(open(sys.argv[1])); t = {k["name"]: k["threshold"] for k in d["kernels"]}; assert t["relu_kernel"] == 0.5 and t["gemm_kernel(float const*, float*)"] == 0.2, t' out.txt ||
		fail "override order"
	# The example of docs/ci.md, inline comments included.
	sed -n '/^# ci\/kernels.conf$/,/^```$/p' "$SRC/docs/ci.md" | sed '$d' >doc.conf
	grep -q '^\[kernel "\*gemm\*"\]$' doc.conf || fail "docs/ci.md config example not found"
	run 0 "$GPT" diff -c doc.conf base.sqlite slow.sqlite
	expect_line '^same .* 98 / 98 .*gemm_kernel.*\(threshold 8%, alpha 0.01, min 30 launches\)$'
	expect_line "NVTX range 'train_step', first 2 launches per kernel skipped"
	# baseline save takes the ignore patterns of the config.
	run 0 "$GPT" baseline save -c ignore.conf base.sqlite -o b.json
	python3 -c 'import sys, json; d = json.load(open(sys.argv[1])); assert [k["name"] for k in d["kernels"]] == ["old_kernel", "relu_kernel"]' b.json ||
		fail "baseline save --config ignore"
}

case_nvtx() {
	standard_trace base.sqlite 1
	# gemm: 60 normal launches inside 'train_step' (1-11 ms), then 140 launches 50% slower after it.
	mktrace outside.sqlite "$(kernels 1 60 20000 0.015 51 128 256 1000000)" \
		"$(kernels 1 140 30000 0.015 52 128 256 12000000)" \
		"$(kernels 2 200 5000 0.015 53 64 128 1050000)" \
		"$(kernels 3 50 3000 0.01 54 1 32 1070000)"
	run 1 "$GPT" diff base.sqlite outside.sqlite
	expect_line '^slower .*gemm_kernel'
	run 0 "$GPT" diff --nvtx train_step base.sqlite outside.sqlite
	expect_line '^same .* 100 / 60 .*gemm_kernel'
	expect_line "NVTX range 'train_step'"
	# The scope is saved with the baseline and reused by check.
	run 0 "$GPT" baseline save --nvtx train_step base.sqlite -o b.json
	python3 -c 'import sys, json; d = json.load(open(sys.argv[1])); assert d["nvtx"] == "train_step" and d["kernels"][0]["count"] == 100' b.json ||
		fail "nvtx in baseline"
	run 0 "$GPT" check --baseline b.json outside.sqlite
	expect_line '^same .* 100 / 60 .*gemm_kernel'
	[ -s err.txt ] && fail "unexpected stderr: $(cat err.txt)"
	# Overriding the baseline's scope works, with a warning.
	run 0 "$GPT" check --baseline b.json --nvtx train_step outside.sqlite
	[ -s err.txt ] && fail "unexpected stderr: $(cat err.txt)"
	printf '[defaults]\nnvtx =\n' >whole.conf
	run 1 "$GPT" check --baseline b.json -c whole.conf outside.sqlite
	grep -q "warning: baseline 'b.json' was saved with NVTX range 'train_step', this check uses no NVTX range" err.txt ||
		fail "no scope warning: $(cat err.txt)"
}

case_skip_first() {
	standard_trace base.sqlite 1
	# gemm's first 25 of 35 launches are warm-up at twice the time (a long JIT/autotuning phase).
	mktrace warm.sqlite "$(kernels 1 25 40000 0.015 61 128 256 1000000)" \
		"$(kernels 1 10 20000 0.015 62 128 256 4000000)" \
		"$(kernels 2 200 5000 0.015 63 64 128 1050000)"
	run 1 "$GPT" diff base.sqlite warm.sqlite
	expect_line '^slower .* 200 / 35 .*gemm_kernel'
	run 0 "$GPT" diff --skip-first 25 base.sqlite warm.sqlite
	expect_line '^same .* 175 / 10 .*gemm_kernel'
	expect_line 'first 25 launches per kernel skipped'
	run 0 "$GPT" baseline save --skip-first 25 base.sqlite -o b.json
	run 0 "$GPT" check --baseline b.json warm.sqlite
	expect_line '^same .* 175 / 10 .*gemm_kernel'
	# Skipping every launch leaves nothing to compare: an input error.
	run 2 "$GPT" diff --skip-first 1000 base.sqlite warm.sqlite
	one_error "no kernels in 'base.sqlite' after the warm-up launches$"
}

case_launch_config() {
	standard_trace base.sqlite 1
	# gemm's grid changed 128 -> 256, same times: compared with its old self, the change shown.
	mktrace regrid.sqlite "$(kernels 1 200 20000 0.015 71 256 256 1000000)" \
		"$(kernels 2 200 5000 0.015 72 64 128 1050000)" \
		"$(kernels 3 50 3000 0.01 73 1 32 1070000)"
	run 0 "$GPT" diff base.sqlite regrid.sqlite
	expect_line '^same .*gemm_kernel\(float const\*, float\*\) \[grid 128x1x1 block 256x1x1 -> grid 256x1x1 block 256x1x1\]$'
	count_lines '^(new|missing) ' 0
	# relu launched with two configurations on both sides: one row each; only the big one slower.
	mktrace two.sqlite "$(kernels 2 100 5000 0.015 81 64 128 1000000)" \
		"$(kernels 2 100 9000 0.015 82 32 128 1050000)"
	mktrace twoslow.sqlite "$(kernels 2 100 5000 0.015 83 64 128 1000000)" \
		"$(kernels 2 100 9900 0.015 84 32 128 1050000)"
	run 1 "$GPT" diff two.sqlite twoslow.sqlite
	expect_line '^slower .*relu_kernel \[grid 32x1x1 block 128x1x1\]$'
	expect_line '^same .*relu_kernel \[grid 64x1x1 block 128x1x1\]$'
}

case_nsys() {
	# Real Nsight Systems exports against themselves: readable, and nothing differs.
	for f in nvfuser_report1_h200 pipit_cloverleaf_cuda_perlmutter; do
		run 0 "$GPT" diff "$SRC/tests/fixtures/nsys/$f.sqlite" "$SRC/tests/fixtures/nsys/$f.sqlite"
		count_lines '^(slower|faster|new|missing) ' 0
		expect_line '^kernels: 0 slower, 0 faster, [0-9]+ same, 0 new, 0 missing'
		run 0 "$GPT" baseline save "$SRC/tests/fixtures/nsys/$f.sqlite" -o "$f.json"
		run 0 "$GPT" check --baseline "$f.json" "$SRC/tests/fixtures/nsys/$f.sqlite"
		count_lines '^(slower|faster|new|missing) ' 0
	done
}

case_bad_input() {
	standard_trace base.sqlite 1
	run 0 "$GPT" baseline save base.sqlite -o good.json

	run 2 "$GPT" diff base.sqlite nothere.sqlite
	one_error "cannot open 'nothere.sqlite': no such file$"
	mkdir adir
	run 2 "$GPT" diff adir base.sqlite
	one_error "cannot open 'adir': is a directory$"
	echo "hello" >text.txt
	run 2 "$GPT" diff base.sqlite text.txt
	one_error "cannot open 'text.txt': not a SQLite database$"
	: >empty.sqlite
	run 2 "$GPT" diff base.sqlite empty.sqlite
	one_error "cannot open 'empty.sqlite': empty file"
	sqlite3 other.sqlite "CREATE TABLE t(x)"
	run 2 "$GPT" diff other.sqlite base.sqlite
	one_error "cannot open 'other.sqlite': .*"
	mktrace nokernels.sqlite
	run 2 "$GPT" diff base.sqlite nokernels.sqlite
	one_error "no kernels in 'nokernels.sqlite'$"
	run 2 "$GPT" diff --nvtx no_such_range base.sqlite base.sqlite
	one_error "cannot read 'base.sqlite': no NVTX range named 'no_such_range'"

	run 2 "$GPT" diff base.sqlite
	usage_error "diff needs two files, BASE and NEW; 1 given$"
	run 2 "$GPT" diff --threshold 5 base.sqlite base.sqlite
	usage_error "bad --threshold '5': give a percentage such as 3% or a fraction below 1"
	run 2 "$GPT" diff --alpha 0 base.sqlite base.sqlite
	usage_error "bad --alpha '0'"
	run 2 "$GPT" diff --min-samples x base.sqlite base.sqlite
	usage_error "bad --min-samples 'x'"
	run 2 "$GPT" diff --format html base.sqlite base.sqlite
	usage_error "bad --format 'html': give text, markdown, json or junit$"
	run 2 "$GPT" diff --frobnicate base.sqlite base.sqlite
	usage_error "unknown option '--frobnicate'$"
	run 2 "$GPT" diff base.sqlite base.sqlite --threshold
	usage_error "option '--threshold' needs a value$"
	run 2 "$GPT" diff --points 8 base.sqlite base.sqlite
	usage_error "'--points' is not an option of this command$"
	run 2 "$GPT" diff -o /nonexistent/dir/r.txt base.sqlite base.sqlite
	one_error "cannot write '/nonexistent/dir/r.txt': No such file or directory$"

	run 2 "$GPT" check base.sqlite
	usage_error "check needs --baseline FILE$"
	run 2 "$GPT" check --baseline good.json
	usage_error "check needs one trace; 0 given$"
	run 2 "$GPT" check --baseline base.sqlite base.sqlite
	one_error "'base.sqlite' is not a baseline file \(make one with 'gpt-trace baseline save'\)$"
	run 2 "$GPT" check --baseline missing.json base.sqlite
	one_error "cannot open baseline 'missing.json': No such file or directory$"
	echo '{"gpt_trace_baseline": 1, "kernels": [' >broken.json
	run 2 "$GPT" check --baseline broken.json base.sqlite
	one_error "bad baseline 'broken.json': not valid JSON$"
	echo '{"kernels": []}' >nokey.json
	run 2 "$GPT" check --baseline nokey.json base.sqlite
	one_error "bad baseline 'nokey.json': not a gpt-trace baseline"
	echo '{"gpt_trace_baseline": 7, "kernels": []}' >future.json
	run 2 "$GPT" check --baseline future.json base.sqlite
	one_error "bad baseline 'future.json': format version 7 is not supported \(this gpt-trace reads 1\)$"
	echo '{"gpt_trace_baseline": 1, "kernels": []}' >nok.json
	run 2 "$GPT" check --baseline nok.json base.sqlite
	one_error "bad baseline 'nok.json': no kernels$"
	sed 's/"points": \[[0-9]*/"points": ["x"/' good.json >badpoints.json
	run 2 "$GPT" check --baseline badpoints.json base.sqlite
	one_error "bad baseline 'badpoints.json': kernel 1 \('gemm_kernel\(float const\*, float\*\)'\): \"points\" must be a non-empty array"
	sed '0,/"count": 200/s//"count": -3/' good.json >badcount.json
	run 2 "$GPT" check --baseline badcount.json base.sqlite
	one_error "bad baseline 'badcount.json': kernel 1 .*\"count\" must be a launch count"

	run 2 "$GPT" diff --config nothere.conf base.sqlite base.sqlite
	one_error "cannot open config 'nothere.conf': No such file or directory$"
	printf '[defaults]\ntreshold = 3%%\n' >typo.conf
	run 2 "$GPT" diff --config typo.conf base.sqlite base.sqlite
	one_error "bad config 'typo.conf' line 2: unknown key 'treshold' in \[defaults\]"
	printf '[defaults]\nthreshold = 3\n' >badval.conf
	run 2 "$GPT" diff --config badval.conf base.sqlite base.sqlite
	one_error "bad config 'badval.conf' line 2: bad value '3' for threshold"
	printf '[kernels]\n' >badsec.conf
	run 2 "$GPT" diff --config badsec.conf base.sqlite base.sqlite
	one_error "bad config 'badsec.conf' line 1: unknown section '\[kernels\]'"
	printf 'just words\n' >noeq.conf
	run 2 "$GPT" diff --config noeq.conf base.sqlite base.sqlite
	one_error "bad config 'noeq.conf' line 1: expected 'key = value'$"

	run 2 "$GPT" baseline base.sqlite
	usage_error "unknown baseline subcommand 'base.sqlite'; the one there is: save$"
	run 2 "$GPT" baseline
	usage_error "baseline needs a subcommand: save$"
	run 2 "$GPT" baseline save
	usage_error "baseline save needs one trace; 0 given$"
	run 2 "$GPT" baseline save --threshold 5% base.sqlite
	usage_error "'--threshold' is not an option of this command$"
	run 2 "$GPT" baseline save --points 1 base.sqlite
	usage_error "bad --points '1'"
	run 2 "$GPT" baseline save --ignore '*' base.sqlite
	one_error "no kernels of 'base.sqlite' left to save: every one is ignored$"

	# --help is not an error.
	for c in diff check "baseline save" baseline; do
		run 0 "$GPT" $c --help
		expect_line '^usage: gpt-trace '
	done
	run 0 "$GPT" diff --help
	expect_line '^exit status: 0 no kernel slower, 1 at least one kernel slower'
}

name=${1:-}
type "case_${name//-/_}" >/dev/null 2>&1 || fail "no test case '$name'"
"case_${name//-/_}"
echo "ok"
