#!/bin/bash
# Issue 41's what-if replay on real traces.
# 1. Two independent bottlenecks (tests/gpu/what-if/two_fixes.py on an H200, its log
#    tests/gpu/what-if/h200-2026-12-04.log; the trace of the bad variant in
#    tests/fixtures/gpu/what-if): FP32 matrix products and a read-back every step. Measured
#    untraced (median of 3 runs of 30 steps): bad 16.88 ms, without the read-back 10.70, with TF32
#    7.43, both fixes 6.08. Each fix's replayed saving is within 2x of its measured one, both
#    together too, while the sum of the rules' own estimates is not: the savings overlap.
# 2. Replayed as recorded, every fixture's steady state takes exactly its measured time, and the
#    fixes' order never lengthens it (each "after" no longer than the one before, the last the
#    replay of all of them).
. "$SRC/tests/analyzer/lib.sh"
fail() { echo "FAIL: $*"; exit 1; }
command -v xz >/dev/null || { echo "skipped: xz is needed"; exit 77; }
xz -dc "$SRC/tests/fixtures/gpu/what-if/two_fixes-bad.sqlite.xz" > "$TMP/two_fixes-bad.sqlite"
"$GPT" report --format json -o "$TMP/two_fixes-bad.json" "$TMP/two_fixes-bad.sqlite" || fail "report of two_fixes-bad"
"$GPT" report "$TMP/two_fixes-bad.sqlite" > "$TMP/two_fixes-bad.txt" || fail "text report of two_fixes-bad"
grep -q '^What to shorten first: the steady state replayed' "$TMP/two_fixes-bad.txt" ||
	fail "no 'What to shorten first' section: $(cat "$TMP/two_fixes-bad.txt")"
python3 - "$TMP/two_fixes-bad.json" <<'PY' || fail "two_fixes: replayed savings against the measured ones"
import json, sys
d = json.load(open(sys.argv[1]))
measured = {"bad": 16.88e6, "nosync": 10.70e6, "tf32": 7.43e6, "both": 6.08e6}
w = d["what_if"][0]
it = w["iterations"]
base = w["recorded"]["window_ns"] / it
fixes = {f["rule"]: f for f in w["fixes"]}
assert set(fixes) == {"precision", "excessive-sync"}, fixes
def check(what, replayed, fixed):
    saving, real = base - replayed, measured["bad"] - measured[fixed]
    assert 0.5 <= saving / real <= 2.0, (what, saving, real)
    print("%s: replay saves %.2f ms, measured %.2f ms" % (what, saving / 1e6, real / 1e6))
check("precision alone", fixes["precision"]["alone_ns"] / it, "tf32")
check("excessive-sync alone", fixes["excessive-sync"]["alone_ns"] / it, "nosync")
check("both", w["all"]["window_ns"] / it, "both")
estimates = sum(f["recoverable_per_iteration_ns"] for f in d["findings"] if f["rule"] in fixes)
real = measured["bad"] - measured["both"]
assert estimates / real > 1.3, (estimates, real)
print("the rules' estimates add up to %.2f ms: %.0f%% more than both fixes save" % (estimates / 1e6, 100 * (estimates / real - 1)))
PY
n=0
for t in "$SRC"/tests/fixtures/gpu/*.sqlite "$SRC"/tests/fixtures/gpu/pairs/*.sqlite "$SRC"/tests/fixtures/gpu/real/*.sqlite; do
	[ -e "$t" ] || continue
	cp "$t" "$TMP/one.sqlite"
	"$GPT" report --format json -o "$TMP/one.json" "$TMP/one.sqlite" 2>/dev/null || continue
	python3 - "$TMP/one.json" "$(basename "$t")" <<'PY' || fail "$(basename "$t"): the replay as recorded"
import json, sys
d = json.load(open(sys.argv[1]))
for w in d["what_if"]:
    assert w["recorded"]["window_ns"] == w["measured_ns"], (sys.argv[2], w["recorded"]["window_ns"], w["measured_ns"])
    after = [f["after_ns"] for f in w["fixes"]]
    assert after == sorted(after, reverse=True) and all(a <= w["recorded"]["window_ns"] for a in after), after
    assert not after or after[-1] == w["all"]["window_ns"], (after, w["all"])
PY
	n=$((n + 1))
done
[ "$n" -ge 20 ] || fail "only $n fixtures reported"
echo "ok: two_fixes within 2x; $n fixtures replayed as recorded to the nanosecond"
