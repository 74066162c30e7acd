#!/bin/sh
# Tests of `gpt-trace doctor` on a machine without a GPU: one case per invocation, `sh doctor.sh
# CASE`, registered with ctest by CMakeLists.txt, which also sets:
#   GPT_TRACE        the gpt-trace executable (of the build tree: its library is beside it)
#   FAKE_DRIVER_DIR  a folder holding the stand-in libcuda.so.1 (fake-libcuda.c)
#   FAKE_CUPTI       the stand-in CUPTI of tests/inject (empty in a build without CUDA)
#   WORK             a private scratch folder, emptied first
# The driver's /proc/driver/nvidia files are played from $WORK/proc (GPT_TRACE_NVIDIA_PROC).
# Each case checks the exit status and the lines that matter, normalized only for free space.
# Exit 0 pass, 1 fail, 77 skipped (with the reason printed).
set -u
case=${1:?usage: doctor.sh CASE}

fail() {
	echo "FAIL [$case]: $*" >&2
	[ -f out ] && { echo "--- stdout" >&2; cat out >&2; }
	[ -f err ] && [ -s err ] && { echo "--- stderr" >&2; cat err >&2; }
	exit 1
}
skip() {
	echo "SKIP [$case]: $*"
	exit 77
}
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: expected [$2], got [$3]"
}
expect_line() {
	grep -q -e "$1" out || fail "no line matching [$1]"
}
expect_no_line() {
	grep -q -e "$1" out && fail "a line matches [$1]"
	return 0
}
# doctor [ARGS...]: runs doctor, output in out and err, status in rc.
doctor() {
	"$GPT_TRACE" doctor "$@" >out 2>err
	rc=$?
}

rm -rf "$WORK" && mkdir -p "$WORK/proc" && cd "$WORK" || fail "cannot make $WORK"
WORK=$(pwd -P)
unset GPT_TRACE_INJECT_LIB GPT_TRACE_CUPTI_LIB CUDA_VISIBLE_DEVICES FAKE_CUDA_GPUS FAKE_CUDA_VERSION
export GPT_TRACE_NVIDIA_PROC="$WORK/proc"
echo "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Sep 23 09:43:21 UTC 2025" >proc/version
echo "RmProfilingAdminOnly: 0" >proc/params

real_driver() {
	[ -e /dev/nvidiactl ] || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'
}
# A machine that doctor would find ready: the stand-in driver and CUPTI.
fake_machine() {
	[ -n "$FAKE_CUPTI" ] || skip "no stand-in CUPTI in a build without CUDA"
	[ -e "$(dirname "$GPT_TRACE")/libgpt_inject.so" ] || skip "libgpt_inject.so is not built"
	export LD_LIBRARY_PATH="$FAKE_DRIVER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export GPT_TRACE_CUPTI_LIB="$FAKE_CUPTI"
}

case $case in
help)
	doctor --help
	expect_eq "exit status" 0 "$rc"
	[ -s err ] && fail "--help wrote to stderr"
	expect_line '^usage: gpt-trace doctor \[options\]$'
	expect_line '^  -o, --output PATH '
	expect_line '^      --metrics '
	expect_line '^exit status: 0 tracing will work here, 1 it will not'
	"$GPT_TRACE" --help | grep -q '^  doctor  *check that tracing will work here' ||
		fail "doctor is not in the command table"
	;;

usage)
	for args in --bogus extra '-o'; do
		# shellcheck disable=SC2086
		doctor $args
		expect_eq "exit status of 'doctor $args'" 2 "$rc"
		expect_eq "stderr lines of 'doctor $args'" 1 "$(wc -l <err)"
		[ -s out ] && fail "'doctor $args' wrote to stdout"
	done
	expect_eq "message for '-o'" "gpt-trace: doctor: option '-o' needs a value; see 'gpt-trace doctor --help'" "$(cat err)"
	doctor --bogus
	expect_eq "message for --bogus" "gpt-trace: doctor: unknown option '--bogus'; see 'gpt-trace doctor --help'" "$(cat err)"
	;;

