#!/bin/sh
# Tests of `gpt-trace run` with programs that do not use CUDA: one case per invocation,
# `sh run.sh CASE`, registered with ctest by CMakeLists.txt, which also sets:
#   GPT_TRACE      the gpt-trace executable
#   PROBE          run-probe (prints what it received, ends in chosen ways, drives signals)
#   FAKE_INJECT    stand-in for libgpt_inject.so (fake-inject.c), given via GPT_TRACE_INJECT_LIB
#   FAKE_PRELOAD   an empty library, "what LD_PRELOAD already held"
#   SCHEMA, NSYS_FIXTURES, WORK (a private scratch folder, emptied first)
# Most cases check the launcher is transparent by comparing a traced run with the same run untraced.
# Exit 0 pass, 1 fail, 77 skipped (with the reason printed).
set -u
case=${1:?usage: run.sh CASE}

fail() {
	echo "FAIL [$case]: $*" >&2
	exit 1
}
skip() {
	echo "SKIP [$case]: $*"
	exit 77
}
# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: expected [$2], got [$3]"
}
expect_file_eq() {
	cmp -s "$2" "$3" || { diff -u "$2" "$3" >&2; fail "$1: files differ"; }
}
expect_grep() {
	grep -q -e "$2" "$3" || { cat "$3" >&2; fail "$1: no line matching [$2] in $3"; }
}

rm -rf "$WORK" && mkdir -p "$WORK/tmp" && cd "$WORK" || fail "cannot make $WORK"
WORK=$(pwd -P)
export TMPDIR="$WORK/tmp"
export GPT_TRACE_INJECT_LIB="$FAKE_INJECT"
unset LD_PRELOAD FAKE_INJECT_LOG FAKE_INJECT_LINES GPT_TRACE_METRICS
# An ASan build of gpt-trace refuses to start when LD_PRELOAD is set unless told this; harmless otherwise.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
lib=$(realpath "$FAKE_INJECT")

# The launcher's own scratch (the session folder) must be gone after every run.
expect_no_session_left() {
	[ -z "$(ls -A "$TMPDIR")" ] || fail "session folder left behind: $(ls -A "$TMPDIR")"
}

# usage_error ARGS...: exit 2, one line on stderr, nothing on stdout, the program not run.
usage_error() {
	rm -f ran
	"$GPT_TRACE" run "$@" >out 2>err
	rc=$?
	expect_eq "exit status of 'run $*'" 2 "$rc"
	expect_eq "stderr lines of 'run $*'" 1 "$(wc -l <err)"
	[ -s out ] && fail "'run $*' wrote to stdout"
	[ -e ran ] && fail "'run $*' ran the program"
	grep -q '^gpt-trace: ' err || fail "'run $*': message not prefixed: $(cat err)"
}

# Synthetic traces: exactly our schema (schema/schema.sql) with the given rows.
summary_setup() {
	command -v sqlite3 >/dev/null || skip "sqlite3 (the command) is needed to build synthetic traces"
	# trace NAME SQL: a trace with exactly our schema and the given rows.
	trace() {
		{ cat "$SCHEMA"; echo "INSERT INTO StringIds VALUES (1, 'k');"; echo "$2"; } |
			sqlite3 "$WORK/$1" || fail "cannot build $1"
	}
	k='contextId, streamId, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId'
	kv='1, 7, 1, 1, 32, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 1'
	kernel() { echo "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, $k) VALUES ($1, $2, $3, $kv);"; }
	copy() { echo "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, bytes, copyKind) VALUES ($1, $2, $3, 1, 7, $4, 1);"; }
	set_() { echo "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, value, bytes) VALUES ($1, $2, $3, 1, 7, 0, $4);"; }
	dropped() { echo "INSERT INTO GPT_META VALUES ('cupti_dropped_records', '$1');"; }
	nvtx_dropped() { echo "INSERT INTO GPT_META VALUES ('nvtx_dropped_events', '$1');"; }
}

