#!/usr/bin/env bash
# gpt-trace summarize, the per-rank step on its own: summaries beside the traces or in a folder,
# reused while the trace is unchanged and redone when it changes, the slice a process takes under
# a launcher, and the same report from the summaries as from the traces.
. "$SRC/tests/ranks/lib.sh"

$GEN --world 4 --slow 1:5:4 "$TMP/job" > /dev/null
expect "summarize: one line per summary" "4" "$("$GPT" summarize -j 2 "$TMP"/job/rank-*.sqlite | grep -c '\.sqlite\.summary$')"
"$GPT" report -q -f json -o "$TMP/from-traces.json" "$TMP"/job/rank-*.sqlite
"$GPT" report -q -f json -o "$TMP/from-summaries.json" "$TMP"/job/rank-*.sqlite.summary
expect "report from summaries = from traces" "" "$(diff "$TMP/from-traces.json" "$TMP/from-summaries.json")"

rm -f "$TMP"/job/*.summary
"$GPT" report -q -j 1 -f json -o "$TMP/j1.json" "$TMP"/job/rank-*.sqlite
expect "-j 1 and -j 2: the same report" "" "$(diff "$TMP/from-traces.json" "$TMP/j1.json")"

before=$(stat -c %Y.%y "$TMP/job/rank-0.sqlite.summary")
sleep 1
"$GPT" report -q "$TMP"/job/rank-*.sqlite > /dev/null
expect "a fresh summary is reused" "$before" "$(stat -c %Y.%y "$TMP/job/rank-0.sqlite.summary")"
touch "$TMP/job/rank-0.sqlite"
"$GPT" report -q "$TMP"/job/rank-*.sqlite > /dev/null
expect "a changed trace is summarized again" "new" \
	"$([ "$(stat -c %Y.%y "$TMP/job/rank-0.sqlite.summary")" != "$before" ] && echo new)"

"$GPT" report -q --step '^ProfilerStep' "$TMP"/job/rank-*.sqlite > /dev/null
expect "another --step: summarized again" "step ^ProfilerStep" "$(sed -n 3p "$TMP/job/rank-0.sqlite.summary")"

mkdir "$TMP/sums"
"$GPT" summarize -q -o "$TMP/sums" "$TMP"/job/rank-*.sqlite
expect "-o DIR" "rank-0.sqlite.summary rank-1.sqlite.summary rank-2.sqlite.summary rank-3.sqlite.summary" \
	"$(cd "$TMP/sums" && echo *)"

# a read-only folder: the report keeps its summaries in a temporary folder
mkdir "$TMP/ro" && cp "$TMP"/job/rank-*.sqlite "$TMP/ro/" && chmod a-w "$TMP/ro"
if [ "$(id -u)" != 0 ]; then
	"$GPT" report -q -f json -o "$TMP/ro.json" "$TMP"/ro/rank-*.sqlite
	expect "read-only folder: report" "4" "$(json "$TMP/ro.json" 'len(d["ranks"])')"
	expect "read-only folder: nothing written" "4" "$(ls "$TMP/ro" | wc -l)"
fi
chmod u+w "$TMP/ro"

# under a launcher: process 1 of 2 takes traces 1 and 3; %r names one trace per process
rm -f "$TMP"/sums/*
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$GPT" summarize -q --launcher -o "$TMP/sums" "$TMP"/job/rank-*.sqlite
expect "--launcher: a slice" "rank-1.sqlite.summary rank-3.sqlite.summary" "$(cd "$TMP/sums" && echo *)"
rm -f "$TMP"/sums/*
SLURM_PROCID=2 SLURM_NTASKS=4 "$GPT" summarize -q --launcher -o "$TMP/sums" "$TMP/job/rank-%r.sqlite"
expect "--launcher: %r" "rank-2.sqlite.summary" "$(cd "$TMP/sums" && echo *)"
expect_exit "--launcher without one" 2 "--launcher: no MPI or Slurm rank in the environment" \
	env -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u PMIX_RANK -u SLURM_PROCID "$GPT" summarize --launcher "$TMP/job/rank-0.sqlite"
expect_exit "summarize nothing" 2 "no trace given" "$GPT" summarize
finish
