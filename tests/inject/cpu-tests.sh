#!/bin/sh
# The injected library in processes that cannot or do not use CUDA (the CI machine has the CUDA
# toolkit and CUPTI but no GPU and no driver). Each case compares with the untraced run where that
# makes sense and checks: exit status, output, exactly the lines the library may print, no trace
# file left behind. A process left untraced says why exactly once: under a session (gpt-trace run)
# only as a `!pid reason` line in the session file, which the launcher prints; without one, as one
# line on stderr. Exit 0 pass, 1 fail, 77 skip.
#
# Usage: cpu-tests.sh CASE LIBRARY BINDIR
set -u
case_name=$1
lib=$2
bindir=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/gpt-inject-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
mkdir session

fail() {
	echo "FAIL ($case_name): $*"
	for f in out err out.bare err.bare; do
		[ -f "$f" ] && { echo "--- $f"; cat "$f"; }
	done
	exit 1
}

# Run a command with the library injected the way `gpt-trace run` does.
traced() {
	env LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" \
		GPT_TRACE_SESSION="$work/session" "$@"
}

no_trace_files() {
	files=$(find "$work" -name '*.sqlite*')
	[ -z "$files" ] || fail "trace files left behind: $files"
}

case $case_name in
preload_true)
	LD_PRELOAD="$lib" /bin/true >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ -s out ] && fail "printed on stdout"
	[ -s err ] && fail "printed on stderr"
	traced /bin/true >out 2>err || fail "exit status $?"
	[ -s err ] && fail "printed on stderr"
	no_trace_files
	[ -e session/traces ] && fail "a session line for a process that never used CUDA"
	;;
preload_fork)
	traced timeout 60 "$bindir/fork_nocuda" >out 2>err
	rc=$?
	[ $rc -eq 124 ] && fail "hung (killed after 60 s)"
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ -s err ] && fail "printed on stderr"
	no_trace_files
	;;
preload_signal)
	sh -c 'kill -TERM $$' >out.bare 2>err.bare
	bare=$?
	traced sh -c 'kill -TERM $$' >out 2>err
	rc=$?
	[ $rc -eq $bare ] || fail "exit status $rc, untraced $bare"
	cmp -s err err.bare || fail "stderr differs from the untraced run"
	no_trace_files
	;;
nvtx_no_cuda)
	env NVTX_INJECTION64_PATH="$lib" "$bindir/nvtx_nocuda" >out 2>err || fail "exit status $?"
	[ "$(cat out)" = "nvtx ok" ] || fail "unexpected output"
	[ -s err ] && fail "printed on stderr"
	traced "$bindir/nvtx_nocuda" >out 2>err || fail "exit status $?"
	[ -s err ] && fail "printed on stderr"
	no_trace_files
	;;
no_driver)
	if [ -e /dev/nvidiactl ] || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
		echo "skipped: this machine has an NVIDIA driver"
		exit 77
	fi
	[ -x "$bindir/inject_hello" ] || { echo "skipped: no nvcc, tests/inject/hello.cu not built"; exit 77; }
	"$bindir/inject_hello" --launches 10 >out.bare 2>err.bare
	bare=$?
	traced "$bindir/inject_hello" --launches 10 >out 2>err
	rc=$?
	[ $rc -eq $bare ] || fail "exit status $rc, untraced $bare"
	cmp -s out out.bare || fail "stdout differs from the untraced run"
	cmp -s err err.bare || fail "printed on stderr under a session (the launcher prints the reason)"
	no_trace_files
	[ "$(wc -l <session/traces)" -eq 1 ] || fail "expected one session line"
	grep -q '^!.* no NVIDIA driver' session/traces || fail "unexpected session line"
	# Without a session the library says it, once.
	rm -f session/traces
	env LD_PRELOAD="$lib" "$bindir/inject_hello" --launches 10 >out 2>err
	[ "$(wc -l <err)" -eq 1 ] || fail "expected exactly one line on stderr without a session"
	grep -q '^gpt-trace: no NVIDIA driver or GPU on this machine' err || fail "unexpected message"
	[ -e session/traces ] && fail "a session line without a session"
	# The same program under GPT_TRACE_QUIET still says why it is untraced (an error).
	env GPT_TRACE_QUIET=1 LD_PRELOAD="$lib" "$bindir/inject_hello" >out 2>err
	[ "$(wc -l <err)" -eq 1 ] || fail "expected exactly one line on stderr with GPT_TRACE_QUIET"
	;;