case $case in
help)
	"$GPT_TRACE" run --help >out 2>err || fail "--help exited $?"
	[ -s err ] && fail "--help wrote to stderr"
	expect_grep "--help" '^usage: gpt-trace run \[options\] \[--\] PROGRAM \[ARGS...\]' out
	for opt in '-o, --output PATTERN' '-f, --force' '--api WHICH' '--metrics\[=SPEC\]' \
		'--commit-ms N' '-q, --quiet' '-h, --help' 'exit status'; do
		expect_grep "--help" "$opt" out
	done
	"$GPT_TRACE" run -h >out2 || fail "-h exited $?"
	expect_file_eq "-h and --help" out out2
	# Help wins even before a program; the program is not run.
	"$GPT_TRACE" run -h -- sh -c 'touch ran' >/dev/null || fail "-h PROGRAM exited $?"
	[ -e ran ] && fail "-h ran the program"
	;;

usage)
	usage_error
	usage_error -q
	usage_error --
	usage_error --bogus -- sh -c 'touch ran'
	expect_grep "unknown long option" "unknown option '--bogus'" err
	usage_error -x sh -c 'touch ran'
	expect_grep "unknown short option" "unknown option '-x'" err
	usage_error -qx sh -c 'touch ran'
	expect_grep "unknown short option in a cluster" "unknown option '-x'" err
	usage_error --no-gpu-metrics=1 sh -c 'touch ran'
	expect_grep "value of an option without one" "unknown option '--no-gpu-metrics'" err
	usage_error --api=some sh -c 'touch ran'
	expect_grep "bad --api" "invalid --api 'some'" err
	usage_error --api
	usage_error --commit-ms 0 sh -c 'touch ran'
	usage_error --commit-ms=12x sh -c 'touch ran'
	usage_error --commit-ms=-5 sh -c 'touch ran'
	usage_error --commit-ms=99999999999999999999999 sh -c 'touch ran'
	usage_error -o '' sh -c 'touch ran'
	usage_error -o 'trace-%d.sqlite' sh -c 'touch ran'
	expect_grep "bad pattern" "invalid output pattern 'trace-%d.sqlite': use %p (pid), %r (rank)" err
	usage_error -o 'trace-%' sh -c 'touch ran'
	usage_error -o
	expect_grep "missing value" "option '-o' needs a value" err
	# Options after PROGRAM are PROGRAM's: this runs `sh -c 'touch ran' --bogus`.
	"$GPT_TRACE" run -q sh -c 'touch ran' --bogus 2>err || fail "options after PROGRAM: exit $?"
	[ -e ran ] || fail "options after PROGRAM were not passed to it"
	;;

args)
	uni=$(printf 'caf\303\251 \342\234\223 \360\237\232\200')
	nl=$(printf 'two\nlines')
	tab=$(printf 'a\tb')
	set -- "" "with space" "  lead and trail  " "'single'" '"double"' 'back\slash' '$HOME' \
		'*' "$uni" "$nl" "$tab" -x --flag -- --output=x "" last
	"$PROBE" args "$@" >direct || fail "probe args failed"
	expect_eq "probe saw" "17 arguments" "$(head -n 1 direct)"
	"$GPT_TRACE" run -q -- "$PROBE" args "$@" >traced || fail "traced args: exit $?"
	expect_file_eq "arguments with --" direct traced
	"$GPT_TRACE" run -q "$PROBE" args "$@" >traced || fail "traced args: exit $?"
	expect_file_eq "arguments without --" direct traced
	# A PROGRAM that starts with '-' needs '--'.
	ln -s "$PROBE" ./-dash-probe
	PATH="$WORK:$PATH" "$GPT_TRACE" run -q -- -dash-probe args "$@" >traced || fail "-dash-probe"
	expect_file_eq "program starting with '-'" direct traced
	;;

exit-codes)
	for n in 0 3 255 1 127; do
		"$GPT_TRACE" run -q -- "$PROBE" exit $n
		expect_eq "exit status" "$n" "$?"
	done
	"$GPT_TRACE" run -q -- sh -c 'exit 3'
	expect_eq "sh -c 'exit 3'" 3 "$?"
	"$GPT_TRACE" run -q -- false
	expect_eq "false" 1 "$?"
	expect_no_session_left
	;;

nested-shell)
	"$GPT_TRACE" run -- sh -c 'sh -c "exit 7"' 2>err
	expect_eq "sh -c 'sh -c \"exit 7\"'" 7 "$?"
	;;

