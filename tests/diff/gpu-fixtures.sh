#!/bin/bash
# The verdicts of diff and check on real GPU traces of samples/slow_kernel, recorded on the device
# with `gpt-trace run` and committed as fixtures (see tests/diff/CMakeLists.txt for the files).
# Skips (77) while the fixtures are absent. One case per ctest test: gpu-fixtures.sh CASE.
. "$(dirname "$0")/lib.sh"

FIX="$SRC/tests/fixtures/gpu"
for f in slow_kernel_base slow_kernel_base2 slow_kernel_slow; do
	if [ ! -f "$FIX/$f.sqlite" ]; then
		echo "skip: GPU fixture $FIX/$f.sqlite is absent (recorded on the device by the lead)"
		exit 77
	fi
done
BASE="$FIX/slow_kernel_base.sqlite"
RERUN="$FIX/slow_kernel_base2.sqlite"
SLOW="$FIX/slow_kernel_slow.sqlite"

case_same() {
	# Two runs of the same program compare as the same.
	run 0 "$GPT" diff "$BASE" "$RERUN"
	expect_line '^same .*fma_loop'
	count_lines '^(slower|faster|new|missing) ' 0
}

case_slower() {
	# --slow does 20% more work per element in fma_loop: slower, and only fma_loop.
	run 1 "$GPT" diff "$BASE" "$SLOW"
	count_lines '^slower ' 1
	expect_line '^slower +1\.[12][0-9]* .*fma_loop'
	run 1 "$GPT" diff -f junit "$BASE" "$SLOW"
	python3 - out.txt <<'PY' || fail "JUnit of the GPU fixtures"
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
failed = [c.getAttribute("name") for c in doc.getElementsByTagName("testcase")
          if c.getElementsByTagName("failure")]
assert len(failed) == 1 and "fma_loop" in failed[0], failed
PY
}

case_check() {
	run 0 "$GPT" baseline save "$BASE" -o baseline.json
	run 0 "$GPT" check --baseline baseline.json "$RERUN"
	expect_line '^same .*fma_loop'
	run 1 "$GPT" check --baseline baseline.json "$SLOW"
	count_lines '^slower ' 1
	expect_line '^slower .*fma_loop'
}

name=${1:-}
type "case_$name" >/dev/null 2>&1 || fail "no test case '$name'"
"case_$name"
echo "ok"