cuda_init_fails)
	# The driver's entry point, called where CUDA cannot work: one line, the program goes on.
	traced "$bindir/call_injection" "$lib" >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	printf 'InitializeInjection returned 1\nagain 1\n' | cmp -s - out || fail "unexpected output"
	[ -s err ] && fail "printed on stderr under a session (the launcher prints the reason)"
	no_trace_files
	[ "$(wc -l <session/traces)" -eq 1 ] || fail "expected one session line"
	grep -q '^![0-9]* ' session/traces || fail "no failure line in the session file"
	# Without a session: the same reason, once, on stderr.
	rm -f session/traces
	env LD_PRELOAD="$lib" CUDA_INJECTION64_PATH="$lib" "$bindir/call_injection" "$lib" >out 2>err
	[ $? -eq 0 ] || fail "exit status $? without a session"
	[ "$(wc -l <err)" -eq 1 ] || fail "expected exactly one line on stderr without a session"
	grep -q '^gpt-trace: ' err || fail "the line does not start with 'gpt-trace: '"
	[ -e session/traces ] && fail "a session line without a session"
	;;
metrics_replayed)
	# The stand-in CUPTI's counters work as the H200's did: two replayed launches whose kernel
	# records come without timestamps get one row each, timed with the profiler's duration; the
	# profiler's time around each is a PROFILER_OVERHEAD row on the launching thread, holding
	# its kernel (the replay runs inside it).
	fake=$bindir/libfake_cupti.so
	[ -f "$fake" ] || fail "$fake missing"
	traced env FAKE_CUPTI_COUNTERS=1 GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_METRICS=1 \
		GPT_TRACE_OUTPUT="$work/t.sqlite" "$bindir/fake_launch" "$lib" "$fake" >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	# The replay time is measured, so only its form is fixed.
	grep -qx 'gpt-trace: metrics: 2 launches of 1 kernels profiled (3 passes each), 0\.[0-9][0-9] s in kernel replay' err ||
		fail "unexpected stderr"
	[ "$(sqlite3 t.sqlite 'SELECT group_concat(correlationId || ":" || (end - start)) FROM
		(SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY correlationId)')" = "11:300000,12:300000" ] ||
		fail "kernel rows: $(sqlite3 t.sqlite 'SELECT correlationId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL')"
	[ "$(sqlite3 t.sqlite "SELECT count(*) FROM GPT_KERNEL_METRICS m JOIN CUPTI_ACTIVITY_KIND_KERNEL k
		USING (correlationId) WHERE m.source = 'counters' AND m.gldSectors = 16777216
		AND m.durationNs = k.end - k.start")" = 2 ] || fail "metrics rows do not join the kernel rows"
	sqlite3 t.sqlite "SELECT name || '=' || value FROM GPT_META WHERE name IN
		('replayed_kernel_rows_timed', 'untimed_records') ORDER BY name" | tr '\n' ' ' >meta
	[ "$(cat meta)" = "replayed_kernel_rows_timed=2 untimed_records=0 " ] || fail "GPT_META: $(cat meta)"
	[ "$(sqlite3 t.sqlite "SELECT count(*) FROM PROFILER_OVERHEAD o JOIN StringIds s ON s.id = o.nameId
		JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.start >= o.start AND k.end <= o.\"end\"
		WHERE s.value = 'gpt-trace: kernel replay for hardware counters (--metrics)'
		AND o.globalTid >> 24 = (SELECT value FROM GPT_META WHERE name = 'pid')
		AND o.globalTid & 16777215 > 0")" = 2 ] ||
		fail "PROFILER_OVERHEAD: $(sqlite3 t.sqlite 'SELECT * FROM PROFILER_OVERHEAD')"
	[ "$(sqlite3 t.sqlite "SELECT count(*) FROM StringIds WHERE value LIKE 'gpt-trace: SASS%'")" = 0 ] ||
		fail "the SASS name without SASS rows"
	;;
metrics_off | metrics_on | metrics_bad_spec)
	# The library over a stand-in CUPTI whose counters need root (fake_cupti.c): two launches.
	fake=$bindir/libfake_cupti.so
	[ -f "$fake" ] || fail "$fake missing"
	case $case_name in
	metrics_off) spec= ;;
	metrics_on) spec=all ;;
	metrics_bad_spec) spec=first=0 ;;
	esac
	traced env GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_METRICS="$spec" \
		GPT_TRACE_OUTPUT="$work/t.sqlite" "$bindir/fake_launch" "$lib" "$fake" >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ "$(grep -v "^+" session/traces)" = "$work/t.sqlite" ] || fail "session file: $(cat session/traces)"
	grep -qx "+[0-9]* $work/t.sqlite" session/traces || fail "no trace-created line in the session file"
	[ "$(sqlite3 t.sqlite 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')" = 2 ] ||
		fail "expected 2 kernel rows"
	metrics_table=$(sqlite3 t.sqlite "SELECT count(*) FROM sqlite_master WHERE name = 'GPT_KERNEL_METRICS'")
	if [ "$case_name" = metrics_on ]; then
		# Every launch entry point (8 runtime, 6 driver) and module loads, for the session,
		# besides the 14 synchronizing calls that give the synchronization records.
		printf 'api callbacks 28\nmodule callback 1\n' | cmp -s - out ||
			fail "callbacks enabled: $(cat out)"
		# Under a session: the problem and the replay summary, nothing else.
		[ "$(wc -l <err)" -eq 2 ] || fail "expected two lines on stderr"
		head -n 1 err | grep -q '^gpt-trace: no hardware counters on device 0: cuptiProfilerInitialize failed: access to the GPU performance counters is restricted to administrators .*NVreg_RestrictProfilingToAdminUsers=0.* \[CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\]; the program continues without them$' ||
			fail "unexpected problem line"
		tail -n 1 err | grep -q '^gpt-trace: metrics: 0 launches of 0 kernels profiled, 0.00 s in kernel replay (no hardware counters' ||
			fail "unexpected summary line"
		[ "$metrics_table" = 1 ] || fail "no GPT_KERNEL_METRICS table"
		[ "$(sqlite3 t.sqlite 'SELECT count(*) FROM GPT_KERNEL_METRICS')" = 0 ] ||
			fail "metrics rows without counters"
		sqlite3 t.sqlite "SELECT name || '=' || value FROM GPT_META WHERE name LIKE 'metrics%' ORDER BY name" >meta
		grep -q '^metrics_problem=no hardware counters on device 0' meta || fail "no metrics_problem"
		grep -q '^metrics_spec=all$' meta || fail "no metrics_spec"
		grep -q '^metrics_summary=metrics: 0 launches' meta || fail "no metrics_summary"
		# Quiet: the problem still, the summary not.
		rm -f t.sqlite session/traces
		traced env GPT_TRACE_QUIET=1 GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_METRICS=all \
			GPT_TRACE_OUTPUT="$work/t.sqlite" "$bindir/fake_launch" "$lib" "$fake" >out 2>err
		[ "$(wc -l <err)" -eq 1 ] || fail "expected one line on stderr with GPT_TRACE_QUIET"
		grep -q 'no hardware counters' err || fail "unexpected line with GPT_TRACE_QUIET"
	else
		# Metrics off, or a bad spec: no launch callback at all (only the 14 synchronizing
		# calls), no metrics table.
		printf 'api callbacks 14\nmodule callback 0\n' | cmp -s - out ||
			fail "callbacks enabled without metrics: $(cat out)"
		[ "$metrics_table" = 0 ] || fail "a GPT_KERNEL_METRICS table without metrics"
		if [ "$case_name" = metrics_off ]; then
			[ -s err ] && fail "printed on stderr"
		else
			[ "$(cat err)" = "gpt-trace: GPT_TRACE_METRICS: first=0: expected a positive count of launches" ] ||
				fail "unexpected line for a bad spec"
		fi
	fi
	;;
