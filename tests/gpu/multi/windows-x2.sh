#!/bin/bash
# Capture windows on a 2-rank torchrun job (issue 25), one call on a 2-GPU machine, from the
# repository root with the binaries in .dev/bin. The job: tests/gpu/multi/mlp_ddp.py with step
# ranges ProfilerStep#N and rank 1 sleeping 20 ms in every third step (the straggler).
#   ondemand  gpt-trace run --start-later; `gpt-trace start all --duration 0.4` once both ranks
#             are armed: each rank opens its window at its own next tick, so the two windows
#             start at different steps (what the cross-rank report must line up by step number)
#   steps     gpt-trace run --steps 40-55: both ranks record steps 40 to 55
# Checks: exit status and rank 0's output line as untraced; each trace has one window and kernels;
# the cross-rank report of each pair. usage: [ONLY=ondemand] windows-x2.sh OUT (OUT/x2w.txt, OUT/x2w.tar.gz)
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PYTHONUNBUFFERED=1
OUT=${1:-/tmp/x2w}; mkdir -p "$OUT"; B=$PWD/.dev/bin; W=/tmp/x2w; rm -rf $W; mkdir -p $W/od $W/st
L=$OUT/x2w.txt; : >"$L"
export GPT_TRACE_CONTROL_DIR=$W/ctl
job=(torchrun --standalone --nproc-per-node 2 tests/gpu/multi/mlp_ddp.py --warmup 20 --named-steps --slow-rank 1)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' ' >>"$L"; echo >>"$L"
[ "${ONLY:-}" = ondemand ] || { timeout 120 "${job[@]}" --steps 800 >$W/bare.out 2>&1; echo "bare rc=$? $(grep -h 'mlp_ddp: ok' $W/bare.out)" >>"$L"; }
timeout 150 $B/gpt-trace run --start-later -o "$W/od/rank%r.sqlite" -- "${job[@]}" --steps 800 \
	--ready-file $W/ready >$W/od.out 2>&1 &
pid=$!
# Both ranks past their warm-up (torchrun's own process, which asks CUDA for the device count, is
# armed too; the model's initialisation on one CPU thread takes seconds), then the start.
for _ in $(seq 600); do [ -e $W/ready.0 ] && [ -e $W/ready.1 ] && break; sleep 0.1; done
sleep 0.5
$B/gpt-trace start all --duration 0.3 >>"$L" 2>&1
wait $pid; echo "ondemand rc=$? $(grep -h 'mlp_ddp: ok' $W/od.out)" >>"$L"; grep gpt-trace $W/od.out >>"$L"
[ "${ONLY:-}" = ondemand ] || timeout 120 $B/gpt-trace run --steps 40-55 -o "$W/st/rank%r.sqlite" -- "${job[@]}" --steps 60 >$W/st.out 2>&1
echo "steps rc=$? $(grep -h 'mlp_ddp: ok' $W/st.out)" >>"$L"; grep gpt-trace $W/st.out >>"$L"
for d in od st; do
	[ -e $W/$d/rank0.sqlite ] || continue
	for f in $W/$d/*.sqlite; do
		python3 - "$f" >>"$L" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); q = lambda s: db.execute(s).fetchall()
steps = sorted(int(t.split('#')[1]) for (t,) in q("select coalesce(n.text, s.value) from NVTX_EVENTS n left join StringIds s on s.id = n.textId") if t and t.startswith('ProfilerStep#'))
print(sys.argv[1], "windows", q("select openedBy, closedBy, (\"end\" - start) / 1000000 from GPT_CAPTURE_WINDOWS"),
      "kernels", q("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL")[0][0], "steps", steps[:1], steps[-1:], len(steps))
PY
	done
	$B/gpt-trace report $W/$d/*.sqlite >$W/$d.report.txt 2>&1; echo "report $d rc=$?" >>"$L"
	sed -n 1,45p $W/$d.report.txt >>"$L"
done
tar -C $W -czf "$OUT/x2w.tar.gz" od st od.report.txt od.out $(cd $W && ls st.report.txt bare.out st.out 2>/dev/null)
ls -la "$OUT" >>"$L"; cat "$L"