signal-death)
	for sig in 15 9 6 1 2 10; do
		direct=$("$PROBE" status "$PROBE" raise $sig)
		expect_eq "untraced probe raise $sig" "signal $sig" "$direct"
		traced=$("$PROBE" status "$GPT_TRACE" run -q -- "$PROBE" raise $sig)
		expect_eq "launcher status when the program dies of signal $sig" "$direct" "$traced"
	done
	# What a shell sees: 128 + N.
	sh -c '"$0" run -q -- "$1" raise 15' "$GPT_TRACE" "$PROBE"
	expect_eq "shell \$? after SIGTERM death" 143 "$?"
	# A shell that itself dies of the signal, under the launcher.
	traced=$("$PROBE" status "$GPT_TRACE" run -q -- sh -c 'kill -TERM $$')
	expect_eq "sh -c 'kill -TERM \$\$'" "signal 15" "$traced"
	expect_no_session_left
	;;

sigterm-forward)
	# SIGTERM sent to the launcher reaches the program, whose handler runs; its status is ours.
	out=$("$PROBE" kill-when-ready 15 ready "$GPT_TRACE" run -q -- "$PROBE" trap 15 ready)
	expect_eq "SIGTERM forwarded" "caught TERM
exit 42" "$out"
	expect_no_session_left
	;;

sigint-forward)
	# Every forwarded signal, sent with kill() by another process.
	for pair in 1:HUP 2:INT 3:QUIT 10:USR1 12:USR2; do
		sig=${pair%%:*} name=${pair#*:}
		rm -f ready
		out=$("$PROBE" kill-when-ready $sig ready "$GPT_TRACE" run -q -- "$PROBE" trap $sig ready)
		expect_eq "SIG$name forwarded" "caught $name
exit 42" "$out"
	done
	expect_no_session_left
	;;

signal-no-handler)
	# The program does not catch it: it dies, and so does the launcher, of the same signal.
	for sig in 15 2 1; do
		rm -f ready
		out=$("$PROBE" kill-when-ready $sig ready "$GPT_TRACE" run -q -- "$PROBE" wait ready)
		expect_eq "launcher after forwarding signal $sig" "signal $sig" "$out"
	done
	expect_no_session_left
	;;

ctrl-c)
	# Ctrl-C on the terminal reaches the program (same foreground process group) and does not kill
	# the launcher, which ends with the program's status.
	out=$("$PROBE" ctrl-c ready "$GPT_TRACE" run -q -- "$PROBE" trap 2 ready)
	expect_eq "Ctrl-C caught by the program" "caught INT
exit 42" "$out"
	expect_no_session_left
	;;

ctrl-c-kills)
	# A program that does not catch Ctrl-C dies of SIGINT, and the launcher reports the same death
	# (so that a shell loop around it stops, as it would untraced).
	out=$("$PROBE" ctrl-c ready "$GPT_TRACE" run -q -- "$PROBE" wait ready)
	expect_eq "Ctrl-C on an uncaught program" "signal 2" "$out"
	expect_no_session_left
	;;

stdin)
	seq 1 200000 >input
	printf 'no newline at end \001\377' >>input
	"$GPT_TRACE" run -q -- cat <input >output || fail "cat exited $?"
	expect_file_eq "stdin piped through" input output
	out=$(printf 'a b c\n' | "$GPT_TRACE" run -q -- sh -c 'read x; echo "got $x"')
	expect_eq "stdin pipe" "got a b c" "$out"
	;;

stdout-stderr)
	"$GPT_TRACE" run -- sh -c 'echo out; echo err >&2' >out 2>err || fail "exit $?"
	expect_eq "stdout is the program's only" "out" "$(cat out)"
	expect_grep "program's stderr" '^err$' err
	# Everything else on stderr is the launcher's, prefixed.
	grep -v '^err$' err | grep -v '^gpt-trace: ' && fail "unprefixed launcher output on stderr"
	"$GPT_TRACE" run -q -- sh -c 'echo out; echo err >&2' >out 2>err || fail "exit $?"
	expect_eq "quiet stdout" "out" "$(cat out)"
	expect_eq "quiet stderr" "err" "$(cat err)"
	# Nobody reads stderr any more by the time the summary is printed: the status stays PROGRAM's.
	out=$("$PROBE" broken-stderr "$GPT_TRACE" run -- "$PROBE" exit 5)
	expect_eq "status with a broken stderr" "exit 5" "$out"
	;;