death_*)
	# A death that atexit never sees, over the stand-in CUPTI: the trace is finished anyway
	# (every kernel, exit_reason says how), the status is the untraced one, the file opens
	# read-only with no journal beside it.
	mode=${case_name#death_}
	fake=$bindir/libfake_cupti.so
	case $mode in
	segv | stack | handler) want=139 reason='signal 11' ;;
	abort) want=134 reason='signal 6' ;;
	fpe) want=136 reason='signal 8' ;;
	_exit) want=3 reason='_exit(3)' ;;
	handler_exit) want=7 reason='_exit(7)' ;;
	quick_exit) want=4 reason='exit' ;;
	esac
	traced env GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_OUTPUT="$work/t.sqlite" \
		sh -c 'ulimit -c 0; exec "$@"' sh "$bindir/fake_launch" "$lib" "$fake" "$mode" 100 >out 2>err
	rc=$?
	[ $rc -eq $want ] || fail "exit status $rc, untraced $want"
	case $mode in handler) expect_out='launched 100\nhandler ran\n' ;; *) expect_out='launched 100\n' ;; esac
	printf "$expect_out" | cmp -s - out || fail "unexpected stdout"
	# Only the shell's own line about the death ("Segmentation fault") may be there.
	grep -q gpt-trace err && fail "the library printed on stderr"
	ls t.sqlite-* >/dev/null 2>&1 && fail "a journal left beside the trace"
	[ "$(sqlite3 -readonly t.sqlite 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')" = 100 ] ||
		fail "expected 100 kernel rows"
	[ "$(sqlite3 -readonly t.sqlite "SELECT value FROM GPT_META WHERE name = 'exit_reason'")" = "$reason" ] ||
		fail "exit_reason: $(sqlite3 -readonly t.sqlite "SELECT value FROM GPT_META WHERE name = 'exit_reason'")"
	[ "$(sqlite3 -readonly t.sqlite "SELECT value FROM GPT_META WHERE name = 'trace_complete'")" = 1 ] ||
		fail "trace_complete is not 1"
	grep -qx "$work/t.sqlite" session/traces || fail "the trace is not listed as finished"
	;;
