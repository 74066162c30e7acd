#!/usr/bin/env bash
# Bad input to the cross-rank report: traces of another job mixed in, a rank given twice, a rank
# missing, a rank's trace cut short (no trace_complete), a trace file truncated on disk, a damaged
# summary, traces without rank rows. Each gets a note naming the trace and the reason; the rest of
# the job is still analyzed.
. "$SRC/tests/ranks/lib.sh"

$GEN --world 2 --slow 1:5:4 --job job-A "$TMP/a" > /dev/null
$GEN --world 2 --job job-B "$TMP/b" > /dev/null
cp "$TMP/b/rank-0.sqlite" "$TMP/b0.sqlite"
"$GPT" report -q -f json -o "$TMP/mixed.json" "$TMP"/a/rank-*.sqlite "$TMP/b0.sqlite"
expect "mixed jobs: note" "True" \
	"$(json "$TMP/mixed.json" 'any("b0.sqlite\x27 left out: it is from another job (job id \x27job-B\x27, this job\x27s \x27job-A\x27)" in n for n in d["notes"])')"
expect "mixed jobs: the rest analyzed" "[0, 1] [3, 7, 11]" \
	"$(json "$TMP/mixed.json" '" ".join([str([r["rank"] for r in d["ranks"]]), str([i["index"] for i in d["iterations"] if i["straggler_rank"] == 1])])')"

# a rank of a 3-rank job with the same job id (a rerun under one scheduler job): the world size tells
$GEN --world 3 --job job-A "$TMP/c" > /dev/null
cp "$TMP/c/rank-2.sqlite" "$TMP/c2.sqlite"
"$GPT" report -q -f json -o "$TMP/world.json" "$TMP"/a/rank-*.sqlite "$TMP/c2.sqlite"
expect "another world size: note" "True" \
	"$(json "$TMP/world.json" 'any("c2.sqlite\x27 left out: it is from another job (world size 3, this job\x27s 2)" in n for n in d["notes"])')"

cp "$TMP/a/rank-1.sqlite" "$TMP/a1-copy.sqlite"
"$GPT" report -q -f json -o "$TMP/twice.json" "$TMP"/a/rank-*.sqlite "$TMP/a1-copy.sqlite"
expect "rank twice: note" "True" "$(json "$TMP/twice.json" 'any(n.startswith("rank 1 given twice") for n in d["notes"])')"
expect "rank twice: two ranks" "2" "$(json "$TMP/twice.json" 'len(d["ranks"])')"

$GEN --world 4 --ranks 0,1,3 --slow 3:4:4 "$TMP/missing" > /dev/null
"$GPT" report -q -f json -o "$TMP/missing.json" "$TMP"/missing/rank-*.sqlite
expect "missing rank: note" "True" "$(json "$TMP/missing.json" 'any(n.startswith("1 of 4 ranks missing (rank 2)") for n in d["notes"])')"
expect "missing rank: the rest analyzed" "[3, 7, 11]" \
	"$(json "$TMP/missing.json" '[i["index"] for i in d["iterations"] if i["straggler_rank"] == 3]')"

$GEN --world 3 --truncate 2:6 --slow 1:5:4 "$TMP/cut" > /dev/null
"$GPT" report -q -f json -o "$TMP/cut.json" "$TMP"/cut/rank-*.sqlite
expect "cut short: note" "True" \
	"$(json "$TMP/cut.json" 'any(n.startswith("rank 2\x27s trace is incomplete (truncated: no trace_complete mark): 36 collectives where others have 72") for n in d["notes"])')"
expect "cut short: the rest analyzed" "[3, 7, 11]" \
	"$(json "$TMP/cut.json" '[i["index"] for i in d["iterations"] if i["straggler_rank"] == 1]')"

$GEN --world 3 --slow 0:5:4 "$TMP/disk" > /dev/null
head -c 20000 "$TMP/disk/rank-2.sqlite" > "$TMP/disk/rank-2.tmp" && mv "$TMP/disk/rank-2.tmp" "$TMP/disk/rank-2.sqlite"
"$GPT" report -q -f json -o "$TMP/disk.json" "$TMP"/disk/rank-*.sqlite
expect "truncated file: note" "True" \
	"$(json "$TMP/disk.json" 'any("rank-2.sqlite\x27 left out: cannot open" in n for n in d["notes"])')"
expect "truncated file: missing rank noted" "True" "$(json "$TMP/disk.json" 'any(n.startswith("1 of 3 ranks missing (rank 2)") for n in d["notes"])')"
expect "truncated file: the rest analyzed" "[3, 7, 11]" \
	"$(json "$TMP/disk.json" '[i["index"] for i in d["iterations"] if i["straggler_rank"] == 0]')"

head -c 3000 "$TMP/a/rank-1.sqlite.summary" > "$TMP/damaged.summary"
"$GPT" report -q -f json -o "$TMP/damaged.json" "$TMP/a/rank-0.sqlite.summary" "$TMP/damaged.summary"
expect "damaged summary: note" "True" \
	"$(json "$TMP/damaged.json" 'any("cannot read summary" in n and "damaged.summary\x27: a damaged collective line" in n for n in d["notes"])')"
head -c 300 "$TMP/a/rank-1.sqlite.summary" > "$TMP/header.summary"
"$GPT" report -q -f json -o "$TMP/header.json" "$TMP/a/rank-0.sqlite.summary" "$TMP/header.summary"
expect "summary cut in its header: note" "True" \
	"$(json "$TMP/header.json" 'any("header.summary\x27: truncated or damaged: left out" in n for n in d["notes"])')"
printf 'hello\n' > "$TMP/bogus.summary"
expect_exit "nothing readable" 2 "no rank trace could be read: cannot read summary '.*bogus.summary': not a gpt-trace rank summary" \
	"$GPT" report -q "$TMP/bogus.summary"

