#!/bin/bash
# GPU smoke test of libgpt_inject.so, run on the H200 device (not by ctest): both entry points
# record a small CUDA program; 200,000 back-to-back launches give 200,000 kernel rows and no
# dropped record, with the host time per launch bare and traced (3 runs each, alternating);
# bytes on disk per launch; NVTX; fork; SIGTERM; device reset; no visible device; all API calls;
# PyTorch, torchrun's child, a CUPTI slot already taken, and another tool's injection slot.
# Everything is written to $OUT/smoke.txt (one line or one JSON object per fact).
#
# Usage: [SECTIONS="0 1 3 ..."] gpu-smoke.sh BINDIR   (BINDIR holds libgpt_inject.so, inject_hello;
# SECTIONS picks the numbered sections to run, all by default)
set -u
bin=$(cd "$1" && pwd)
lib=$bin/libgpt_inject.so
hello=$bin/inject_hello
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/gpt-smoke}
mkdir -p "$out"
report=$out/smoke.txt
: >"$report"
work=$(mktemp -d)
cd "$work" || exit 1
mkdir session

say() { echo "$*" | tee -a "$report"; }
facts() { python3 "$here/trace_facts.py" "$@" >>"$report" 2>&1 || say "facts failed: $*"; }
oneline() { tr '\n' '|' <"$1" | cut -c1-600; }
# Inject the way `gpt-trace run` does; NAME=VALUE arguments go to env.
inject() {
	env LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" \
		GPT_TRACE_SESSION="$work/session" "$@"
}
median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
ns() { date +%s%N; }
want() { [ -z "${SECTIONS:-}" ] || [[ " $SECTIONS " == *" $1 "* ]]; }
# The host time per launch that hello prints for 200,000 launches, under the given environment.
per_launch() { env "$@" timeout 120 "$hello" --launches 200000 2>>e3 | awk '/ns_per_launch/ {print $4}'; }

if want 0; then
say "== 0 machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$report" 2>&1
uname -r >>"$report"
lscpu 2>/dev/null | grep -E '^(Model name|Thread|Core|Socket|CPU\(s\))' >>"$report"
cat /sys/devices/system/clocksource/clocksource0/current_clocksource >>"$report" 2>&1
"$hello" --clock-bench >>"$report" 2>&1
fi

if want 1; then
say "== 1 LD_PRELOAD only (the library names itself as the driver's injection)"
env LD_PRELOAD="$lib" GPT_TRACE_OUTPUT="$work/preload.sqlite" timeout 120 "$hello" --launches 100 \
	--copies --graph --nvtx >o 2>e
say "rc=$? out=$(oneline o) err=$(oneline e)"
facts preload.sqlite
cp preload.sqlite "$out/" 2>/dev/null
fi

if want 2; then
say "== 2 CUDA_INJECTION64_PATH only"
env CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" GPT_TRACE_OUTPUT="$work/injection.sqlite" \
	timeout 120 "$hello" --launches 100 --nvtx >o 2>e
say "rc=$? out=$(oneline o) err=$(oneline e)"
facts injection.sqlite

fi