env)
	ours='^(LD_PRELOAD|CUDA_INJECTION64_PATH|NVTX_INJECTION64_PATH|GPT_TRACE_(OUTPUT|FORCE|SESSION|API|COMMIT_MS|QUIET|METRICS|LAUNCH_NS)|_)='
	export LD_PRELOAD="$FAKE_PRELOAD"
	export GPT_TRACE_METRICS=left-over GPT_TRACE_FORCE=1
	export ODD_VALUE='a b=c;$x "q"' EMPTY_VALUE=
	"$PROBE" env | grep -E -v "$ours" >direct
	"$GPT_TRACE" run -q -- "$PROBE" env >traced-all || fail "exit $?"
	grep -E -v "$ours" traced-all >traced
	expect_file_eq "environment apart from ours" direct traced
	expect_grep "user variable" '^ODD_VALUE=a b=c;$x "q"$' traced
	expect_grep "empty variable" '^EMPTY_VALUE=$' traced
	value() { sed -n "s/^$1=//p" traced-all; }
	expect_eq LD_PRELOAD "$lib:$FAKE_PRELOAD" "$(value LD_PRELOAD)"
	expect_eq CUDA_INJECTION64_PATH "$lib" "$(value CUDA_INJECTION64_PATH)"
	expect_eq NVTX_INJECTION64_PATH "$lib" "$(value NVTX_INJECTION64_PATH)"
	expect_eq GPT_TRACE_OUTPUT "$WORK/gpt-trace-%h-%p.sqlite" "$(value GPT_TRACE_OUTPUT)"
	expect_eq GPT_TRACE_FORCE 0 "$(value GPT_TRACE_FORCE)"
	expect_eq GPT_TRACE_API default "$(value GPT_TRACE_API)"
	expect_eq GPT_TRACE_COMMIT_MS 1000 "$(value GPT_TRACE_COMMIT_MS)"
	expect_eq GPT_TRACE_QUIET 1 "$(value GPT_TRACE_QUIET)"
	expect_eq "GPT_TRACE_METRICS (not asked for)" "" "$(value GPT_TRACE_METRICS)"
	session=$(value GPT_TRACE_SESSION)
	case $session in "$TMPDIR"/gpt-trace-session-*) ;; *) fail "GPT_TRACE_SESSION [$session]" ;; esac

	mkdir sub
	"$GPT_TRACE" run -o 'sub/t-%h-%p.sqlite' -f --api all --commit-ms 250 --metrics=ld,st \
		-- "$PROBE" env >traced-all 2>/dev/null || fail "exit $?"
	expect_eq "-o" "$WORK/sub/t-%h-%p.sqlite" "$(value GPT_TRACE_OUTPUT)"
	expect_eq "-f" 1 "$(value GPT_TRACE_FORCE)"
	expect_eq "--api all" all "$(value GPT_TRACE_API)"
	expect_eq "--commit-ms" 250 "$(value GPT_TRACE_COMMIT_MS)"
	expect_eq "no -q" 0 "$(value GPT_TRACE_QUIET)"
	expect_eq "--metrics=" ld,st "$(value GPT_TRACE_METRICS)"
	"$GPT_TRACE" run -q --metrics -o /tmp/abs-%p.sqlite --api=none -- "$PROBE" env >traced-all ||
		fail "exit $?"
	expect_eq "--metrics" 1 "$(value GPT_TRACE_METRICS)"
	expect_eq "absolute -o" "/tmp/abs-%p.sqlite" "$(value GPT_TRACE_OUTPUT)"
	expect_eq "--api=none" none "$(value GPT_TRACE_API)"
	# %r (the rank of a torchrun/MPI/Slurm job; the pid outside one) reaches the library as given,
	# in the file name and in a directory that only the library can expand.
	"$GPT_TRACE" run -q -o 'sub/rank-%r.sqlite' -- "$PROBE" env >traced-all || fail "-o %r: exit $?"
	expect_eq "-o %r" "$WORK/sub/rank-%r.sqlite" "$(value GPT_TRACE_OUTPUT)"
	"$GPT_TRACE" run -q -o 'rank-%r/t.sqlite' -- "$PROBE" env >traced-all || fail "-o %r/: exit $?"
	expect_eq "-o %r/" "$WORK/rank-%r/t.sqlite" "$(value GPT_TRACE_OUTPUT)"

	# LD_PRELOAD unset, or already starting with our library (a nested gpt-trace run).
	unset LD_PRELOAD
	"$GPT_TRACE" run -q -- "$PROBE" env >traced-all || fail "exit $?"
	expect_eq "LD_PRELOAD from nothing" "$lib" "$(value LD_PRELOAD)"
	LD_PRELOAD="$lib:$FAKE_PRELOAD" "$GPT_TRACE" run -q -- "$PROBE" env >traced-all || fail "exit $?"
	expect_eq "LD_PRELOAD already ours" "$lib:$FAKE_PRELOAD" "$(value LD_PRELOAD)"

	# A '%' in the current directory must not read as an escape.
	mkdir 'pct%p' && cd 'pct%p' || fail "mkdir"
	"$GPT_TRACE" run -q -- "$PROBE" env >../traced-all || fail "exit $?"
	cd .. || fail "cd"
	expect_eq "cwd with %" "$WORK/pct%%p/gpt-trace-%h-%p.sqlite" "$(value GPT_TRACE_OUTPUT)"
	;;

