#!/bin/sh
# A trace written by the collector (test_metadata, from CUPTI records, NVTX events and real threads)
# holds every invariant of sql_invariants.py; then the checker's self-test breaks copies of it one
# way at a time and checks that the matching invariant, and only it, fails.
# Usage: sql-invariants.sh TEST_METADATA PYTHON
set -u
test_metadata=$1
python=$2
here=$(dirname "$0")
work=$(mktemp -d "${TMPDIR:-/tmp}/gpt-sql-invariants.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$test_metadata" "$work" || exit 1
"$python" "$here/sql_invariants.py" "$work/metadata.sqlite" || exit 1
"$python" "$here/sql_invariants.py" --self-test "$work/metadata.sqlite" || exit 1