memory)
	# GPU memory records (CUPTI_ACTIVITY_KIND_MEMORY2, on by default): with FAKE_CUPTI_MEMORY=1 the stand-in CUPTI allocates
	# and frees 1 MB of device memory per launch; they land in CUDA_GPU_MEMORY_USAGE_EVENTS with nsys's
	# enums (memKind 2 device, memoryOperationType 0/1), and GPT_TRACE_KINDS without "memory" keeps
	# them out.
	fake=$bindir/libfake_cupti.so
	traced env FAKE_CUPTI_MEMORY=1 GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_OUTPUT="$work/t.sqlite" \
		"$bindir/fake_launch" "$lib" "$fake" >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	rows=$(sqlite3 -readonly t.sqlite "SELECT count(*) || ' ' || group_concat(DISTINCT memKind) || ' ' ||
		sum(memoryOperationType) || ' ' || min(bytes) || ' ' || (SELECT value FROM GPT_META WHERE
		name = 'memory_records') FROM CUDA_GPU_MEMORY_USAGE_EVENTS")
	launches=$(sqlite3 -readonly t.sqlite "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
	[ "$rows" = "$((2 * launches)) 2 $launches 1048576 $((2 * launches))" ] ||
		fail "memory rows: $rows for $launches launches"
	traced env FAKE_CUPTI_MEMORY=1 GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_OUTPUT="$work/n.sqlite" \
		GPT_TRACE_KINDS=memcpy,memset,device,context,stream "$bindir/fake_launch" "$lib" "$fake" >out 2>err
	[ "$(sqlite3 -readonly n.sqlite "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS")" = 0 ] ||
		fail "memory rows without the memory kind"
	;;
rank)
	# A rank of a torchrun job: %r names the file, GPT_META says which rank of how many.
	fake=$bindir/libfake_cupti.so
	traced env GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_OUTPUT="$work/rank%r.sqlite" RANK=3 LOCAL_RANK=1 \
		WORLD_SIZE=4 TORCHELASTIC_RUN_ID=c0ffee "$bindir/fake_launch" "$lib" "$fake" >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ -f rank3.sqlite ] || fail "no rank3.sqlite: $(ls)"
	meta=$(sqlite3 -readonly rank3.sqlite "SELECT group_concat(name || '=' || value, ' ') FROM (SELECT name, value
		FROM GPT_META WHERE name IN ('rank', 'local_rank', 'world_size', 'rank_launcher', 'job_id') ORDER BY name)")
	[ "$meta" = "job_id=torchrun:c0ffee local_rank=1 rank=3 rank_launcher=torchrun world_size=4" ] ||
		fail "GPT_META: $meta"
	;;
