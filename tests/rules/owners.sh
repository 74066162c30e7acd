#!/usr/bin/env bash
# The kernel-owner classifier on every kernel name of every committed trace (GPU fixtures, real
# programs, both nsys exports): the owners must equal expected/owners.tsv, which was read name by
# name when it was written. Names are cut to 200 characters there, the demangled name where a trace
# has one (what the rules classify). The caches that report and stats leave beside a JSON trace
# (NAME.json.gz.sqlite) are not committed traces.
# usage: owners.sh SRC BIN [--write]
set -euo pipefail
src=$1; bin=$2
names=$(mktemp); trap 'rm -f "$names"' EXIT
find "$src/tests/fixtures" -name '*.sqlite' ! -name '*.json*.sqlite' | sort | while read -r f; do
	sqlite3 -readonly "$f" "SELECT DISTINCT COALESCE(d.value, s.value) FROM CUPTI_ACTIVITY_KIND_KERNEL k
		LEFT JOIN StringIds d ON d.id = k.demangledName LEFT JOIN StringIds s ON s.id = k.shortName" \
		2>/dev/null || true
done | LC_ALL=C sort -u >"$names"
got=$("$bin/owner-names" <"$names" | cut -c1-200 | LC_ALL=C sort -u)
if [ "${3:-}" = --write ]; then
	printf '%s\n' "$got" >"$src/tests/rules/expected/owners.tsv"
	exit 0
fi
[ "$(wc -l <"$names")" -gt 100 ] || { echo "FAIL: only $(wc -l <"$names") kernel names found"; exit 1; }
if ! diff <(printf '%s\n' "$got") "$src/tests/rules/expected/owners.tsv"; then
	echo "FAIL: owners differ from expected/owners.tsv (<: now, >: expected)"
	exit 1
fi
echo "PASS: $(printf '%s\n' "$got" | wc -l) kernel names, owners as expected"
