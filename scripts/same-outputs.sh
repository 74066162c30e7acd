#!/usr/bin/env bash
# Byte-identical outputs of two gpt-trace binaries: for a refactoring that must not change behaviour.
# Runs every analyzer command the same way with BASE and NEW over every fixture (tests/fixtures/**.sqlite,
# both nsys exports among them), the synthetic traces of the analyzer and export tests, and a generated
# 4-rank job, each binary in its own folder with the same relative paths, then compares every output
# (stdout, stderr, exit status, written files) byte for byte. Counts per family, the differing runs
# listed; exits 1 when any differs.
#
#   stats:    text, markdown, json; and json under --window, --nvtx and --kernel
#   report:   text, markdown, json, html; --whole-trace json
#   export:   perfetto, chrome, chrome --no-findings, perfetto --gzip
#   diff:     each pair of fixtures in tests/fixtures/gpu/pairs and the slow-kernel traces, every format
#   baseline: save on every fixture; check each fixture against its own and its pair's baseline
#   ranks:    the cross-rank report (text, json, html) and export of tests/fixtures/gpu/ddp's four jobs
#             and of the generated job
#   usage:    usage and input errors and help texts of every command (exit status and message)
#
# usage: scripts/same-outputs.sh BASE_BIN NEW_BIN [WORK]   (WORK: a scratch folder, default a temporary one)
# Build the base from the starting commit first, e.g.
#   git worktree add /tmp/base COMMIT && cmake -S /tmp/base -B /tmp/base/build && cmake --build /tmp/base/build
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BASE_BIN NEW_BIN [WORK]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
base=$(realpath "$1")
new=$(realpath "$2")
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/same-outputs.XXXXXX")}
mkdir -p "$work"
work=$(realpath "$work")

# The inputs, once, in $work/in: fixtures, synthetic traces and a generated rank job.
setup() {
	rm -rf "$work/in"
	mkdir -p "$work/in/synthetic"
	(cd "$src/tests" && find fixtures -name '*.sqlite' | while IFS= read -r f; do
		mkdir -p "$work/in/$(dirname "$f")" && cp "$f" "$work/in/$f"
	done)
	cat "$src/schema/schema.sql" "$src/tests/analyzer/data/basic.sql" | sqlite3 "$work/in/synthetic/basic.sqlite"
	cat "$src/schema/schema.sql" "$src/tests/export/data/timeline.sql" | sqlite3 "$work/in/synthetic/timeline.sqlite"
	cat "$src/schema/schema.sql" "$src/tests/export/data/second.sql" | sqlite3 "$work/in/synthetic/second.sqlite"
	python3 "$src/tests/ranks/gen_ranks.py" --world 4 --slow 3:4:4 "$work/in/gen" > /dev/null
}

# run FAMILY NAME CMD...: one run in the current folder; its stdout, stderr and status into out/NAME.*
run() {
	local family=$1 name=$2
	shift 2
	mkdir -p "out/$family"
	"$@" > "out/$family/$name.stdout" 2> "out/$family/$name.stderr"
	echo $? > "out/$family/$name.rc"
}