gpu_metrics)
	# GPU metrics sampling over the stand-in CUPTI's PM sampler (FAKE_CUPTI_PM=1): at 1 Hz its
	# 64-sample image fills and is started again several times; every sample is written once, as
	# one GPT_GPU_METRICS row and one GPU_METRICS row per metric, described per device.
	fake=$bindir/libfake_cupti.so
	traced env FAKE_CUPTI_PM=1 GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_GPU_METRICS=1hz \
		FAKE_BATCH_MS=150 GPT_TRACE_OUTPUT="$work/t.sqlite" \
		"$bindir/fake_launch" "$lib" "$fake" exit 3000 >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	# (the stand-in's image fills at every decode: the line says the decoding fell behind)
	grep -qx 'gpt-trace: gpu metrics: [0-9]* samples of 1 device every 1000000 us, 22 metrics (GH100); the decoding fell behind [0-9]* times (the counter data image filled): samples are missing there; a longer interval (--gpu-metrics=1khz) avoids it' err ||
		fail "no summary line: $(cat err)"
	# what CUPTI 13.0 did not survive on the H200 is never called by default
	! grep 'fake-cupti:' err || fail "a host object deinitialized, or a sampler stopped or disabled"
	n=$(sqlite3 -readonly t.sqlite 'SELECT count(*) FROM GPT_GPU_METRICS')
	[ "$n" -gt 64 ] || fail "only $n samples: the image was not started again"
	# nsys's GH100 set on a GH100 without an NVLink peer: its 14 rows (the clocks, GR, SMs, SM
	# issue, tensor, 4 kinds of warps, DRAM read and write, PCIe RX and TX) and our HMMA
	[ "$(sqlite3 -readonly t.sqlite 'SELECT count(*) FROM GPU_METRICS')" = $((n * 15)) ] ||
		fail "GPU_METRICS rows are not 15 per sample: $(sqlite3 -readonly t.sqlite 'SELECT count(*) FROM GPU_METRICS')"
	[ "$(sqlite3 -readonly t.sqlite "SELECT count(*) FROM TARGET_INFO_GPU_METRICS WHERE metricName IN
		('SM Issue [Throughput %]', 'GR Active [Throughput %]', 'Compute Warps in Flight [Throughput %]',
		 'Unallocated Warps in Active SMs [Throughput %]', 'GPC Clock Frequency [MHz]',
		 'SYS Clock Frequency [MHz]')")" = 6 ] || fail "nsys's metric names"
	[ "$(sqlite3 -readonly t.sqlite 'SELECT count(*) FROM GPT_GPU_METRICS WHERE pcieReadBytes > 0
		AND pcieWriteBytes > 0 AND nvlinkRxBytes IS NULL')" = "$n" ] || fail "PCIe bytes not in every sample"
	sqlite3 -readonly t.sqlite "SELECT value FROM GPT_META WHERE name = 'gpu_metrics_decode_cpu_ms'" |
		grep -qx '[0-9]*\.[0-9]' || fail "no gpu_metrics_decode_cpu_ms"
	# a chip that refuses the PCIe metrics samples the seven without them
	traced env FAKE_CUPTI_PM=1 FAKE_CUPTI_REFUSE=pcie GPT_TRACE_CUPTI_LIB="$fake" \
		GPT_TRACE_GPU_METRICS=1hz GPT_TRACE_GPU_METRICS_DEBUG=1 GPT_TRACE_OUTPUT="$work/p.sqlite" \
		"$bindir/fake_launch" "$lib" "$fake" exit 1500 >out 2>err
	grep -q 'set nsys, 22 metrics: refused' err && grep -q 'set pcie, 11 metrics: refused' err &&
		grep -q 'set tensor, 7 metrics: configured' err &&
		grep -q 'samples of 1 device every 1000000 us, 7 metrics (GH100)' err ||
		fail "PCIe refused: $(cat err)"
	[ "$(sqlite3 -readonly p.sqlite 'SELECT count(*) FROM GPT_GPU_METRICS WHERE pcieReadBytes IS NOT NULL')" = 0 ] ||
		fail "PCIe bytes from a refused set"
	# at 10 kHz, nsys's SM Issue beside the PCIe set: one thread cannot evaluate the 22 every 100 us
	traced env FAKE_CUPTI_PM=1 GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_GPU_METRICS=10khz \
		GPT_TRACE_GPU_METRICS_DEBUG=1 GPT_TRACE_OUTPUT="$work/i.sqlite" \
		"$bindir/fake_launch" "$lib" "$fake" exit 1500 >out 2>err
	grep -q 'set issue, 12 metrics: configured' err && ! grep -q 'set nsys' err || fail "10 kHz: $(cat err)"
	# GPT_TRACE_GPU_METRICS_SET names the set to try first
	traced env FAKE_CUPTI_PM=1 GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_GPU_METRICS=1hz GPT_TRACE_GPU_METRICS_SET=pcie \
		GPT_TRACE_GPU_METRICS_DEBUG=1 GPT_TRACE_OUTPUT="$work/s.sqlite" \
		"$bindir/fake_launch" "$lib" "$fake" exit 1500 >out 2>err
	grep -q 'set pcie, 11 metrics: configured' err && ! grep -q 'set nsys' err || fail "SET=pcie: $(cat err)"
	# a GPU with an NVLink peer samples NVLink bytes too; without one they are never asked for
	# (a single H200 refuses them, above: the first set had 11)
	traced env FAKE_CUPTI_PM=1 FAKE_NVLINK=1 GPT_TRACE_CUPTI_LIB="$fake" \
		GPT_TRACE_GPU_METRICS=1hz GPT_TRACE_GPU_METRICS_DEBUG=1 GPT_TRACE_OUTPUT="$work/n.sqlite" \
		"$bindir/fake_launch" "$lib" "$fake" exit 1500 >out 2>err
	grep -q 'set nvlink, 13 metrics: configured' err && ! grep -q 'set nsys' err || fail "NVLink: $(cat err)"
	[ "$(sqlite3 -readonly n.sqlite 'SELECT count(*) FROM GPT_GPU_METRICS WHERE nvlinkRxBytes IS NULL
		OR nvlinkTxBytes IS NULL')" = 0 ] || fail "NVLink bytes missing"
	# the other end, kept for re-checking a later CUPTI, does stop and disable
	traced env FAKE_CUPTI_PM=1 GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_GPU_METRICS=1hz \
		GPT_TRACE_GPU_METRICS_STOP=release GPT_TRACE_OUTPUT="$work/r.sqlite" \
		"$bindir/fake_launch" "$lib" "$fake" exit 1500 >out 2>err
	[ "$(grep -c 'fake-cupti: cuptiPmSampling\(Stop\|Disable\)' err)" = 2 ] ||
		fail "GPT_TRACE_GPU_METRICS_STOP=release: $(grep fake-cupti err | paste -sd' ')"
	[ "$(sqlite3 -readonly t.sqlite 'SELECT count(DISTINCT start) FROM GPT_GPU_METRICS')" = "$n" ] ||
		fail "a sample was written twice"
	[ "$(sqlite3 -readonly t.sqlite "SELECT count(*) FROM TARGET_INFO_GPU_METRICS WHERE typeId & 255 = 0
		AND metricName = 'SMs Active [Throughput %]'")" = 1 ] || fail "TARGET_INFO_GPU_METRICS"
	[ "$(sqlite3 -readonly t.sqlite "SELECT value FROM GPT_META WHERE name = 'gpu_metric_samples'")" = "$n" ] ||
		fail "gpu_metric_samples"
	;;
gpu_metrics_hang)
	# A last decode that never returns (NVPW's AcknowledgeRecordBuffer spun at exit in 10 of 26
	# launch loops on the H200, 2026-11-27): the exit waits for it a bounded time, says so, and the
	# trace is finished with the samples decoded before. A hang is told by `timeout 30` (status
	# 124), not by the wall time, which a loaded machine stretches: the exit's own bound is 1 s
	# (GPU_METRICS_DESTROY_WAIT_MS), and the line below says the bound was what ended the wait.
	fake=$bindir/libfake_cupti.so
	traced env FAKE_CUPTI_PM=hang GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_GPU_METRICS=1hz \
		FAKE_BATCH_MS=100 GPT_TRACE_OUTPUT="$work/t.sqlite" timeout 30 \
		"$bindir/fake_launch" "$lib" "$fake" exit 2000 >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc (124: it hung)"
	grep -q 'gpu metrics: the last samples were still being decoded at the end' err ||
		fail "no line about the last samples: $(cat err)"
	[ "$(sqlite3 -readonly t.sqlite "SELECT value FROM GPT_META WHERE name = 'trace_complete'")" = 1 ] ||
		fail "trace not complete"
	[ "$(sqlite3 -readonly t.sqlite 'SELECT count(*) FROM GPT_GPU_METRICS')" -gt 0 ] ||
		fail "the samples decoded during the run are missing"
	# the thread still runs: its CPU time is not read, nor written
	[ -z "$(sqlite3 -readonly t.sqlite "SELECT value FROM GPT_META WHERE name = 'gpu_metrics_decode_cpu_ms'")" ] ||
		fail "gpu_metrics_decode_cpu_ms of a thread the exit gave up on"
	[ "$(sqlite3 -readonly t.sqlite 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')" = 2000 ] ||
		fail "kernels missing"
	;;
gpu_metrics_slow_exit)
	# A last decode longer than the exit waits (200 ms a sample once the program exits: on the
	# H200, 22 metrics at 10 kHz left the thread seconds behind, and the exit that went on while
	# it decoded crashed 1 launch loop in 6): the decoding stops short of the exit's deadline, the
	# thread is joined, the end line counts what it left, and the program exits as it would.
	fake=$bindir/libfake_cupti.so
	traced env FAKE_CUPTI_PM=slow GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_GPU_METRICS=1hz \
		FAKE_BATCH_MS=100 GPT_TRACE_OUTPUT="$work/t.sqlite" timeout 30 \
		"$bindir/fake_launch" "$lib" "$fake" exit 2000 >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc (124: it hung)"
	grep -q 'the last [0-9]* were not decoded before the exit.s deadline and are not written' err ||
		fail "no count of the samples left: $(cat err)"
	! grep -q 'still being decoded' err || fail "the exit gave up on the thread: $(cat err)"
	[ -n "$(sqlite3 -readonly t.sqlite "SELECT value FROM GPT_META WHERE name = 'gpu_metrics_decode_cpu_ms'")" ] ||
		fail "the thread was not joined"
	[ "$(sqlite3 -readonly t.sqlite "SELECT value FROM GPT_META WHERE name = 'trace_complete'")" = 1 ] ||
		fail "trace not complete"
	;;