capture-options)
	# The capture options reach the library as GPT_TRACE_* (docs/launcher-env.md); left-over
	# values in the user's environment do not count; bad values are usage errors.
	value() { sed -n "s/^$1=//p" traced-all; }
	export GPT_TRACE_DELAY_NS=7 GPT_TRACE_CAPTURE_RANGE=cudaProfilerApi
	"$GPT_TRACE" run -q -- "$PROBE" env >traced-all || fail "exit $?"
	expect_eq "left-over GPT_TRACE_DELAY_NS" "" "$(value GPT_TRACE_DELAY_NS)"
	expect_eq "left-over GPT_TRACE_CAPTURE_RANGE" "" "$(value GPT_TRACE_CAPTURE_RANGE)"
	launch=$(value GPT_TRACE_LAUNCH_NS)
	case $launch in [1-9]*) ;; *) fail "GPT_TRACE_LAUNCH_NS [$launch]" ;; esac
	"$GPT_TRACE" run -q -y 1.5 -d 2 -c cudaProfilerApi --capture-range-end repeat:3 \
		--max-size 2G -- "$PROBE" env >traced-all || fail "exit $?"
	expect_eq "-y 1.5" 1500000000 "$(value GPT_TRACE_DELAY_NS)"
	expect_eq "-d 2" 2000000000 "$(value GPT_TRACE_DURATION_NS)"
	expect_eq "-c" cudaProfilerApi "$(value GPT_TRACE_CAPTURE_RANGE)"
	expect_eq "--capture-range-end" repeat:3 "$(value GPT_TRACE_CAPTURE_RANGE_END)"
	expect_eq "--max-size 2G" 2147483648 "$(value GPT_TRACE_MAX_SIZE)"
	"$GPT_TRACE" run -q --delay=0 --duration=.25 --capture-range=none --max-size=500KB \
		-- "$PROBE" env >traced-all || fail "exit $?"
	expect_eq "--delay=0" "" "$(value GPT_TRACE_DELAY_NS)"
	expect_eq "--duration=.25" 250000000 "$(value GPT_TRACE_DURATION_NS)"
	expect_eq "--capture-range=none" none "$(value GPT_TRACE_CAPTURE_RANGE)"
	expect_eq "--max-size=500KB" 512000 "$(value GPT_TRACE_MAX_SIZE)"
	"$GPT_TRACE" run -q -c nvtx -p 'train step@my domain' -- "$PROBE" env >traced-all || fail "exit $?"
	expect_eq "-c nvtx" nvtx "$(value GPT_TRACE_CAPTURE_RANGE)"
	expect_eq "-p" "train step@my domain" "$(value GPT_TRACE_NVTX_CAPTURE)"
	"$GPT_TRACE" run -q --steps 3-5 -- "$PROBE" env >traced-all || fail "exit $?"
	expect_eq "--steps" 3-5 "$(value GPT_TRACE_STEPS)"
	"$GPT_TRACE" run -q --start-later -- "$PROBE" env >traced-all || fail "exit $?"
	expect_eq "--start-later" 1 "$(value GPT_TRACE_START_LATER)"
	usage_error -y x sh -c 'touch ran'
	usage_error --delay -1 sh -c 'touch ran'
	usage_error -d 0 sh -c 'touch ran'
	usage_error -c nvtx sh -c 'touch ran'
	usage_error -p step sh -c 'touch ran'
	usage_error -c nvtx -p @dom sh -c 'touch ran'
	usage_error --steps 5-3 sh -c 'touch ran'
	usage_error --steps 0-3 sh -c 'touch ran'
	usage_error --steps 3 sh -c 'touch ran'
	usage_error --steps 1-3 -c cudaProfilerApi sh -c 'touch ran'
	usage_error --start-later -y 1 sh -c 'touch ran'
	usage_error -c bogus sh -c 'touch ran'
	usage_error -c cudaProfilerApi --capture-range-end stop-shutdown sh -c 'touch ran'
	usage_error -c cudaProfilerApi --capture-range-end repeat:0 sh -c 'touch ran'
	usage_error --capture-range-end repeat sh -c 'touch ran'
	usage_error --max-size 10T sh -c 'touch ran'
	usage_error --max-size 0 sh -c 'touch ran'
	;;