no-driver)
	real_driver && skip "this machine has an NVIDIA driver"
	doctor
	expect_eq "exit status" 1 "$rc"
	[ -s err ] && fail "wrote to stderr"
	expect_line "^ok    launcher  $(realpath "$GPT_TRACE"), version "
	expect_line '^FAIL  driver    no NVIDIA driver: libcuda.so.1: cannot open shared object file'
	expect_line '^                fix: install the NVIDIA driver; in a container, start it with the NVIDIA Container Toolkit'
	expect_line '^--    GPUs      not checked: no usable driver$'
	expect_line '^--    counters  not checked: no usable driver$'
	expect_line "^ok    output    $WORK: writable, "
	expect_eq "last line" "tracing will not work here: 1 problem above, each with its fix" "$(tail -n 1 out)"
	;;

ready)
	fake_machine
	doctor
	expect_eq "exit status" 0 "$rc"
	expect_line "^ok    library   $(dirname "$(realpath "$GPT_TRACE")")/libgpt_inject.so (beside the launcher: a build tree)$"
	expect_line "^ok    CUPTI     $FAKE_CUPTI, API version [0-9]*, from GPT_TRACE_CUPTI_LIB$"
	expect_line '^ok    driver    580.95.05, supports CUDA 13.0$'
	expect_line '^ok    GPU 0     Fake GPU 0 (sm_90)$'
	expect_line "^ok    counters  allowed for every user (RmProfilingAdminOnly: 0 in $WORK/proc/params)$"
	expect_no_line '^FAIL\|^WARN'
	expect_eq "last line" "tracing will work here" "$(tail -n 1 out)"
	FAKE_CUDA_GPUS=3 doctor
	expect_eq "exit status with 3 GPUs" 0 "$rc"
	expect_eq "GPU lines" 3 "$(grep -c '^ok    GPU [0-2]     Fake GPU [0-2] (sm_90)$' out)"
	# The driver is found through the dynamic linker, not linked: gpt-trace needs no libcuda.
	readelf -d "$GPT_TRACE" | grep -q 'NEEDED.*libcuda' && fail "gpt-trace links libcuda"
	;;

no-gpu)
	fake_machine
	CUDA_VISIBLE_DEVICES= doctor
	expect_eq "exit status with CUDA_VISIBLE_DEVICES=" 1 "$rc"
	expect_line "^FAIL  GPUs      none visible (cuInit: CUDA_ERROR_NO_DEVICE; CUDA_VISIBLE_DEVICES='')$"
	expect_line '^                fix: unset CUDA_VISIBLE_DEVICES, or list a GPU in it'
	expect_line '^--    counters  not checked: no GPU visible$'
	expect_eq "last line" "tracing will not work here: 1 problem above, each with its fix" "$(tail -n 1 out)"
	FAKE_CUDA_GPUS=0 doctor
	expect_eq "exit status without GPUs" 1 "$rc"
	expect_line '^FAIL  GPUs      none visible (cuInit: CUDA_ERROR_NO_DEVICE)$'
	expect_line "^                fix: check 'nvidia-smi'; in a container, start it with --gpus all$"
	;;

old-driver)
	fake_machine
	FAKE_CUDA_VERSION=12040 doctor
	expect_eq "exit status" 1 "$rc"
	expect_line '^FAIL  driver    580.95.05 supports CUDA 12.4, older than the CUPTI (CUDA [0-9]*)$'
	expect_line '^                fix: update the NVIDIA driver to one for CUDA [0-9]* or newer'
	expect_line '^--    GPUs      not checked: no usable driver$'
	;;

counters)
	fake_machine
	rm proc/params
	doctor
	expect_eq "exit status without params" 0 "$rc"
	expect_line "^WARN  counters  unknown: no RmProfilingAdminOnly in $WORK/proc/params; 'gpt-trace run --metrics' will say$"
	expect_eq "last line" "tracing will work here (see the warnings above)" "$(tail -n 1 out)"
	echo "RmProfilingAdminOnly: 1" >proc/params
	# This process may or may not be privileged; a child without capabilities is not.
	caps=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
	doctor
	expect_eq "exit status, restricted" 0 "$rc"
	if [ "$(( 0x$caps & (1 << 21) ))" != 0 ]; then
		expect_line '^ok    counters  restricted to administrators, and this process is one ('
		command -v setpriv >/dev/null || skip "setpriv is needed to drop capabilities"
		unprivileged="setpriv --bounding-set=-all --inh-caps=-all --"
	else
		unprivileged=
	fi
	$unprivileged "$GPT_TRACE" doctor >out 2>err
	expect_eq "exit status, restricted, unprivileged" 0 "$?"
	expect_line "^WARN  counters  restricted to administrators (RmProfilingAdminOnly: 1 in $WORK/proc/params): 'run --metrics' gets no hardware metrics$"
	expect_line "^                fix: run as root (or with CAP_PERFMON from driver R565 on), or have an administrator set 'options nvidia NVreg_RestrictProfilingToAdminUsers=0'"
	$unprivileged "$GPT_TRACE" doctor --metrics >out 2>err
	expect_eq "exit status, restricted, unprivileged, --metrics" 1 "$?"
	expect_line "^FAIL  counters  restricted to administrators"
	;;