if want 3; then
say "== 3 200000 launches: host ns per launch, 3 rounds of every variant, alternating"
variants="bare default cupti_clock none none_cupti_clock discard"
declare -A result
for i in 1 2 3; do
	for v in $variants; do
		case $v in
		bare) r=$(per_launch X=1) ;;
		default) r=$(per_launch LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" \
			GPT_TRACE_OUTPUT="$work/launch-$i.sqlite") ;;
		cupti_clock) r=$(per_launch LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" \
			GPT_TRACE_CLOCK=cupti GPT_TRACE_OUTPUT="$work/cupti-$i.sqlite") ;;
		none) r=$(per_launch LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" GPT_TRACE_API=none \
			GPT_TRACE_OUTPUT="$work/none-$i.sqlite") ;;
		none_cupti_clock) r=$(per_launch LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" \
			GPT_TRACE_API=none GPT_TRACE_CLOCK=cupti GPT_TRACE_OUTPUT="$work/nonec-$i.sqlite") ;;
		discard) r=$(per_launch LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" GPT_TRACE_API=none \
			GPT_TRACE_DISCARD=1 GPT_TRACE_OUTPUT="$work/discard-$i.sqlite") ;;
		esac
		result[$v]="${result[$v]:-} $r"
	done
done
for v in $variants; do
	say "$v ns/launch:${result[$v]} median $(median ${result[$v]})"
done
t0=$(ns); "$hello" --launches 200000 >/dev/null; t1=$(ns)
inject GPT_TRACE_OUTPUT="$work/wall.sqlite" "$hello" --launches 200000 >/dev/null 2>>e3; t2=$(ns)
say "process wall ms, bare $(((t1 - t0) / 1000000)), traced incl. writing the trace $(((t2 - t1) / 1000000))"
say "stderr: $(oneline e3)"
facts launch-3.sqlite --with-start-index
facts cupti-3.sqlite
facts none-3.sqlite
fi

if want 4; then
say "== 4 fork after CUDA init (child exits through exit())"
inject GPT_TRACE_OUTPUT="$work/fork-%p.sqlite" timeout 60 "$hello" --launches 10 --fork >o 2>e
say "rc=$? (124 = hung) out=$(oneline o) err=$(oneline e) files=$(ls fork-*.sqlite 2>/dev/null | wc -l)"
for f in fork-*.sqlite; do facts "$f"; done
fi

if want 5; then
say "== 5 SIGTERM while running (default action): trace finalized, status as untraced"
"$hello" --sleep-ms 6000 >/dev/null 2>&1 &
p=$!
sleep 3
kill -TERM $p
wait $p
say "bare rc=$?"
# A simple command in the background: $! is the program itself (env execs it).
env LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" GPT_TRACE_SESSION="$work/session" \
	GPT_TRACE_OUTPUT="$work/signal.sqlite" "$hello" --launches 1000 --sleep-ms 6000 >o 2>e &
p=$!
sleep 3
kill -TERM $p
wait $p
say "traced rc=$? err=$(oneline e)"
facts signal.sqlite
fi

if want 6; then
say "== 6 cudaDeviceReset before exit"
inject GPT_TRACE_OUTPUT="$work/reset.sqlite" timeout 60 "$hello" --launches 100 --reset >o 2>e
say "rc=$? err=$(oneline e)"
facts reset.sqlite
fi

if want 7; then
say "== 7 no visible device"
inject CUDA_VISIBLE_DEVICES= GPT_TRACE_OUTPUT="$work/nodev.sqlite" timeout 60 "$hello" --launches 10 >o 2>e
say "rc=$? out=$(oneline o) err=$(oneline e) files=$(ls nodev*.sqlite 2>/dev/null | wc -l)"
fi

if want 8; then
say "== 8 GPT_TRACE_API=all"
inject GPT_TRACE_API=all GPT_TRACE_OUTPUT="$work/all.sqlite" timeout 60 "$hello" --launches 100 --copies >o 2>e
say "rc=$? err=$(oneline e)"
facts all.sqlite
fi

if want 9; then
say "== 9 PyTorch"
inject GPT_TRACE_OUTPUT="$work/torch-%p.sqlite" timeout 180 python3 "$here/torch_small.py" >o 2>e
say "rc=$? out=$(oneline o) err=$(oneline e)"
for f in torch-*.sqlite; do facts "$f"; done
fi

if want 10; then
say "== 10 torchrun, one child"
inject GPT_TRACE_OUTPUT="$work/trun-%p.sqlite" timeout 180 python3 -m torch.distributed.run \
	--nproc-per-node 1 "$here/torch_small.py" >o 2>e
say "rc=$? out=$(oneline o) err=$(oneline e) files=$(ls trun-*.sqlite 2>/dev/null | wc -l)"
for f in trun-*.sqlite; do facts "$f"; done
fi

if want 11; then
say "== 11 CUPTI already subscribed by someone else"
inject GPT_TRACE_OUTPUT="$work/holder.sqlite" timeout 180 python3 "$here/holder.py" >o 2>e
say "rc=$? out=$(oneline o) err=$(oneline e) files=$(ls holder*.sqlite 2>/dev/null | wc -l)"
fi

if want 12; then
say "== 12 another tool's injection (compute-sanitizer)"
timeout 180 compute-sanitizer --print-limit 1 env LD_PRELOAD="$lib" GPT_TRACE_SESSION="$work/session" \
	GPT_TRACE_OUTPUT="$work/sanitizer.sqlite" "$hello" --launches 10 >o 2>e
say "rc=$? out=$(oneline o) err=$(oneline e) files=$(ls sanitizer*.sqlite 2>/dev/null | wc -l)"
fi

if want 13; then
say "== 13 SIGKILL: what was committed stays readable"
env LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" GPT_TRACE_OUTPUT="$work/killed.sqlite" \
	"$hello" --launches 100 --sleep-ms 6000 >o 2>e &
p=$!
sleep 3
kill -KILL $p
wait $p
say "rc=$? err=$(oneline e) leftover=$(ls killed.sqlite* 2>/dev/null | tr '\n' ' ')"
facts killed.sqlite
fi

if want 15; then
say "== 15 SIGTERM in the middle of a launch loop"
env LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" GPT_TRACE_OUTPUT="$work/loop.sqlite" \
	"$hello" --launches 5000000 >o 2>e &
p=$!
sleep 2
t0=$(ns)
kill -TERM $p
wait $p
rc=$?
say "rc=$rc ms from kill to exit: $((($(ns) - t0) / 1000000)) err=$(oneline e)"
facts loop.sqlite
fi

if want 14; then
say "== 14 output directory missing"
inject GPT_TRACE_OUTPUT="$work/missing/dir/t.sqlite" timeout 60 "$hello" --launches 10 >o 2>e
say "rc=$? out=$(oneline o) err=$(oneline e)"
fi

say "== session file"
cat session/traces >>"$report" 2>&1
say "== done"
