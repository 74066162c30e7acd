#!/bin/sh
# The injected library in processes that cannot or do not use CUDA (the CI machine has the CUDA
# toolkit and CUPTI but no GPU and no driver). Each case compares with the untraced run where that
# makes sense and checks: exit status, output, exactly the lines the library may print, no trace
# file left behind. Exit 0 pass, 1 fail, 77 skip.
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
	[ "$(wc -l <err)" -eq 1 ] || fail "expected exactly one line on stderr"
	grep -q '^gpt-trace: no NVIDIA driver or GPU on this machine' err || fail "unexpected message"
	no_trace_files
	[ "$(wc -l <session/traces)" -eq 1 ] || fail "expected one session line"
	grep -q '^!.* no NVIDIA driver' session/traces || fail "unexpected session line"
	# The same program under GPT_TRACE_QUIET still says why it is untraced (an error).
	rm -f session/traces
	env GPT_TRACE_QUIET=1 LD_PRELOAD="$lib" "$bindir/inject_hello" >out 2>err
	[ "$(wc -l <err)" -eq 1 ] || fail "expected exactly one line on stderr with GPT_TRACE_QUIET"
	;;
cuda_init_fails)
	# The driver's entry point, called where CUDA cannot work: one line, the program goes on.
	traced "$bindir/call_injection" "$lib" >out 2>err
	rc=$?
	[ $rc -eq 0 ] || fail "exit status $rc"
	printf 'InitializeInjection returned 1\nagain 1\n' | cmp -s - out || fail "unexpected output"
	[ "$(wc -l <err)" -eq 1 ] || fail "expected exactly one line on stderr"
	grep -q '^gpt-trace: ' err || fail "the line does not start with 'gpt-trace: '"
	no_trace_files
	grep -q '^!' session/traces || fail "no failure line in the session file"
	;;
*)
	fail "unknown case"
	;;
esac
echo "PASS ($case_name)"
exit 0