preload-reaches-children)
	export FAKE_INJECT_LOG="$WORK/log"
	"$GPT_TRACE" run -q -- sh -c '"$0" exit 0; "$0" exit 0' "$PROBE" || fail "exit $?"
	expect_eq "processes that loaded the library (sh and two probes)" 3 "$(sort -u log | wc -l)"
	;;

missing-program)
	"$GPT_TRACE" run -- ./no-such-program arg 2>err
	expect_eq "exit status" 127 "$?"
	expect_eq "message" "gpt-trace: cannot run './no-such-program': No such file or directory" \
		"$(cat err)"
	"$GPT_TRACE" run -- gpt-trace-no-such-command-xyz 2>err
	expect_eq "exit status (PATH search)" 127 "$?"
	expect_grep "message" "^gpt-trace: cannot run 'gpt-trace-no-such-command-xyz': No such file" err
	expect_no_session_left
	;;

not-executable)
	printf '#!/bin/sh\ntouch ran\n' >script
	chmod 644 script
	"$GPT_TRACE" run -- ./script 2>err
	expect_eq "exit status" 126 "$?"
	expect_eq "message" "gpt-trace: cannot run './script': Permission denied" "$(cat err)"
	[ -e ran ] && fail "the script ran"
	mkdir dir
	"$GPT_TRACE" run -- ./dir 2>err
	expect_eq "exit status (a directory)" 126 "$?"
	chmod 755 script
	"$GPT_TRACE" run -q -- ./script || fail "executable script: exit $?"
	[ -e ran ] || fail "the executable script did not run"
	expect_no_session_left
	;;

bad-output)
	usage_error -o /nonexistent-gpt-trace-dir/t.sqlite -- sh -c 'touch ran'
	expect_eq "message" "gpt-trace: cannot write traces to '/nonexistent-gpt-trace-dir': No such file or directory" "$(cat err)"
	touch plainfile
	usage_error -o plainfile/t-%p.sqlite -- sh -c 'touch ran'
	expect_grep "message" "cannot write traces to '$WORK/plainfile': Not a directory" err
	mkdir outdir
	usage_error -o outdir -- sh -c 'touch ran'
	expect_grep "message" "'$WORK/outdir': it is a directory" err
	usage_error -o outdir/ -- sh -c 'touch ran'
	if [ "$(id -u)" != 0 ]; then
		mkdir readonly && chmod 555 readonly
		usage_error -o readonly/t.sqlite -- sh -c 'touch ran'
		expect_grep "message" "Permission denied" err
	fi
	# The directory part may use %h; with %p in it only the library can tell.
	mkdir "host-$(uname -n | cut -d. -f1)"
	"$GPT_TRACE" run -q -o 'host-%h/t-%p.sqlite' -- sh -c 'touch ran' || fail "-o host-%h/: exit $?"
	[ -e ran ] || fail "-o host-%h/ did not run the program"
	rm ran
	"$GPT_TRACE" run -q -o 'dir-%p/t.sqlite' -- sh -c 'touch ran' || fail "-o dir-%p/: exit $?"
	[ -e ran ] || fail "-o dir-%p/ did not run the program"
	expect_no_session_left
	;;

