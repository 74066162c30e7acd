#!/usr/bin/env bash
# The cross-rank report on real ranks (issue 11): samples/ddp_straggler.py under torchrun on 2 GPUs
# of one host, traced by gpt-trace run, in four variants: rank 1 sleeps S ms before backward on every
# k-th step, with DDP's overlapped all-reduces and with exposed ones; and no slow rank, both ways.
# Checks on `gpt-trace report -f json` of the two rank traces:
#   - slow variants: the straggler is rank 1 on exactly the steps k-1, 2k-1, ... (the iterations the
#     report finds are the sample's "train_step" ranges), each with a delay within 20% of S, and the
#     straggler finding names rank 1;
#   - clean variants: no straggler on any iteration, no straggler finding;
#   - exposed variants: the exposed-communication finding is there, and the exposed transfers are
#     larger than in the overlapped variant.
# Prints PASS/FAIL per check and "N passed, M failed"; exits non-zero when a check failed, 2 when the
# machine cannot run it. Copies the traces to -F DIR as fixtures when asked.
#
# First run on 2 H100s on 2026-11-25 (session 7): the straggler was found on every slow step with
# delays of 50.2-51.9 ms against 50 ms slept; the checks were then loosened where a real run differs
# from the synthetic jobs (host jitter of 1-3 ms is a real, small straggler; the first steps are
# warm-up) and the report judges stragglers on the steady state only.
# Its checks are exercised in CI (ctest ranks.gpu-script) with -S: the same four variants made by
# tests/ranks/gen_ranks.py (NCCL's generic kernels, named by their NVTX ranges, as DDP's large
# buckets run) instead of torchrun, so only the run itself is unproven.
# NCCL_NVLS_ENABLE=0 and TORCH_SYMM_MEM_DISABLE_MULTICAST=1 keep NCCL and PyTorch off NVLink
# multicast, which the lent machines do not allow (KINDS.md).
#
# usage: tests/gpu/multirank.sh [-b BUILD] [-w WORKDIR] [-s SLEEP_MS] [-k EVERY] [-n STEPS] [-F DIR] [-S]
#   -b BUILD     build folder with bin/gpt-trace and bin/libgpt_inject.so (default: $BUILD, else build)
#   -w WORKDIR   traces and logs (default: a new folder under ${TMPDIR:-/tmp})
#   -s SLEEP_MS  the slow rank's sleep (default 50); -k EVERY its period in steps (default 5)
#   -n STEPS     steps per run (default 40)
#   -F DIR       copy the traces there (ddp-<variant>-rank<r>.sqlite) as fixtures
#   -S           synthetic: no GPU, no torchrun; the traces come from tests/ranks/gen_ranks.py
#   -R DIR       replay: no GPU, no torchrun; the traces a run copied to DIR with -F (the fixtures)
set -u -o pipefail

build=${BUILD:-build}
work=
sleep_ms=50
every=5
steps=40
fixtures=
synthetic=0
replay=
while getopts "b:w:s:k:n:F:SR:h" opt; do
	case $opt in
	b) build=$OPTARG ;;
	w) work=$OPTARG ;;
	s) sleep_ms=$OPTARG ;;
	k) every=$OPTARG ;;
	n) steps=$OPTARG ;;
	F) fixtures=$OPTARG ;;
	S) synthetic=1 ;;
	R) replay=$(cd "$OPTARG" && pwd) || exit 2 ;;
	*) sed -n '/^# usage:/,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
bin=$(cd "$build/bin" 2>/dev/null && pwd) || { echo "multirank.sh: no '$build/bin'" >&2; exit 2; }
gpt=$bin/gpt-trace
[ -e "$gpt" ] || { echo "multirank.sh: '$gpt' missing" >&2; exit 2; }
if [ "$synthetic" = 0 ] && [ -z "$replay" ]; then
	[ -e "$bin/libgpt_inject.so" ] || { echo "multirank.sh: '$bin/libgpt_inject.so' missing: build with CUPTI" >&2; exit 2; }
	command -v torchrun > /dev/null || { echo "multirank.sh: torchrun not found (PyTorch)" >&2; exit 2; }
	gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
	[ "$gpus" -ge 2 ] || { echo "multirank.sh: needs 2 GPUs, found $gpus" >&2; exit 2; }
fi
[ -n "$work" ] || work=$(mktemp -d "${TMPDIR:-/tmp}/gpt-trace-multirank.XXXXXX")
mkdir -p "$work" && cd "$work" || exit 2
passed=0
failed=0
check() {	# check NAME CONDITION-OUTPUT: PASS when the python check printed "ok"
	if [ "$2" = ok ]; then
		echo "PASS $1"
		passed=$((passed + 1))
	else
		echo "FAIL $1: $2"
		failed=$((failed + 1))
	fi
}

# The sample's four variants as synthetic traces (-S): what the checks below expect of a real run.
synthetic_run() {
	local variant=$1 slow=$2 args=(--world 2 --steps "$steps" --generic)
	[ "$slow" -ge 0 ] && args+=(--slow "$slow:$sleep_ms:$every")
	[ "${3:-}" = --exposed ] && args+=(--exposed)
	python3 "$src/tests/ranks/gen_ranks.py" "${args[@]}" "$variant" > /dev/null &&
		mv "$variant/rank-0.sqlite" "$variant/ddp-rank0.sqlite" &&
		mv "$variant/rank-1.sqlite" "$variant/ddp-rank1.sqlite" &&
		printf 'ddp_straggler: ok rank=0\nddp_straggler: ok rank=1\n' > "$variant.log"
}

