#!/usr/bin/env bash
# The cross-rank report at scale: N rank traces (default 1,024) of 10,000 kernels each (100 steps
# of 42 forward kernels, 4 backward buckets of 12 kernels each followed by an all-reduce, an
# all-gather, a reduce-scatter and 4 optimizer kernels), rank 700 late by 20 ms on every 10th step.
# Reports them twice: cold (every trace summarized, -j every core) and warm (the summaries reused),
# and checks that the straggler is found. Results: RESULTS.md.
#
# Traces are written by tests/ranks/gen_ranks.py for two ranks (0 and the slow one) and copied for
# the others with their GPT_META rank changed: a rank's summary costs the same whatever its jitter,
# and writing 1,024 traces from Python would take longer than the benchmark.
#
# usage: bench/multirank/run.sh [DIR]   (default /tmp/gpt-multirank-bench; about 1.1 GB for 1,024)
#        N=64 JOBS=2 GPT=build/bin/gpt-trace bench/multirank/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
dir=${1:-/tmp/gpt-multirank-bench}
n=${N:-1024}
slow=${SLOW:-$((n * 700 / 1024))}
gpt=${GPT:-$src/build/bin/gpt-trace}
jobs=${JOBS:-$(nproc)}

mkdir -p "$dir"
if [ ! -e "$dir/rank-$((n - 1)).sqlite" ]; then
	echo "writing $n rank traces to $dir"
	rm -f "$dir"/rank-*.sqlite*
	python3 "$src/tests/ranks/gen_ranks.py" --world "$n" --ranks "0,$slow" --steps 100 --fwd 42 --bwd 12 \
		--buckets 4 --slow "$slow:20:10" "$dir"
	for ((r = 1; r < n; r++)); do
		[ "$r" = "$slow" ] && continue
		cp "$dir/rank-0.sqlite" "$dir/rank-$r.sqlite"
		sqlite3 "$dir/rank-$r.sqlite" "UPDATE GPT_META SET value = '$r' WHERE name IN ('rank', 'local_rank');
			UPDATE GPT_META SET value = '$((4000 + r))' WHERE name = 'pid'"
	done
fi
kernels=$(sqlite3 "$dir/rank-0.sqlite" "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
echo "$n traces, $kernels kernels each, $(du -sh "$dir" | cut -f1)"
rm -f "$dir"/*.summary
for run in cold warm; do
	/usr/bin/time -f "$run: %e s wall, %U s user, %S s sys, %M KB max resident (the merge)" \
		"$gpt" report -q -j "$jobs" -f json -o "$dir/report.json" "$dir"/rank-*.sqlite
done
python3 - "$dir/report.json" "$slow" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
slow = int(sys.argv[2])
its = [(i["index"], i["straggler_rank"], i["delay_ns"]) for i in d["iterations"] if i["straggler_rank"] >= 0]
print("ranks %d, straggler iterations %s" % (len(d["ranks"]), [(i, r) for i, r, _ in its]))
print("delays %.3f-%.3f ms (injected 20 ms)" % (min(x[2] for x in its) / 1e6, max(x[2] for x in its) / 1e6))
assert all(r == slow for _, r, _ in its) and [i for i, _, _ in its] == list(range(9, 100, 10)), its
print("findings:", [f["message"] for f in d["findings"]])
PY