# a summary of an older format (its meaning changed: the warm-up) says so, and one cached beside its
# trace is made again
sed '1s/.*/gpt-trace-rank-summary 1/' "$TMP/a/rank-1.sqlite.summary" > "$TMP/old.summary"
expect_exit "summary of another version" 2 "cannot read summary '.*old.summary': made by another version of gpt-trace" \
	"$GPT" report -q "$TMP/old.summary"
mkdir -p "$TMP/cached" && cp "$TMP/a/rank-0.sqlite" "$TMP/a/rank-1.sqlite" "$TMP/cached/"
"$GPT" report -q -o /dev/null "$TMP/cached/rank-0.sqlite" "$TMP/cached/rank-1.sqlite"
touch -r "$TMP/cached/rank-1.sqlite.summary" "$TMP/old.summary"
cp -p "$TMP/old.summary" "$TMP/cached/rank-1.sqlite.summary"
"$GPT" report -q -o /dev/null "$TMP/cached/rank-0.sqlite" "$TMP/cached/rank-1.sqlite"
expect "old cached summary made again" "$(head -1 "$TMP/a/rank-1.sqlite.summary")" "$(head -1 "$TMP/cached/rank-1.sqlite.summary")"

# Issue 40 item 4: ranks that nothing else tells apart (no job id, one world size, ranks 0 and 1)
# but recorded 540 days apart (HTA's nccl_parser_config rank 0 with df_index_resolver's rank 1 got
# 15 "matched" collectives and a clock offset of -540 days): refused, unless --force-job.
$GEN --world 2 --slow 1:5:4 "$TMP/apart" > /dev/null
sqlite3 "$TMP/apart/rank-1.sqlite" "UPDATE GPT_META SET value = CAST(value AS INTEGER) + 540 * 86400000000000
	WHERE name = 'time_origin_utc_ns'"
expect_exit "ranks 540 days apart: refused" 2 \
	"rank-0.sqlite' and '.*rank-1.sqlite' were recorded 540.0 days apart \\(.* UTC and .* UTC\\): traces of different runs" \
	"$GPT" report -q "$TMP"/apart/rank-*.sqlite
"$GPT" report -q -f json --force-job -o "$TMP/apart.json" "$TMP"/apart/rank-*.sqlite ||
	{ echo "FAIL --force-job"; failures=$((failures + 1)); }
expect "--force-job: the two ranks" "2" "$(json "$TMP/apart.json" 'len(d["ranks"])')"
# export too: refused as report refuses (its message names --force-job, which export now takes)
expect_exit "ranks 540 days apart: export refuses" 2 "were recorded 540.0 days apart" \
	"$GPT" export -q -o "$TMP/apart.ranks.json" "$TMP"/apart/rank-*.sqlite
"$GPT" export -q --force-job -o "$TMP/apart.ranks.json" "$TMP"/apart/rank-*.sqlite > /dev/null ||
	{ echo "FAIL export --force-job"; failures=$((failures + 1)); }
# the same for traces without ranks read as one (a parent and its child, 19 h apart); as recorded
# (seconds apart) they are one job's
F=$SRC/tests/fixtures/gpu
cp "$F/fork_child-743.sqlite" "$F/fork_child-744.sqlite" "$TMP/"
"$GPT" report -q -o /dev/null "$TMP/fork_child-743.sqlite" "$TMP/fork_child-744.sqlite" ||
	{ echo "FAIL a parent and its child refused"; failures=$((failures + 1)); }
sqlite3 "$TMP/fork_child-744.sqlite" "UPDATE GPT_META SET value = CAST(value AS INTEGER) + 19 * 3600000000000
	WHERE name = 'time_origin_utc_ns'"
expect_exit "processes 19 h apart: refused" 2 "were recorded 19.0 h apart" \
	"$GPT" report -q "$TMP/fork_child-743.sqlite" "$TMP/fork_child-744.sqlite"
expect_exit "processes 19 h apart: stats refuses too" 2 "were recorded 19.0 h apart" \
	"$GPT" stats "$TMP/fork_child-743.sqlite" "$TMP/fork_child-744.sqlite"
expect_exit "processes 19 h apart: export refuses too" 2 "were recorded 19.0 h apart" \
	"$GPT" export -q -o "$TMP/fork.perfetto-trace" "$TMP/fork_child-743.sqlite" "$TMP/fork_child-744.sqlite"
"$GPT" export -q --force-job --no-findings -o "$TMP/fork.perfetto-trace" "$TMP/fork_child-743.sqlite" \
	"$TMP/fork_child-744.sqlite" > /dev/null || { echo "FAIL export --force-job on processes"; failures=$((failures + 1)); }
"$GPT" report -q --force-job -o /dev/null "$TMP/fork_child-743.sqlite" "$TMP/fork_child-744.sqlite" ||
	{ echo "FAIL --force-job on processes"; failures=$((failures + 1)); }

# any bytes in a summary: an exit status of 0 or 2, no sanitizer report
python3 "$SRC/tests/ranks/mutate_summary.py" "$GPT" "$TMP/a/rank-1.sqlite.summary" "$TMP/a/rank-0.sqlite.summary" "$TMP" ||
	failures=$((failures + 1))

$GEN --world 3 --no-rank --slow 2:5:4 "$TMP/norank" > /dev/null
"$GPT" report -q -f json -o "$TMP/norank.json" "$TMP"/norank/rank-*.sqlite
expect "no rank rows: one rank per process" "True [3, 7, 11]" \
	"$(json "$TMP/norank.json" '" ".join([str(d["ranks_from_processes"]), str([i["index"] for i in d["iterations"] if i["straggler_rank"] == 2])])')"
finish