gpu_metrics_valgrind)
	# The same under valgrind: the stand-in's host object reads the counter availability image
	# after its initialisation, as CUPTI's does, so freeing it early (the first version did, and
	# every traced program aborted at exit on the H100) is an invalid read here.
	command -v valgrind >/dev/null || { echo "skip: no valgrind"; exit 77; }
	fake=$bindir/libfake_cupti.so
	traced env FAKE_CUPTI_PM=1 GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_GPU_METRICS=1hz \
		FAKE_BATCH_MS=100 GPT_TRACE_OUTPUT="$work/t.sqlite" valgrind -q --error-exitcode=9 \
		"$bindir/fake_launch" "$lib" "$fake" exit 2000 >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc (9: valgrind found an error)"
	;;
gpu_metrics_refused)
	# Counters restricted to administrators: one line, and the trace goes on without metrics.
	fake=$bindir/libfake_cupti.so
	traced env GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_GPU_METRICS=on GPT_TRACE_OUTPUT="$work/t.sqlite" \
		"$bindir/fake_launch" "$lib" "$fake" >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ "$(wc -l <err)" -eq 1 ] || fail "expected exactly one line"
	grep -q '^gpt-trace: no GPU metrics on device 0: .* failed: access to the GPU performance counters is restricted to administrators' err ||
		fail "expected a line saying the counters are restricted"
	[ "$(sqlite3 -readonly t.sqlite 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')" = 2 ] ||
		fail "the kernels are missing"
	[ "$(sqlite3 -readonly t.sqlite 'SELECT count(*) FROM GPU_METRICS')" = 0 ] || fail "GPU_METRICS rows"
	;;