# all BIN: every run with BIN, in the current folder (a copy of the inputs under in/)
all() {
	local gpt=$1 t n p a b fmt job
	local traces=()
	while IFS= read -r t; do traces+=("$t"); done < <(find in -name '*.sqlite' | sort)
	for t in "${traces[@]}"; do
		n=${t#in/}
		n=${n//\//_}
		n=${n%.sqlite}
		mkdir -p files/$n
		for fmt in text markdown json; do
			run stats "$n.$fmt" "$gpt" stats -q -f $fmt "$t"
		done
		run stats "$n.window" "$gpt" stats -q -f json -w 1:50 "$t"
		run stats "$n.nvtx" "$gpt" stats -q -f json -n step "$t"
		run stats "$n.kernel" "$gpt" stats -q -f json -k '*gemm*' "$t"
		for fmt in text markdown json; do
			run report "$n.$fmt" "$gpt" report -q --color never -f $fmt "$t"
		done
		run report "$n.whole" "$gpt" report -q -f json --whole-trace "$t"
		run report "$n.html" "$gpt" report -q -f html -o files/$n/report.html "$t"
		run export "$n.perfetto" "$gpt" export -q -f perfetto -o files/$n/trace.pftrace "$t"
		run export "$n.chrome" "$gpt" export -q -f chrome -o files/$n/trace.json "$t"
		run export "$n.chrome-nf" "$gpt" export -q -f chrome --no-findings -o files/$n/trace-nf.json "$t"
		run export "$n.gzip" "$gpt" export -q -f perfetto --gzip -o files/$n/trace.pftrace.gz "$t"
		run baseline "$n.save" "$gpt" baseline save -o files/$n/base.json "$t"
		run baseline "$n.check-self" "$gpt" check -b files/$n/base.json "$t"
	done
	# pairs: diff both ways in every format, and check each side against the other's baseline
	local pairs=(
		"fixtures/gpu/slow_kernel_base fixtures/gpu/slow_kernel_slow"
		"fixtures/gpu/slow_kernel_base fixtures/gpu/slow_kernel_base2"
		"fixtures/gpu/sync_every_launch fixtures/gpu/sync_every_launch_stream"
		"fixtures/nsys/nvfuser_report1_h200 fixtures/nsys/pipit_cloverleaf_cuda_perlmutter"
		"fixtures/gpu/ddp/ddp-clean-exposed-rank0 fixtures/gpu/ddp/ddp-slow-exposed-rank0")
	for p in in/fixtures/gpu/pairs/*-bad.sqlite; do
		b=${p#in/}
		b=${b%-bad.sqlite}
		for a in in/$b-*.sqlite; do
			[ "$a" = "$p" ] || pairs+=("${p#in/} ${a#in/}")
		done
	done
	for p in "${pairs[@]}"; do
		a=${p% *}
		a=${a%.sqlite}
		b=${p#* }
		b=${b%.sqlite}
		n=$(basename "$a")--$(basename "$b")
		mkdir -p files/$n
		for fmt in text markdown json junit; do
			run diff "$n.$fmt" "$gpt" diff -q -f $fmt in/$a.sqlite in/$b.sqlite
			run diff "$n.rev.$fmt" "$gpt" diff -q -f $fmt in/$b.sqlite in/$a.sqlite
		done
		run diff "$n.files" "$gpt" diff -q --threshold 10% --skip-first 2 --junit files/$n/d.xml \
			--json files/$n/d.json --markdown files/$n/d.md in/$a.sqlite in/$b.sqlite
		for fmt in text markdown json junit; do
			run baseline "$n.check.$fmt" "$gpt" check -f $fmt -b "files/${a//\//_}/base.json" in/$b.sqlite
		done
		run baseline "$n.diff-base" "$gpt" diff -q "files/${a//\//_}/base.json" in/$b.sqlite
	done
	# the cross-rank report and export of whole jobs
	for job in clean-exposed clean-overlapped slow-exposed slow-overlapped; do
		mkdir -p files/ddp-$job
		for fmt in text markdown json; do
			run ranks "ddp-$job.$fmt" "$gpt" report -q -j 1 -f $fmt in/fixtures/gpu/ddp/ddp-$job-rank*.sqlite
		done
		run ranks "ddp-$job.html" "$gpt" report -q -j 1 -f html -o files/ddp-$job/r.html \
			in/fixtures/gpu/ddp/ddp-$job-rank*.sqlite
		run ranks "ddp-$job.export" "$gpt" export -q -o files/ddp-$job/r.json in/fixtures/gpu/ddp/ddp-$job-rank*.sqlite
		run ranks "ddp-$job.stats" "$gpt" stats -q -f json in/fixtures/gpu/ddp/ddp-$job-rank*.sqlite
	done
	mkdir -p files/gen
	for fmt in text markdown json; do
		run ranks "gen.$fmt" "$gpt" report -q -j 1 -f $fmt in/gen/*.sqlite
	done
	run ranks "gen.html" "$gpt" report -q -j 1 -f html -o files/gen/r.html in/gen/*.sqlite
	run ranks "gen.export" "$gpt" export -q -o files/gen/r.json in/gen/*.sqlite
	run ranks "gen.no-ranks" "$gpt" report -q -f json --no-ranks in/gen/*.sqlite
	# the collected summaries, read back
	run ranks "gen.summaries" "$gpt" report -q -f json in/gen/*.summary
	# usage and input errors, and help texts: each command's option parsing
	local i=0 line
	local t=in/fixtures/gpu/streams.sqlite b=in/fixtures/gpu/slow_kernel_base.sqlite
	local usages=(
		"" "--help" "bogus" "stats" "stats -h" "stats --bogus $t" "stats -f xml $t" "stats -w x $t"
		"stats -o /nonexistent/x $t" "stats in/missing.sqlite"
		"report" "report -h" "report --bogus $t" "report -f xml $t" "report -j 0 $t" "report --color x $t"
		"report -f html $t" "report -o /nonexistent/x $t" "report -r nosuchrule $t" "report -s x $t"
		"report --fail-on x $t" "report --fail-on warning in/fixtures/gpu/idle_gaps.sqlite"
		"report --step ( $t" "report --ranks -w 1:2 $t $b" "report -c /nonexistent $t"
		"export" "export -h" "export -f xml $t" "export --bogus $t" "export -o /nonexistent/x $t"
		"diff" "diff -h" "diff $t" "diff -t x $t $b" "diff -a 2 $t $b" "diff -m 0 $t $b" "diff --skip-first x $t $b"
		"diff -f xml $t $b" "diff -c /nonexistent $t $b" "diff --bogus $t $b" "diff $t $b $t"
		"diff -o /nonexistent/x $t $b" "diff --junit /nonexistent/x $t $b"
		"baseline" "baseline -h" "baseline save" "baseline save -h" "baseline save --points 1 $t"
		"baseline load $t" "baseline save $t $b"
		"check" "check -h" "check $t" "check -b /nonexistent $t" "check -b $t $t" "check -b x -t y $t"
		"rules" "rules -h" "rules --bogus" "rules -f" "rules -f xml" "rules nosuchrule"
		"stats -qx $t" "stats -f" "stats --format" "report --n $t" "report -h --bogus" "export -o"
		"export --bogus=1 $t" "summarize" "summarize -h" "summarize --bogus $t" "summarize -j 0 $t"
		"summarize -o" "import" "import -h" "import --bogus $t" "import -o" "baseline save -o"
		"run" "run -h" "run --bogus" "run -o" "run --api x true" "run -qx true"
		"run --capture-range-end stop true" "doctor -h" "doctor --bogus" "doctor foo" "doctor -o"
		"start -h" "start -x" "stop -h" "stop -x")
	for line in "${usages[@]}"; do
		# shellcheck disable=SC2086 # split on purpose
		run usage "$i" "$gpt" $line
		i=$((i + 1))
	done
}

setup
for side in base new; do
	rm -rf "$work/$side"
	mkdir -p "$work/$side"
	cp -a "$work/in" "$work/$side/in"
done
(cd "$work/base" && all "$base")
(cd "$work/new" && all "$new")

# Compare: each run is its stdout, stderr and status; each written file counts once more.
total=0
differ=0
declare -A runs same
while IFS= read -r f; do
	family=${f#out/}
	family=${family%%/*}
	runs[$family]=$((${runs[$family]:-0} + 1))
	total=$((total + 1))
	stem=${f%.rc}
	ok=1
	for ext in rc stdout stderr; do
		cmp -s "$work/base/$stem.$ext" "$work/new/$stem.$ext" || ok=0
	done
	if [ $ok = 1 ]; then
		same[$family]=$((${same[$family]:-0} + 1))
	else
		echo "differs: ${stem#out/}"
		differ=$((differ + 1))
	fi
done < <(cd "$work/base" && find out -name '*.rc' | sort)
files=0
while IFS= read -r f; do
	files=$((files + 1))
	if ! cmp -s "$work/base/$f" "$work/new/$f"; then
		echo "differs: $f"
		differ=$((differ + 1))
	fi
done < <(cd "$work/base" && find files in -type f | sort)
# a file only the new binary wrote
if ! diff -q <(cd "$work/base" && find files in out -type f | sort) \
	<(cd "$work/new" && find files in out -type f | sort) > /dev/null; then
	echo "differs: the two sides wrote different sets of files"
	differ=$((differ + 1))
fi
for family in $(printf '%s\n' "${!runs[@]}" | sort); do
	printf '%-9s %4d runs, %4d identical\n' "$family" "${runs[$family]}" "${same[$family]:-0}"
done
echo "files written (and inputs after the runs): $files compared"
if [ $differ = 0 ]; then
	echo "same-outputs: $total runs and $files files byte-identical ($work)"
	exit 0
fi
echo "same-outputs: $differ differ ($work)"
exit 1
