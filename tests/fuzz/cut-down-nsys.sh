#!/usr/bin/env bash
# Cut-down nsys exports are read with what they have: each nsys fixture copied with sqlite3 and
# stripped of every globalPid column, of StringIds, of TARGET_INFO_GPU, and of all three; report
# (text and JSON), stats and export (Perfetto and Chrome) must succeed without a word on stderr and
# give the same processes, event counts and kernel times as the whole export. Names that lived in
# what was dropped read as placeholders: "(name id N)" without StringIds, "GPU N" without
# TARGET_INFO_GPU. Run by ctest with $SRC and $BIN.
set -u
: "${SRC:?}" "${BIN:?}"
command -v sqlite3 >/dev/null || { echo "skip: sqlite3 not installed"; exit 77; }
GPT=$BIN/gpt-trace
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpt-cut-down.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0

ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

# run NAME CMD...: exit 0 and an empty stderr, stdout in $TMP/out
run() {
	local name=$1
	shift
	if "$@" > "$TMP/out" 2> "$TMP/err" && [ ! -s "$TMP/err" ]; then
		ok "$name"
	else
		fail "$name: exit $?, stderr:"
		sed 's/^/     /' "$TMP/err"
		return 1
	fi
}

same() {	# same NAME EXPECTED ACTUAL
	if [ "$2" == "$3" ]; then
		ok "$1"
	else
		fail "$1"
		diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | sed 's/^/     /'
	fi
}

drop_globalpid() {
	local t
	for t in $(sqlite3 "$1" "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c
			WHERE m.type = 'table' AND c.name = 'globalPid'"); do
		sqlite3 "$1" "ALTER TABLE \"$t\" DROP COLUMN globalPid" || return 1
	done
	[ -z "$(sqlite3 "$1" "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c
			WHERE m.type = 'table' AND c.name = 'globalPid'")" ]
}

# facts FILE: what must not change when columns are dropped
facts() {
	"$GPT" report -f json "$1" 2>/dev/null | grep -E '^  "(processes|events)"'
	# kernel times and counts, without the names
	"$GPT" stats "$1" 2>/dev/null | awk '/^GPU kernels by name/ { k = 1; next } k && NF == 0 { exit }
		k && $1 != "Time" { print $2, $3 }' | sort
}

for fixture in "$SRC"/tests/fixtures/nsys/*.sqlite; do
	base=$(basename "$fixture" .sqlite)
	want=$(facts "$fixture")
	[ -n "$want" ] || fail "$base: no facts from the whole export"
	for cut in no-globalpid no-stringids no-target-info-gpu none-of-them; do
		db=$TMP/$base-$cut.sqlite
		name=$base-$cut
		cp "$fixture" "$db"
		case $cut in
		no-globalpid) drop_globalpid "$db" || fail "$name: cannot drop globalPid";;
		no-stringids) sqlite3 "$db" "DROP TABLE StringIds";;
		no-target-info-gpu) sqlite3 "$db" "DROP TABLE TARGET_INFO_GPU";;
		none-of-them) drop_globalpid "$db" && sqlite3 "$db" "DROP TABLE StringIds; DROP TABLE TARGET_INFO_GPU" ||
			fail "$name: cannot cut";;
		esac
		run "$name: report" "$GPT" report "$db"
		run "$name: report json" "$GPT" report -f json "$db"
		run "$name: report html" "$GPT" report -f html -o "$TMP/r.html" "$db"
		run "$name: stats" "$GPT" stats "$db"
		case $cut in
		no-stringids | none-of-them)
			grep -q '(name id [0-9]*)' "$TMP/out" && ok "$name: kernels named by id" ||
				fail "$name: kernels named by id";;
		esac
		run "$name: export perfetto" "$GPT" export -o "$TMP/t.perfetto-trace" "$db" &&
			{ [ -s "$TMP/t.perfetto-trace" ] && ok "$name: perfetto written" || fail "$name: perfetto empty"; }
		run "$name: export chrome" "$GPT" export -f chrome -o "$TMP/t.json" "$db" &&
			{ [ -s "$TMP/t.json" ] && ok "$name: chrome written" || fail "$name: chrome empty"; }
		same "$name: same processes, events and kernel times" "$want" "$(facts "$db")"
		case $cut in
		no-target-info-gpu | none-of-them)
			"$GPT" report -f json "$db" | grep -q '"label": "GPU 0"' && ok "$name: GPU without a name" ||
				fail "$name: GPU without a name";;
		esac
	done
done
if [ $failures -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
