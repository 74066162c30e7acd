#!/bin/bash
# Every kind of bad input gets exit 2 and one line naming the file and the reason, never a crash:
# through the loader's test driver and through each analyzer command.
. "$SRC/tests/analyzer/lib.sh"

echo "hello, not a database" > "$TMP/text.sqlite"
: > "$TMP/empty-file.sqlite"
sqlite3 "$TMP/notrace.sqlite" "CREATE TABLE foo (x); INSERT INTO foo VALUES (1)"
size=$(stat -c %s "$H200")
head -c $((size / 2)) "$H200" > "$TMP/half.sqlite"
head -c $((size / 2 + 100)) "$H200" > "$TMP/half-odd.sqlite"
# garbage over eight b-tree pages in the middle, and over the schema page
cp "$H200" "$TMP/corrupt.sqlite"
chmod u+w "$TMP/corrupt.sqlite"
python3 -c "f = open('$TMP/corrupt.sqlite', 'r+b'); f.seek(4096 * 40); f.write(b'\xa5' * 4096 * 8)"
cp "$H200" "$TMP/corrupt-schema.sqlite"
chmod u+w "$TMP/corrupt-schema.sqlite"
python3 -c "f = open('$TMP/corrupt-schema.sqlite', 'r+b'); f.seek(100); f.write(b'\x37' * 3000)"
mkdir "$TMP/dir.sqlite"

# the analyzer commands that take traces (added as they land)
COMMANDS="stats report"

check() {
	local what=$1 file=$2 pattern=$3
	expect_exit "$what: loader" 2 "^gpt-trace: cannot open '.*': $pattern" "$QUERY" --counts "$file"
	expect_exit "$what: second of two" 2 "^gpt-trace: cannot open '.*': $pattern" \
		"$QUERY" --counts "$H200" "$file"
	for cmd in $COMMANDS; do
		expect_exit "$what: $cmd" 2 "^gpt-trace: cannot open '.*': $pattern" "$GPT" $cmd "$file"
	done
}

check "missing file" "$TMP/missing.sqlite" "no such file"
check "text file" "$TMP/text.sqlite" "not a SQLite database"
check "empty file" "$TMP/empty-file.sqlite" "empty file"
check "not a trace" "$TMP/notrace.sqlite" "not a gpt-trace or nsys trace"
check "truncated" "$TMP/half.sqlite" "truncated file"
check "truncated mid-page" "$TMP/half-odd.sqlite" "truncated file"
check "corrupt pages" "$TMP/corrupt.sqlite" "corrupt or truncated file"
check "corrupt schema" "$TMP/corrupt-schema.sqlite" "corrupt or truncated file|not a SQLite database"
check "directory" "$TMP/dir.sqlite" "is a directory"

# several traces, one of them bad: the bad one is named
expect_exit "bad among good: report" 2 "^gpt-trace: cannot open '$TMP/half.sqlite': truncated" \
	"$GPT" report "$H200" "$TMP/half.sqlite" "$CLOVER"
# a trace with tables missing (nsys creates them lazily) is not bad input: CloverLeaf has no NVTX
# and no MEMSET table, a trace with only a kernel table reads fine
sqlite3 "$TMP/kernels-only.sqlite" "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER,
	deviceId INTEGER, streamId INTEGER, demangledName INTEGER); INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
	VALUES (100, 200, 0, 7, 1)"
expect_exit "kernels-only trace: stats" 0 "" "$GPT" stats "$TMP/kernels-only.sqlite"
expect_exit "kernels-only trace: report" 0 "" "$GPT" report "$TMP/kernels-only.sqlite"
# A file too big for the up-front quick_check (over 32 MiB): damage in the middle is found by the
# query that reads it, still one line and exit 2.
"$SRC/bench/analyzer/make-trace.sh" "$TMP/big.sqlite" 400000
python3 -c "f = open('$TMP/big.sqlite', 'r+b'); f.seek(4096 * 5000); f.write(b'\xa5' * 4096 * 20)"
for cmd in stats report; do
	expect_exit "corrupt big file: $cmd" 2 "malformed" "$GPT" $cmd "$TMP/big.sqlite"
done
expect_exit "unknown nvtx range" 2 "no NVTX range named 'nope'" "$QUERY" --nvtx nope --counts "$H200"
finish
