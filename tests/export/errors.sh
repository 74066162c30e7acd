#!/bin/bash
# Bad input and bad output paths: one clear error line, exit status 2, and never a file (or a stray
# temporary) under the output name. A write that fails halfway (file size limit) leaves an existing
# output untouched; a successful export replaces it. Needs no checker.
. "$(dirname "$0")/lib.sh"

make_trace "$TMP/t.sqlite" "$DATA/timeline.sql"

# no_leftovers NAME DIR: nothing named *.tmp.* in DIR
no_leftovers() {
	local left
	left=$(find "$2" -maxdepth 1 -name '*.tmp.*' | wc -l)
	expect "$1: no temporary file left" 0 "$left"
}

# Usage.
expect_exit "no trace" 2 "no trace given; usage: gpt-trace export" "$GPT" export
expect_exit "unknown format" 2 "unknown export format 'svg'" "$GPT" export --format svg "$TMP/t.sqlite"
expect_exit "unknown option" 2 "unknown option '--bogus'" "$GPT" export --bogus "$TMP/t.sqlite"
expect_exit "option without its value" 2 "option '-o' needs a value" "$GPT" export "$TMP/t.sqlite" -o
expect_ok "help" "$GPT" export --help
expect "help: usage on stdout" "usage: gpt-trace export" "$(head -c 23 "$TMP/out")"

# Bad input: the loader's one line, and no output file.
mkdir "$TMP/in"
expect_exit "missing trace" 2 "cannot open '$TMP/in/missing.sqlite'" "$GPT" export "$TMP/in/missing.sqlite"
echo "not a database" > "$TMP/in/text.sqlite"
expect_exit "not SQLite" 2 "cannot open '$TMP/in/text.sqlite'" "$GPT" export "$TMP/in/text.sqlite"
sqlite3 "$TMP/in/other.sqlite" "CREATE TABLE t(x); INSERT INTO t VALUES (1);"
expect_exit "SQLite without trace tables" 2 "cannot open '$TMP/in/other.sqlite'" \
	"$GPT" export --format chrome "$TMP/in/other.sqlite"
head -c 4096 "$TMP/t.sqlite" > "$TMP/in/truncated.sqlite"
expect_exit "truncated trace" 2 "cannot open '$TMP/in/truncated.sqlite'" "$GPT" export "$TMP/in/truncated.sqlite"
expect "bad input: no output written" "" "$(ls "$TMP/in" | grep -v '\.sqlite$')"
no_leftovers "bad input" "$TMP/in"

# Bad output paths.
expect_exit "output directory missing" 2 "cannot write '$TMP/nodir/x.json': No such file or directory" \
	"$GPT" export --no-findings --format chrome -o "$TMP/nodir/x.json" "$TMP/t.sqlite"
mkdir "$TMP/out.d"
expect_exit "output is a directory" 2 "cannot write '$TMP/out.d': [Ii]s a directory" \
	"$GPT" export --no-findings -o "$TMP/out.d" "$TMP/t.sqlite"
no_leftovers "output is a directory" "$TMP/out.d"
touch "$TMP/plain"
expect_exit "output under a file" 2 "cannot write '$TMP/plain/x.json': Not a directory" \
	"$GPT" export --no-findings -o "$TMP/plain/x.json" "$TMP/t.sqlite"
sum=$(cksum < "$TMP/t.sqlite")
expect_exit "output is the input" 2 "cannot write '$TMP/t.sqlite': it is the input trace" \
	"$GPT" export --no-findings -o "$TMP/t.sqlite" "$TMP/t.sqlite"
expect "output is the input: input unchanged" "$sum" "$(cksum < "$TMP/t.sqlite")"

# A write that fails halfway: with SIGXFSZ ignored, a file size limit makes write() fail (EFBIG).
mkdir "$TMP/w"
echo old > "$TMP/w/clover.json"
for fmt in perfetto chrome; do
	expect_exit "write fails halfway, $fmt" 2 "cannot write '$TMP/w/clover.json': File too large" \
		bash -c 'trap "" XFSZ; ulimit -f 64; exec "$@"' - \
		"$GPT" export --no-findings --format $fmt -o "$TMP/w/clover.json" "$CLOVER"
	expect "write fails halfway, $fmt: old output untouched" old "$(cat "$TMP/w/clover.json")"
	no_leftovers "write fails halfway, $fmt" "$TMP/w"
done
expect_ok "overwrite" "$GPT" export --no-findings --format chrome -o "$TMP/w/clover.json" "$TMP/t.sqlite"
expect "overwrite: replaced" '{"displayTimeUnit"' "$(head -c 18 "$TMP/w/clover.json")"
no_leftovers "overwrite" "$TMP/w"

# Outputs that are not regular files are written in place, never renamed over: a pipe stays a pipe
# and gets the whole export (as /dev/stdout would: renaming over it, as root, replaced the device
# link with a file); a symbolic link stays a link, and the file it names gets the export.
"$GPT" export -q --no-findings -o "$TMP/w/plain.pftrace" "$TMP/t.sqlite" > /dev/null
mkfifo "$TMP/w/pipe"
# (a writer that renames over the pipe never opens it: the reader gives up)
timeout 30 cat "$TMP/w/pipe" > "$TMP/w/from-pipe" &
expect_ok "into a pipe" "$GPT" export -q --no-findings -o "$TMP/w/pipe" "$TMP/t.sqlite"
wait
expect "into a pipe: still a pipe" "fifo" "$(stat -c %F "$TMP/w/pipe" | sed 's/.*fifo.*/fifo/')"
expect "into a pipe: the whole export" "same" "$(cmp -s "$TMP/w/plain.pftrace" "$TMP/w/from-pipe" && echo same)"
echo old > "$TMP/w/target.pftrace"
ln -s target.pftrace "$TMP/w/link.pftrace"
expect_ok "through a symbolic link" "$GPT" export -q --no-findings -o "$TMP/w/link.pftrace" "$TMP/t.sqlite"
expect "through a symbolic link: still a link" "target.pftrace" "$(readlink "$TMP/w/link.pftrace")"
expect "through a symbolic link: its file replaced" "same" \
	"$(cmp -s "$TMP/w/plain.pftrace" "$TMP/w/target.pftrace" && echo same)"
no_leftovers "pipe and link" "$TMP/w"
finish
