# Helpers shared by the analyzer shell tests. Sourced with $SRC (source tree) and $BIN (build bin dir)
# set by ctest; each test works in a fresh temporary directory, removed on exit.
set -u
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpt-analyzer-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FIX=$SRC/tests/fixtures/nsys
H200=$FIX/nvfuser_report1_h200.sqlite
CLOVER=$FIX/pipit_cloverleaf_cuda_perlmutter.sqlite
QUERY=$BIN/trace-query
GPT=$BIN/gpt-trace
failures=0

# make_trace OUT [SQL-FILE...]: a trace with exactly our schema, plus the rows of the SQL files
make_trace() {
	local out=$1
	shift
	rm -f "$out"
	cat "$SRC/schema/schema.sql" "$@" | sqlite3 "$out" || { echo "cannot make $out"; exit 1; }
}

# expect NAME EXPECTED-TEXT ACTUAL-TEXT: exact comparison, prints a diff on mismatch
expect() {
	if [ "$2" == "$3" ]; then
		echo "ok   $1"
	else
		echo "FAIL $1"
		diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | sed 's/^/     /'
		failures=$((failures + 1))
	fi
}

# expect_exit NAME CODE STDERR-PATTERN CMD...: exit status and one line on stderr matching the pattern
# (an empty pattern: nothing on stderr)
expect_exit() {
	local name=$1 code=$2 pattern=$3 rc lines ok
	shift 3
	"$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	lines=$(wc -l < "$TMP/err")
	if [ -z "$pattern" ]; then
		[ ! -s "$TMP/err" ] && ok=1
	else
		grep -Eq -- "$pattern" "$TMP/err" && [ "$lines" -le 1 ] && ok=1
	fi
	if [ $rc -eq "$code" ] && [ -n "${ok:-}" ]; then
		echo "ok   $name"
	else
		echo "FAIL $name: exit $rc (want $code), stderr:"
		sed 's/^/     /' "$TMP/err"
		failures=$((failures + 1))
	fi
}

finish() {
	if [ $failures -ne 0 ]; then
		echo "$failures failure(s)"
		exit 1
	fi
	exit 0
}