library)
	doctor
	grep -q "^ok    library   .*/libgpt_inject.so (beside the launcher: a build tree)$" out ||
		skip "libgpt_inject.so is not built"
	GPT_TRACE_INJECT_LIB=/nonexistent/libgpt_inject.so doctor
	expect_eq "exit status" 1 "$rc"
	expect_line "^FAIL  library   cannot use GPT_TRACE_INJECT_LIB '/nonexistent/libgpt_inject.so': No such file or directory$"
	expect_line '^                fix: unset GPT_TRACE_INJECT_LIB, or point it at libgpt_inject.so$'
	mkdir -p alone/bin && cp "$GPT_TRACE" alone/bin/gpt-trace
	GPT_TRACE=alone/bin/gpt-trace doctor
	expect_eq "exit status, library missing" 1 "$rc"
	expect_line "^FAIL  library   cannot find libgpt_inject.so: neither '$WORK/alone/bin/libgpt_inject.so' nor '$WORK/alone/bin/../lib/gpt-trace/libgpt_inject.so' exists"
	expect_line "^                fix: reinstall gpt-trace"
	;;

cupti)
	GPT_TRACE_CUPTI_LIB=/nonexistent/libcupti.so.13 doctor
	expect_line "^WARN  CUPTI     GPT_TRACE_CUPTI_LIB does not load (/nonexistent/libcupti.so.13: cannot open shared object file: No such file or directory): the library searches on$"
	expect_line '^                fix: unset GPT_TRACE_CUPTI_LIB, or point it at a libcupti.so.13$'
	# Then the library's own search: a CUPTI of the toolkit here, or none.
	grep -q '^ok    CUPTI     .*, API version [0-9]*, from the' out ||
		expect_line '^FAIL  CUPTI     no CUPTI found (tried libcupti.so.13, '
	# No CUPTI anywhere: in a mount namespace (root only), the linker's cache and each folder
	# doctor finds a CUPTI in are hidden until it finds none.
	unshare --mount true 2>/dev/null || skip "no mount namespace here (unshare --mount needs root)"
	mkdir empty
	unshare --mount sh -c '
		empty=$1
		shift
		mount --bind /dev/null /etc/ld.so.cache || exit 3
		for i in 1 2 3 4 5; do
			"$@" >out 2>err
			lib=$(sed -n "s/^ok    CUPTI     \(.*\), API version.*/\1/p" out)
			[ -n "$lib" ] || exit 0
			case $lib in /lib/* | /usr/lib/* | /lib64/*) exit 4 ;; esac
			mount --bind "$empty" "$(dirname "$lib")" || exit 3
		done
		exit 5' sh "$WORK/empty" env -u LD_LIBRARY_PATH "$GPT_TRACE" doctor
	case $? in
	0) ;;
	4) skip "a CUPTI in a system library folder cannot be hidden" ;;
	*) fail "cannot hide the CUPTI libraries (status $?)" ;;
	esac
	expect_line '^FAIL  CUPTI     no CUPTI found (tried libcupti.so.13, .*, libcupti.so)$'
	expect_line "^                fix: install the CUDA 13 toolkit's CUPTI (cuda-cupti-13-0)"
	;;

output)
	doctor -o "$WORK/t-%p.sqlite"
	expect_line "^ok    output    $WORK: writable, [0-9.]* GiB free$"
	mkdir sub
	doctor --output sub
	expect_line "^ok    output    $WORK/sub: writable"
	doctor -o /nonexistent/folder/t.sqlite
	expect_eq "exit status, no folder" 1 "$rc"
	expect_line "^FAIL  output    cannot write to '/nonexistent/folder': No such file or directory$"
	expect_line "^                fix: run in a folder you can write to, or give 'gpt-trace run -o DIR/trace-%p.sqlite' one$"
	ls -A sub | grep -q . && fail "doctor left a file in the folder it checked"
	;;

*)
	fail "unknown case"
	;;
esac
echo "PASS [$case]"
exit 0