# run VARIANT SLOW_RANK [--exposed]: the two rank traces in $work/VARIANT/, the report in VARIANT.json
run() {
	local variant=$1 slow=$2
	shift 2
	mkdir -p "$variant" && rm -f "$variant"/*
	if [ "$synthetic" = 1 ]; then
		synthetic_run "$variant" "$slow" "$@"
	elif [ -n "$replay" ]; then
		cp "$replay/ddp-$variant-rank0.sqlite" "$variant/ddp-rank0.sqlite" &&
			cp "$replay/ddp-$variant-rank1.sqlite" "$variant/ddp-rank1.sqlite" &&
			printf 'ddp_straggler: ok rank=0\nddp_straggler: ok rank=1\n' > "$variant.log"
	else
		NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
			"$gpt" run -q -o "$work/$variant/ddp-rank%r.sqlite" -- \
			torchrun --standalone --nproc-per-node 2 "$src/samples/ddp_straggler.py" --steps "$steps" \
			--slow-rank "$slow" --sleep-ms "$sleep_ms" --every "$every" "$@" > "$variant.log" 2>&1
	fi
	local rc=$?
	# (the two ranks' lines can share a line of the log: count the words, not the lines)
	check "$variant: the job ran" "$([ $rc -eq 0 ] && [ "$(grep -o 'ddp_straggler: ok' "$variant.log" | wc -l)" = 2 ] &&
		echo ok || tail -5 "$variant.log")"
	"$gpt" report -q -f json -o "$variant.json" "$variant"/ddp-rank0.sqlite "$variant"/ddp-rank1.sqlite 2> "$variant.err"
	check "$variant: report" "$([ -s "$variant.json" ] && echo ok || cat "$variant.err")"
	"$gpt" report -q "$variant"/ddp-rank*.sqlite > "$variant.txt" 2>&1
	if [ -n "$fixtures" ]; then
		mkdir -p "$fixtures"
		for r in 0 1; do cp "$variant/ddp-rank$r.sqlite" "$fixtures/ddp-$variant-rank$r.sqlite"; done
	fi
}

# slow VARIANT: rank 1 the straggler on every slow step, delays within 20%; on no other step of the
# steady state does a rank keep the others waiting a fifth of that (a real run's host jitter holds a
# step up by a millisecond or two, which the report lists at severity info)
slow_checks() {
	check "$1: straggler rank 1 on steps $((every - 1)), $((2 * every - 1)), ... within 20% of $sleep_ms ms" \
		"$(python3 - "$1.json" "$every" "$sleep_ms" "$steps" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
every, sleep_ns, steps = int(sys.argv[2]), float(sys.argv[3]) * 1e6, int(sys.argv[4])
want = [s for s in range(steps) if s % every == every - 1]
# (a warm-up step, the first's allocations and NCCL's set-up, may be held up too: only the slow
# steps count there)
got = [(i["index"], i["straggler_rank"], i["delay_ns"]) for i in d["iterations"]
       if i["straggler_rank"] >= 0 and i["delay_ns"] >= 0.2 * sleep_ns and (i["steady"] or i["index"] in want)]
bad = [g for g in got if g[1] != 1 or abs(g[2] - sleep_ns) > 0.2 * sleep_ns]
if [g[0] for g in got] != want or bad:
    print("want steps %s, got %s" % (want, got))
else:
    print("ok")
PY
)"
	check "$1: the straggler finding names rank 1" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [f for f in d["findings"] if f["rule"] == "straggler"]
print("ok" if f and f[0]["message"].startswith("rank 1 ") else "findings: %s" % [x["message"] for x in d["findings"]])' "$1.json")"
}

# clean VARIANT: in the steady state no rank keeps the others waiting a fifth of the sleep, and no
# straggler finding is worse than info (the first steps, allocations and NCCL's set-up, are warm-up)
clean_checks() {
	check "$1: no straggler" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sleep_ns = float(sys.argv[2]) * 1e6
got = [(i["index"], i["straggler_rank"], i["delay_ns"]) for i in d["iterations"]
       if i["steady"] and i["straggler_rank"] >= 0 and i["delay_ns"] >= 0.2 * sleep_ns]
f = [f["message"] for f in d["findings"] if f["rule"] == "straggler" and f["severity"] != "info"]
print("ok" if not got and not f else "stragglers %s, findings %s" % (got, f))' "$1.json" "$sleep_ms")"
}

exposed_ns() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(c["exposed_transfer_ns"] for c in d["communication"]))' "$1.json"
}

run slow-overlapped 1
run slow-exposed 1 --exposed
run clean-overlapped -1
run clean-exposed -1 --exposed
slow_checks slow-overlapped
slow_checks slow-exposed
clean_checks clean-overlapped
clean_checks clean-exposed
over=$(exposed_ns clean-overlapped)
expo=$(exposed_ns clean-exposed)
echo "info: exposed transfers per rank: overlapped $over ns, exposed $expo ns"
check "exposed: more exposed transfer time than overlapped" "$([ "$expo" -gt "$over" ] && echo ok || echo "$expo <= $over")"
check "exposed: the exposed-communication finding" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("ok" if any(f["rule"] == "exposed-communication" for f in d["findings"]) else [f["rule"] for f in d["findings"]])' clean-exposed.json)"
echo "$passed passed, $failed failed (work: $work)"
[ "$failed" -eq 0 ]