missing-library)
	GPT_TRACE_INJECT_LIB=/nonexistent/libgpt_inject.so usage_error -- sh -c 'touch ran'
	expect_eq "message" "gpt-trace: cannot use GPT_TRACE_INJECT_LIB '/nonexistent/libgpt_inject.so': No such file or directory" "$(cat err)"
	# Without the override: beside the executable, then ../lib/gpt-trace/.
	unset GPT_TRACE_INJECT_LIB
	mkdir -p inst/bin inst/lib/gpt-trace
	cp "$GPT_TRACE" inst/bin/gpt-trace
	GPT_TRACE=inst/bin/gpt-trace usage_error -- sh -c 'touch ran'
	expect_grep "message" "^gpt-trace: cannot find libgpt_inject.so: neither '$WORK/inst/bin/libgpt_inject.so' nor '$WORK/inst/bin/../lib/gpt-trace/libgpt_inject.so' exists" err
	cp "$FAKE_INJECT" inst/lib/gpt-trace/libgpt_inject.so
	inst/bin/gpt-trace run -q -- "$PROBE" env >env || fail "installed layout: exit $?"
	expect_grep "installed layout" "^CUDA_INJECTION64_PATH=$WORK/inst/lib/gpt-trace/libgpt_inject.so$" env
	cp "$FAKE_INJECT" inst/bin/libgpt_inject.so
	inst/bin/gpt-trace run -q -- "$PROBE" env >env || fail "build layout: exit $?"
	expect_grep "build layout" "^CUDA_INJECTION64_PATH=$WORK/inst/bin/libgpt_inject.so$" env
	;;

session-cleanup)
	out=$("$GPT_TRACE" run -q -- sh -c 'test -d "$GPT_TRACE_SESSION" && test -w "$GPT_TRACE_SESSION" && echo ok')
	expect_eq "session folder during the run" ok "$out"
	expect_no_session_left
	"$GPT_TRACE" run -q -- sh -c 'echo x >"$GPT_TRACE_SESSION/traces"; echo y >"$GPT_TRACE_SESSION/other"' 2>/dev/null
	expect_no_session_left
	"$PROBE" status "$GPT_TRACE" run -q -- "$PROBE" raise 9 >/dev/null
	expect_no_session_left
	# An unusable TMPDIR falls back to /tmp, with a warning, and the program still runs.
	out=$(TMPDIR=/nonexistent-gpt-trace-tmp "$GPT_TRACE" run -q -- sh -c 'echo "$GPT_TRACE_SESSION"' 2>err)
	case $out in /tmp/gpt-trace-session-*) ;; *) fail "fallback session [$out]" ;; esac
	[ -e "$out" ] && fail "fallback session $out left behind"
	expect_grep "TMPDIR warning" "cannot create a session directory in TMPDIR '/nonexistent-gpt-trace-tmp'" err
	;;

summary)
	summary_setup
	# GPU 0: kernels [1000,2000] and [1500,3000] overlap, a copy [4000,5000], a set [10000,11000]:
	# busy 2000 + 1000 + 1000 of a 10000 ns span. GPU 1: a kernel and a copy back to back.
	trace a.sqlite "$(kernel 1000 2000 0; kernel 1500 3000 0; copy 4000 5000 0 1048576
		set_ 10000 11000 0 256; kernel 100 600 1; copy 600 700 1 524288; dropped 0)"
	trace b.sqlite "$(kernel 0 1000 0; dropped 7)"
	trace c.sqlite "$(dropped 0; nvtx_dropped 3)"
	printf '%s\n' "$WORK/a.sqlite" "$WORK/b.sqlite" "$WORK/c.sqlite" >lines
	FAKE_INJECT_LINES="$WORK/lines" "$GPT_TRACE" run -- "$PROBE" exit 3 >out 2>err
	expect_eq "exit status" 3 "$?"
	cat >expected <<-EOF
	gpt-trace: wrote $WORK/a.sqlite: 3 kernels, 2 copies (1.6 MB), GPU 0 busy 40.0% of 10.0 us, GPU 1 busy 100.0% of 600 ns
	gpt-trace: wrote $WORK/b.sqlite: 1 kernel, 0 copies (0 B), GPU 0 busy 100.0% of 1.0 us
	gpt-trace: WARNING: CUPTI DROPPED 7 RECORDS in $WORK/b.sqlite: the trace is incomplete
	gpt-trace: wrote $WORK/c.sqlite: 0 kernels, 0 copies (0 B), no GPU activity
	gpt-trace: WARNING: 3 NVTX EVENTS DROPPED in $WORK/c.sqlite: NVTX ranges are incomplete
	EOF
	expect_file_eq "summary" expected err
	[ -s out ] && fail "summary went to stdout"
	# Quiet: only the dropped records.
	FAKE_INJECT_LINES="$WORK/lines" "$GPT_TRACE" run -q -- "$PROBE" exit 0 >out 2>err
	grep WARNING expected >expected-quiet
	expect_file_eq "quiet summary" expected-quiet err
	expect_no_session_left
	;;

