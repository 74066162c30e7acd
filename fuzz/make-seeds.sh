#!/usr/bin/env bash
# Writes the fuzzers' starting inputs into OUT (default fuzz/build/seeds): OUT/trace/ for fuzz-trace
# (SQLite files) and OUT/sql/ for fuzz-sql (SQL text). From the synthetic traces of the analyzer,
# rules and export tests, cut-down nsys exports (fuzz/nsys-seed.py: the tables the loader reads, a
# few rows each; then without globalPid, without StringIds, without TARGET_INFO_GPU), and the
# committed GPU fixtures up to 400 kB. The SQLite seeds are rewritten with 512-byte pages so that
# mutations hit rows more often. These are starting points; the committed corpus (fuzz/corpus/) is
# what -merge=1 kept of them and of what the fuzzers found.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/fuzz/build/seeds}
rm -rf "$out"
mkdir -p "$out/trace" "$out/sql"
schema=$root/schema/schema.sql
prelude=$root/tests/rules/cases/prelude.sql

small() {	# small SRC DST: a copy with 512-byte pages and no free pages
	rm -f "$2"
	sqlite3 "$1" "PRAGMA page_size=512; VACUUM INTO '$2'"
}

# SQL seeds: our schema is loaded by the harness first
cp "$root/tests/analyzer/data/basic.sql" "$out/sql/basic.sql"
for f in "$root"/tests/rules/cases/*.sql; do
	[ "$f" = "$prelude" ] && continue
	cat "$prelude" "$f" > "$out/sql/rules-$(basename "$f")"
done
for f in "$root"/tests/export/data/*.sql; do
	cp "$f" "$out/sql/export-$(basename "$f")"
done

# SQLite seeds from the SQL ones
for f in "$out"/sql/*.sql; do
	db=$out/tmp.sqlite
	rm -f "$db"
	cat "$schema" "$f" | sqlite3 "$db" 2>/dev/null || continue
	small "$db" "$out/trace/$(basename "${f%.sql}").sqlite"
done

# cut-down nsys exports: the tables the loader reads, a few rows each, as SQL (for fuzz-sql, which
# then loads no schema of its own), then without globalPid, StringIds or TARGET_INFO_GPU
for f in "$root"/tests/fixtures/nsys/*.sqlite; do
	pre=$out/sql/nsys-$(basename "${f%.sqlite}")
	python3 "$root/fuzz/nsys-seed.py" "$f" > "$pre.sql"
	{ cat "$pre.sql"; echo "DROP TABLE StringIds;"; } > "$pre-no-stringids.sql"
	{ cat "$pre.sql"; echo "DROP TABLE TARGET_INFO_GPU;"; } > "$pre-no-target-info-gpu.sql"
	{ cat "$pre.sql"
	  for t in CUPTI_ACTIVITY_KIND_KERNEL CUPTI_ACTIVITY_KIND_MEMCPY CUPTI_ACTIVITY_KIND_MEMSET \
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION PROCESSES; do
		grep -q "^CREATE TABLE $t " "$pre.sql" && echo "ALTER TABLE $t DROP COLUMN globalPid;"
	  done; } > "$pre-no-globalpid.sql"
	for g in "$pre"*.sql; do
		rm -f "$out/tmp.sqlite"
		sqlite3 -bail "$out/tmp.sqlite" < "$g"
		small "$out/tmp.sqlite" "$out/trace/$(basename "${g%.sql}").sqlite"
	done
done
for f in "$root"/tests/fixtures/gpu/*.sqlite "$root"/tests/fixtures/gpu/pairs/*.sqlite; do
	[ "$(stat -c %s "$f")" -le 400000 ] || continue
	small "$f" "$out/trace/gpu-$(basename "$f")"
done
rm -f "$out/tmp.sqlite"
ls "$out/trace" | wc -l; ls "$out/sql" | wc -l; du -sh "$out/trace" "$out/sql"
