#!/usr/bin/env bash
# Device batch of the GPU-memory work (issue 24): the memory pairs untraced (twice, alternating) and
# traced, and the cost of the memory records. usage: memory-batch.sh DIR OUT, where DIR holds
# bin/gpt-trace, bin/libgpt_inject.so, bin/steady_malloc and the pairs' .py files; writes
# OUT/mem.tgz (traces, logs, pairs.tsv, cost.txt).
#   empty_cache.py  torch.cuda.empty_cache() every step (bad) vs not (fixed)
#   leak.py         monitoring loss kept with its graph (bad) vs a detached clone (fixed)
# PAIRS='leak ...' runs only those pairs; NOCOST=1 leaves the cost runs out.
#   near_oom.py     memory filled to 92% of the device (bad) vs 50% (fixed)
# Cost: steady_malloc (one cudaMalloc + cudaFree a step) and empty_cache bad traced with the memory
# records on (default) and off (GPT_TRACE_KINDS without "memory"), alternating.
set -u
D=$(cd "${1:-.}" && pwd); OUT=${2:-/tmp/memout}; B=$D/bin; W=/tmp/mem
STEPS=${STEPS:-200}; TSTEPS=${TSTEPS:-40}
rm -rf "$W"; mkdir -p "$W" "$OUT"
nvidia-smi > "$W/nvidia-smi.txt" 2>&1
python3 -c 'import torch, sys; print(torch.__version__, torch.version.cuda, sys.version)' > "$W/versions.txt" 2>&1
tsv=$W/pairs.tsv
printf 'name\tvariant\tuntraced_result_line\ttraced_result_line\tuntraced_exit\ttraced_exit\treport_exit\n' > "$tsv"
line() { grep -a "^$1: ok " "$2" 2>/dev/null | tail -n 1 | tr -d '\t\r'; }
untraced() { # NAME VARIANT ARGS...
	local n=$1 v=$2; shift 2
	timeout -k 5 100 python3 "$D/$n.py" --steps "$STEPS" "$@" >> "$W/$n-$v.untraced.out" 2>&1
	echo $? >> "$W/$n-$v.untraced.rc"
}
traced() { # NAME VARIANT ARGS...
	local n=$1 v=$2; shift 2
	timeout -k 5 120 "$B/gpt-trace" run -f -o "$W/$n-$v.sqlite" -- python3 "$D/$n.py" --steps "$TSTEPS" "$@" \
		> "$W/$n-$v.traced.out" 2>&1
	echo $? > "$W/$n-$v.traced.rc"
}
for n in ${PAIRS:-empty_cache leak near_oom}; do
	for r in 1 2; do untraced $n bad; untraced $n fixed --fixed; done
	traced $n bad; traced $n fixed --fixed
	for v in bad fixed; do
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$v" "$(line $n "$W/$n-$v.untraced.out")" \
			"$(line $n "$W/$n-$v.traced.out")" "$(head -c 3 "$W/$n-$v.untraced.rc" | tr -d '\n')" \
			"$(cat "$W/$n-$v.traced.rc")" "-" >> "$tsv"
	done
done
if [ -n "${NOCOST:-}" ]; then	# the pairs only
	tar -C "$W" -czf "$OUT/mem.tgz" .
	exit 0
fi
# The cost of the memory records: same program traced with them and without, alternating.
NOMEM=memcpy,memcpy2,memset,synchronization,device,context,stream,runtime,driver
{
	for r in 1 2 3; do
		for k in on off; do
			if [ $k = on ]; then env -u GPT_TRACE_KINDS "$B/gpt-trace" run -f -o "$W/cost-malloc-$k.sqlite" -- "$B/steady_malloc" --steps 400
			else GPT_TRACE_KINDS=$NOMEM "$B/gpt-trace" run -f -o "$W/cost-malloc-$k.sqlite" -- "$B/steady_malloc" --steps 400; fi 2>&1 |
				grep -a "^steady_malloc: ok" | sed "s/^/malloc memory=$k run=$r /"
		done
	done
	"$B/steady_malloc" --steps 400 2>&1 | grep -a "^steady_malloc: ok" | sed "s/^/malloc untraced /"
	for r in 1 2; do
		for k in on off; do
			if [ $k = on ]; then env -u GPT_TRACE_KINDS "$B/gpt-trace" run -f -o "$W/cost-ec-$k.sqlite" -- python3 "$D/empty_cache.py" --steps "$STEPS"
			else GPT_TRACE_KINDS=$NOMEM "$B/gpt-trace" run -f -o "$W/cost-ec-$k.sqlite" -- python3 "$D/empty_cache.py" --steps "$STEPS"; fi 2>&1 |
				grep -a "^empty_cache: ok" | sed "s/^/empty_cache memory=$k run=$r /"
		done
	done
	# PyTorch's other allocator back-ends on the bad loop: stream-ordered pools (pool rows), and
	# expandable segments (the fix the rule names for a full or fragmented cache).
	PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "$B/gpt-trace" run -f -o "$W/empty_cache-async.sqlite" -- \
		python3 "$D/empty_cache.py" --steps "$TSTEPS" 2>&1 | grep -a "^empty_cache: ok" | sed "s/^/async traced /"
	for r in 1 2; do
		PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 "$D/empty_cache.py" --steps "$STEPS" 2>&1 |
			grep -a "^empty_cache: ok" | sed "s/^/expandable untraced run=$r /"
	done
	python3 - "$W" <<'PY'
import glob, os, sqlite3, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.sqlite")):
    db = sqlite3.connect(f)
    q = lambda s: db.execute(s).fetchone()[0]
    try:
        print(os.path.basename(f), os.path.getsize(f),
              "memory_rows=%s" % q("select count(*) from CUDA_GPU_MEMORY_USAGE_EVENTS"),
              "pool_rows=%s" % q("select count(*) from CUDA_GPU_MEMORY_POOL_EVENTS"),
              "kinds=%s" % db.execute("select group_concat(memKind || ':' || memoryOperationType || ':' || n) from "
                                      "(select memKind, memoryOperationType, count(*) n from CUDA_GPU_MEMORY_USAGE_EVENTS "
                                      "group by 1, 2)").fetchone()[0],
              "dropped=%s" % q("select value from GPT_META where name = 'memory_records_dropped'"))
    except Exception as e:
        print(os.path.basename(f), "error", e)
PY
} > "$W/cost.txt" 2>&1
rm -f "$W"/cost-ec-*.sqlite
tar -C "$W" -czf "$OUT/mem.tgz" .
ls -la "$OUT"