summary-failures)
	summary_setup
	echo "not a trace" >junk.sqlite
	printf '!4242 cannot create '\''/x/t.sqlite'\'': Permission denied\n%s\n' "$WORK/junk.sqlite" >lines
	FAKE_INJECT_LINES="$WORK/lines" "$GPT_TRACE" run -q -- "$PROBE" exit 5 2>err
	expect_eq "exit status stays the program's" 5 "$?"
	expect_eq "failure lines" 2 "$(wc -l <err)"
	expect_eq "process failure" "gpt-trace: process 4242: cannot create '/x/t.sqlite': Permission denied" "$(head -n 1 err)"
	expect_grep "unreadable trace" "^gpt-trace: cannot open '$WORK/junk.sqlite'" err
	# No process finished a trace.
	"$GPT_TRACE" run -- "$PROBE" exit 0 2>err || fail "exit $?"
	expect_eq "no CUDA" "gpt-trace: no trace was written: no process used CUDA" "$(cat err)"
	"$GPT_TRACE" run -q -- "$PROBE" exit 0 2>err || fail "exit $?"
	[ -s err ] && fail "quiet run printed: $(cat err)"
	"$PROBE" status "$GPT_TRACE" run -- "$PROBE" raise 15 >/dev/null 2>err
	expect_eq "killed" "gpt-trace: no trace was written: the program was killed by signal 15 (Terminated) before any process created one" "$(cat err)"
	expect_no_session_left
	;;

summary-nsys)
	summary_setup
	# Real Nsight Systems exports read through the same loader. Counts from the fixture README;
	# bytes and busy shares (0.0780%, 88.723%) computed independently, in Python, from the raw tables.
	printf '%s\n' "$NSYS_FIXTURES/nvfuser_report1_h200.sqlite" \
		"$NSYS_FIXTURES/pipit_cloverleaf_cuda_perlmutter.sqlite" >lines
	FAKE_INJECT_LINES="$WORK/lines" "$GPT_TRACE" run -- "$PROBE" exit 0 2>err || fail "exit $?"
	cat >expected <<-EOF
	gpt-trace: wrote $NSYS_FIXTURES/nvfuser_report1_h200.sqlite: 19 kernels, 1 copy (1 B), GPU 0 busy 0.1% of 508.28 ms
	gpt-trace: wrote $NSYS_FIXTURES/pipit_cloverleaf_cuda_perlmutter.sqlite: 1312 kernels, 279 copies (225.1 MB), GPU 0 busy 88.7% of 342.41 ms
	EOF
	expect_file_eq "nsys summaries" expected err
	;;

no-cuda-real)
	real="$(dirname "$GPT_TRACE")/libgpt_inject.so"
	[ -f "$real" ] || skip "libgpt_inject.so is not built ($real); build the gpt_inject target"
	unset GPT_TRACE_INJECT_LIB
	mkdir out
	"$GPT_TRACE" run -o "$WORK/out/t-%p.sqlite" -- sh -c 'echo hi; ls / >/dev/null; exit 4' >stdout 2>err
	expect_eq "exit status" 4 "$?"
	expect_eq "stdout" hi "$(cat stdout)"
	expect_grep "no CUDA line" '^gpt-trace: no trace was written: no process used CUDA$' err
	[ -z "$(ls -A out)" ] || fail "trace files left by processes that never used CUDA: $(ls out)"
	[ -z "$(ls "$WORK" | grep '\.sqlite')" ] || fail "trace files in the cwd: $(ls "$WORK")"
	expect_no_session_left
	;;

*)
	fail "unknown case"
	;;
esac
echo "PASS [$case]"
exit 0
