# Helpers shared by the export tests. Sourced with $SRC (source tree), $GPT (the gpt-trace binary) and
# $CHECKER (perfetto-check) set by ctest; each test works in a fresh temporary directory.
set -u
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpt-export-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FIX=$SRC/tests/fixtures/nsys
H200=$FIX/nvfuser_report1_h200.sqlite
CLOVER=$FIX/pipit_cloverleaf_cuda_perlmutter.sqlite
DATA=$SRC/tests/export/data
EXPECTED=$SRC/tests/export/expected
failures=0

# need_checker: skip (exit 77) with the reason unless node and perfetto-check can run
need_checker() {
	if ! command -v node > /dev/null; then
		echo "skip: node is not installed (perfetto-check needs node 18 or newer)"
		exit 77
	fi
	if [ ! -x "$CHECKER" ]; then
		echo "skip: perfetto-check not found at $CHECKER"
		exit 77
	fi
	# The first run fetches the engine; without it (offline CI) nothing can be checked.
	echo '{"traceEvents":[]}' > "$TMP/empty.json"
	local rc
	"$CHECKER" "$TMP/empty.json" > "$TMP/probe.out" 2>&1
	rc=$?
	if [ $rc -eq 3 ] || [ $rc -eq 64 ]; then
		echo "skip: perfetto-check cannot load its engine:"
		sed 's/^/     /' "$TMP/probe.out"
		exit 77
	fi
}

# make_trace OUT [SQL-FILE...]: a trace with exactly our schema, plus the rows of the SQL files
make_trace() {
	local out=$1
	shift
	rm -f "$out"
	cat "$SRC/schema/schema.sql" "$@" | sqlite3 "$out" || { echo "cannot make $out"; exit 1; }
}

# check FILE SQL...: import FILE with perfetto-check and run the queries; the output (stdout) has one
# block per query. Counts an import problem or a failed query as a failure.
check() {
	local file=$1 rc q
	local queries=()
	shift
	# One line per query, so that each block of the output starts with exactly one "# SQL" line.
	for q in "$@"; do
		q=${q//$'\n'/ }
		queries+=("${q//$'\t'/ }")
	done
	"$CHECKER" "$file" "${queries[@]}" > "$TMP/check.out" 2> "$TMP/check.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL perfetto-check $(basename "$file"): exit $rc" >&2
		grep -E 'IMPORT-PROBLEM|^ERROR' "$TMP/check.out" | sed 's/^/     /' >&2
		grep -v 'parsed' "$TMP/check.err" | sed 's/^/     /' >&2
		failures=$((failures + 1))
	fi
	cat "$TMP/check.out"
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
expect_exit() {
	local name=$1 code=$2 pattern=$3 rc lines
	shift 3
	"$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	lines=$(wc -l < "$TMP/err")
	if [ $rc -eq "$code" ] && grep -Eq -- "$pattern" "$TMP/err" && [ "$lines" -le 1 ]; then
		echo "ok   $name"
	else
		echo "FAIL $name: exit $rc (want $code), stderr:"
		sed 's/^/     /' "$TMP/err"
		failures=$((failures + 1))
	fi
}

# expect_ok NAME CMD...: exit status 0 and nothing on stderr (stdout stays in $TMP/out)
expect_ok() {
	local name=$1 rc
	shift
	"$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$TMP/err" ]; then
		echo "ok   $name"
	else
		echo "FAIL $name: exit $rc, stderr:"
		sed 's/^/     /' "$TMP/err"
		failures=$((failures + 1))
	fi
}

# block FILE N: the rows of the N-th query block of a check output (header line included)
block() {
	awk -v n="$2" '/^# /{b++; next} b==n' "$1"
}

# Queries that read the same in both formats. Argument keys are "debug.x" in Perfetto protobuf and
# "args.x" in JSON; real numbers are printed alike; tabs and control characters made visible.
ARG_KEY="replace(replace(a.key, 'debug.', ''), 'args.', '')"
ARG_VALUE="case when a.value_type = 'real' then printf('%.6g', a.real_value) else replace(replace(a.display_value, char(9), '\\t'), char(1), '\\x01') end"
SLICE_NAME="replace(replace(s.name, char(9), '\\t'), char(1), '\\x01')"
TRACK_NAME="coalesce(th.name, t.name)"
TRACK_JOIN="join track t on s.track_id = t.id left join thread_track tt on tt.id = t.id
	left join thread th on th.utid = tt.utid left join process_track pt on pt.id = t.id
	left join process p on p.upid = coalesce(th.upid, pt.upid)"

Q_TRACKS="select p.name as process, $TRACK_NAME as track, count(s.id) as slices from slice s $TRACK_JOIN
	group by 1, 2 order by 1, 2"
Q_SLICES="select p.name as process, $TRACK_NAME as track, s.ts - (select min(ts) from slice) as ts, s.dur,
	s.depth, s.category, $SLICE_NAME as name from slice s $TRACK_JOIN order by 1, 2, 3, 5"
Q_ARGS="select $TRACK_NAME as track, s.ts - (select min(ts) from slice) as ts, s.depth, $ARG_KEY as key,
	$ARG_VALUE as value from slice s $TRACK_JOIN join args a on a.arg_set_id = s.arg_set_id
	where a.key not like 'legacy_event.%' order by 1, 2, 3, 4"
Q_FLOWS="select so.name as api, so.ts - (select min(ts) from slice) as api_ts,
	replace(replace(si.name, char(9), '\\t'), char(1), '\\x01') as work,
	si.ts - (select min(ts) from slice) as work_ts from flow f join slice so on so.id = f.slice_out
	join slice si on si.id = f.slice_in order by 2, 4"
Q_COUNTERS="select ct.name, count(*) as n, printf('%.6g', min(c.value)) as min, printf('%.6g', max(c.value)) as max
	from counter_track ct join counter c on c.track_id = ct.id group by ct.name order by ct.name"
Q_PROCESSES="select pid, name from process where pid != 0 order by upid"

finish() {
	if [ $failures -ne 0 ]; then
		echo "$failures failure(s)"
		exit 1
	fi
	exit 0
}