subscribe)
	# The program's own profiler subscribes to CUPTI while the library holds it: its call
	# succeeds, one line says so, the trace keeps the kernels before and notes when it stopped.
	fake=$bindir/libfake_cupti.so
	traced env GPT_TRACE_CUPTI_LIB="$fake" GPT_TRACE_OUTPUT="$work/t.sqlite" \
		"$bindir/fake_launch" "$lib" "$fake" subscribe 30 >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	printf 'launched 30\nprogram subscribe 0\n' | cmp -s - out || fail "the program's subscription failed"
	[ "$(wc -l <err)" -eq 1 ] || fail "expected one line on stderr"
	grep -q "^gpt-trace: the program's own profiler took CUPTI (cuptiSubscribe from fake_launch): CUDA activity is not recorded after [0-9.]* s$" err ||
		fail "unexpected line"
	[ "$(sqlite3 -readonly t.sqlite 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')" = 30 ] ||
		fail "expected the 30 kernels launched before the subscription"
	[ "$(sqlite3 -readonly t.sqlite "SELECT count(*) FROM GPT_META WHERE name = 'cupti_yielded_at_ns' AND value + 0 > 0")" = 1 ] ||
		fail "no cupti_yielded_at_ns"
	sqlite3 -readonly t.sqlite "SELECT value FROM GPT_META WHERE name = 'cupti_yielded_to'" |
		grep -q '^cuptiSubscribe (.*fake_launch)$' || fail "cupti_yielded_to"
	;;
*)
	fail "unknown case"
	;;
esac
echo "PASS ($case_name)"
exit 0
