#!/bin/bash
# One rule test case: build the trace(s), run rule-run, compare with the expected text.
#   run-case.sh EXPECTED TRACE[,TRACE...] [rule-run options...]
# A TRACE ending in .sql is built from schema/schema.sql, cases/prelude.sql and that file; any
# other TRACE is used as it is (the nsys fixtures); - is no trace at all (rule-run -l). EXPECTED is compared after dropping its '#'
# comment lines; rule-run's stderr and a non-zero exit status ("exit N") are part of the output,
# and the source tree's path reads as SRC. GPT_TRACE_REGEN=1 rewrites EXPECTED from the output
# (keeping its comments): review the diff before committing it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${SRC:=$(cd "$here/../.." && pwd)}"
: "${BIN:?set BIN to the build bin directory}"
expected=$1 traces=$2
shift 2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
paths=()
IFS=, read -ra list <<< "$traces"
for t in "${list[@]}"; do
	case $t in
	-)
		;;
	*.sql)
		db=$tmp/$(basename "$t" .sql).sqlite
		if ! cat "$SRC/schema/schema.sql" "$here/cases/prelude.sql" "$t" | sqlite3 -bail "$db"; then
			echo "run-case: cannot build a trace from $t"
			exit 1
		fi
		paths+=("$db");;
	*)
		paths+=("$t");;
	esac
done

"$BIN/rule-run" "$@" "${paths[@]}" > "$tmp/out" 2>&1
status=$?
[ $status -ne 0 ] && echo "exit $status" >> "$tmp/out"
sed -i "s|$SRC|SRC|g; s|$tmp|TMP|g" "$tmp/out"
# Source paths in a trace recorded on the GPU machine name that machine's checkout of this tree.
sed -i -E "s|/[^ :]*/(kernels/[A-Za-z0-9_.-]+:[0-9]+)|SRC/\1|g" "$tmp/out"
if [ "${GPT_TRACE_REGEN:-}" = 1 ]; then
	# Rewrite the expected text from this run, keeping its comment lines at the top.
	{ grep '^#' "$expected" 2>/dev/null; cat "$tmp/out"; } > "$tmp/new" && cp "$tmp/new" "$expected"
fi
grep -v '^#' "$expected" > "$tmp/expected"
if ! diff -u "$tmp/expected" "$tmp/out"; then
	echo "run-case: $(basename "$expected"): output differs from the expected text (above)"
	exit 1
fi
