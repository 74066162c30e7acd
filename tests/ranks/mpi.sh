#!/usr/bin/env bash
# The per-rank step under Open MPI's mpirun, as on a cluster: each of 4 processes summarizes its own
# rank's trace (%r) into a shared folder, and the report merges the summaries. Skipped (77) when
# mpirun is not installed (scripts/install-deps.sh installs openmpi-bin).
. "$SRC/tests/ranks/lib.sh"

if ! command -v mpirun > /dev/null; then
	echo "skip: mpirun not found (apt-get install openmpi-bin)"
	exit 77
fi
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
$GEN --world 4 --slow 2:5:4 "$TMP/job" > /dev/null
mkdir "$TMP/summaries"
if ! mpirun "${root[@]}" --oversubscribe -n 4 "$GPT" summarize -q --launcher -o "$TMP/summaries" \
	"$TMP/job/rank-%r.sqlite" > "$TMP/mpi.log" 2>&1; then
	echo "FAIL mpirun"
	sed 's/^/     /' "$TMP/mpi.log"
	exit 1
fi
expect "mpirun: one summary per process" "4" "$(ls "$TMP"/summaries/*.summary | wc -l)"
"$GPT" report -q -f json -o "$TMP/mpi.json" "$TMP"/summaries/*.summary
expect "mpirun: the straggler" "[(3, 2), (7, 2), (11, 2)]" \
	"$(json "$TMP/mpi.json" '[(i["index"], i["straggler_rank"]) for i in d["iterations"] if i["straggler_rank"] >= 0]')"
finish
