# Helpers of the cross-rank tests: the analyzer tests' helpers, and gen for synthetic rank traces.
. "$SRC/tests/analyzer/lib.sh"
GEN="python3 $SRC/tests/ranks/gen_ranks.py"

# json FILE PYTHON-EXPRESSION: evaluate an expression over the parsed JSON report (as d)
json() {
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"
}
