#!/bin/sh
# gpt-trace installed, then moved: `sh install.sh CASE`, registered with ctest by CMakeLists.txt,
# which also sets BUILD (the build folder), SOURCE, FAKE_CUPTI, FAKE_LAUNCH and WORK (a private
# scratch folder, emptied first).
#   prefix  cmake --install into a prefix, which is moved and then copied; each copy traces,
#           reports, exports and diffs; the man page and the bash completion are checked
#   deb     cpack -G DEB: the package's Depends and contents, then dpkg unpacks it into a
#           scratch root (its own dpkg database) and the gpt-trace there traces and reports
# Nothing may come from the build tree: the installed launcher must find its own library.
# Exit 0 pass, 1 fail, 77 skipped (with the reason printed).
set -u
case=${1:?usage: install.sh CASE}

fail() {
	echo "FAIL [$case]: $*" >&2
	for f in out err; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -n 40 "$f" >&2; }
	done
	exit 1
}
skip() {
	echo "SKIP [$case]: $*"
	exit 77
}
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: expected [$2], got [$3]"
}
expect_file() {
	[ -f "$1" ] || fail "not installed: $1"
}

command -v sqlite3 >/dev/null || skip "sqlite3 (the command) is needed"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || fail "cannot make $WORK"
WORK=$(pwd -P)
unset GPT_TRACE_INJECT_LIB GPT_TRACE_CUPTI_LIB LD_PRELOAD CUDA_INJECTION64_PATH
# An ASan build of gpt-trace refuses to start when LD_PRELOAD is set unless told this; harmless otherwise.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
# No gpt-trace of the build tree within reach.
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v "^$BUILD" | paste -sd: -)
export PATH

# trace GPT_TRACE OUT N: N kernels through the stand-in CUPTI, with the library the launcher chose
# (the program takes it from CUDA_INJECTION64_PATH, which the launcher set).
trace() {
	GPT_TRACE_CUPTI_LIB="$FAKE_CUPTI" "$1" run -q -f -o "$2" -- sh -c \
		'exec "$0" "$CUDA_INJECTION64_PATH" "$1" exit "$2"' "$FAKE_LAUNCH" "$FAKE_CUPTI" "$3" \
		>out 2>err || fail "'$1 run' of $3 kernels: exit $?"
	expect_eq "kernels in $2" "$3" "$(sqlite3 -readonly "$2" 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')"
}

# use_tree ROOT LIBDIR: the gpt-trace installed in ROOT traces, reports, exports and diffs, with
# its own library (LIBDIR/libgpt_inject.so), which doctor also names.
use_tree() {
	gpt=$1/bin/gpt-trace
	lib=$2/libgpt_inject.so
	"$gpt" run -q -- sh -c 'echo "$CUDA_INJECTION64_PATH"' >out 2>err || fail "$gpt run: exit $?"
	expect_eq "the library the launcher injects" "$lib" "$(cat out)"
	trace "$gpt" "$WORK/a.sqlite" 30
	trace "$gpt" "$WORK/b.sqlite" 60
	expect_eq "the library in the trace" "$FAKE_CUPTI" \
		"$(sqlite3 -readonly a.sqlite "SELECT value FROM GPT_META WHERE name = 'cupti_library'")"
	"$gpt" report a.sqlite >out 2>err || fail "report: exit $?"
	"$gpt" stats b.sqlite >out 2>err || fail "stats: exit $?"
	grep -q '_Z6kernelv\|kernel' out || fail "stats: no kernel named"
	"$gpt" export a.sqlite -o a.perfetto-trace >out 2>err || fail "export: exit $?"
	[ -s a.perfetto-trace ] || fail "export wrote nothing"
	"$gpt" export -f json a.sqlite -o a.json >out 2>err || fail "export -f json: exit $?"
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' a.json || fail "a.json is not JSON"
	"$gpt" diff a.sqlite b.sqlite >out 2>err
	rc=$?
	[ $rc -le 1 ] || fail "diff: exit $rc"
	"$gpt" doctor >out 2>err
	grep -q "^ok    library   $lib (../lib/gpt-trace/ from the launcher: an installation)$" out ||
		fail "doctor does not name the installed library"
	rm -f a.sqlite b.sqlite a.perfetto-trace a.json
}

# The schema version --version states is the one schema/schema.sql declares.
check_version() {
	schema=$(sed -n '1s/.*schema, version \([0-9]*\).*/\1/p' "$SOURCE/schema/schema.sql")
	"$1" --version >out || fail "--version: exit $?"
	grep -q "^gpt-trace [0-9][0-9.]*\( (git [^)]*)\)\{0,1\}, trace schema $schema (nsys export [0-9.]*)$" out ||
		fail "--version does not say the release, commit and schema $schema"
}

# Every command of the table has its section in the man page; the completion offers commands and
# options read from the program.
check_man_and_completion() {
	root=$1
	gzip -dc "$root/share/man/man1/gpt-trace.1.gz" >man.1 || fail "man page not gzip"
	for c in $("$root/bin/gpt-trace" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\)  *.*/\1/p'); do
		grep -q "^\.SH \"GPT-TRACE $(echo "$c" | tr a-z A-Z)\"$" man.1 || fail "man page: no section for $c"
		grep -q "^usage: gpt-trace $c" man.1 || fail "man page: no usage of $c"
	done
	if command -v man >/dev/null; then
		man -l man.1 >/dev/null 2>err || fail "man cannot render the page"
	fi
	command -v bash >/dev/null || return 0
	bash -c '. "$1/share/bash-completion/completions/gpt-trace"
		t() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpt_trace; echo "${COMPREPLY[*]}"; }
		g=$1/bin/gpt-trace
		[ "$(t "$g" do)" = doctor ] || exit 1
		[ "$(t "$g" run --me)" = --metrics ] || exit 2
		[ "$(t "$g" report --form)" = --format ] || exit 3
		[ "$(t "$g" baseline "")" = save ] || exit 4' bash "$root" || fail "bash completion: case $?"
}

case $case in
prefix)
	cmake --install "$BUILD" --prefix "$WORK/stage" >out 2>err || fail "cmake --install: exit $?"
	for f in bin/gpt-trace lib/gpt-trace/libgpt_inject.so share/doc/gpt-trace/README.md \
		share/doc/gpt-trace/docs/install.md share/man/man1/gpt-trace.1.gz \
		share/bash-completion/completions/gpt-trace; do
		expect_file "stage/$f"
	done
	readelf -d stage/bin/gpt-trace stage/lib/gpt-trace/libgpt_inject.so | grep -q 'RPATH\|RUNPATH' &&
		fail "an installed file carries an RPATH"
	# Moved, then copied: both work, with their own library.
	mkdir -p moved/to && mv stage moved/to/gpt-trace || fail "cannot move the prefix"
	use_tree "$WORK/moved/to/gpt-trace" "$WORK/moved/to/gpt-trace/lib/gpt-trace"
	cp -a moved/to/gpt-trace copy || fail "cannot copy the prefix"
	use_tree "$WORK/copy" "$WORK/copy/lib/gpt-trace"
	check_version copy/bin/gpt-trace
	check_man_and_completion "$WORK/copy"
	;;

deb)
	command -v cpack >/dev/null || skip "cpack is needed"
	command -v dpkg-deb >/dev/null || skip "dpkg is needed"
	command -v dpkg-shlibdeps >/dev/null || skip "dpkg-shlibdeps (dpkg-dev) is needed"
	cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg" >out 2>err || fail "cpack: exit $?"
	deb=$(ls pkg/gpt-trace_*.deb 2>/dev/null)
	[ -f "$deb" ] || fail "no package in $WORK/pkg"
	depends=$(dpkg-deb -f "$deb" Depends)
	echo "$depends" | grep -q 'libsqlite3-0' || fail "Depends lacks libsqlite3-0: $depends"
	echo "$depends" | grep -q 'zlib1g' || fail "Depends lacks zlib1g: $depends"
	echo "$depends" | grep -qi 'cuda\|cupti\|nvidia\|protobuf' && fail "Depends names CUDA or protobuf-c: $depends"
	dpkg-deb -c "$deb" | awk '{ print $6 }' >contents
	for f in usr/bin/gpt-trace usr/lib/gpt-trace/libgpt_inject.so usr/share/man/man1/gpt-trace.1.gz \
		usr/share/bash-completion/completions/gpt-trace usr/share/doc/gpt-trace/README.md; do
		grep -qx "\./$f" contents || fail "not in the package: $f"
	done
	grep -qi 'libcuda\|libcupti\|libnvidia' contents && fail "the package carries CUDA: $(grep -i 'cuda\|cupti' contents)"
	# dpkg installs it into a scratch root with a database of its own (unpacked: the ldconfig of
	# its postinst would run in a chroot that has none).
	mkdir -p root/var/lib/dpkg/info root/var/lib/dpkg/updates && : >root/var/lib/dpkg/status
	dpkg --root="$WORK/root" --force-depends --force-not-root --unpack "$deb" >out 2>err ||
		fail "dpkg --root --unpack: exit $?"
	dpkg --root="$WORK/root" -L gpt-trace | grep -qx /usr/bin/gpt-trace || fail "dpkg does not list /usr/bin/gpt-trace"
	# Every library an installed file needs comes from a package in Depends (or libc6).
	for f in root/usr/bin/gpt-trace root/usr/lib/gpt-trace/libgpt_inject.so; do
		for needed in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			path=$(ldconfig -p | sed -n "s/^[[:space:]]*$needed (libc6,x86-64) => //p" | head -n 1)
			[ -n "$path" ] || continue
			# Merged /usr: a package may have shipped the file under /lib or under /usr/lib.
			real=$(realpath "$path")
			pkg=$(dpkg -S "$path" "$real" "${real#/usr}" 2>/dev/null | head -n 1 | sed 's/[:,].*//')
			[ -n "$pkg" ] || fail "no package gives $needed ($path), which $f needs"
			[ "$pkg" = libc6 ] || echo "$depends" | grep -q "\\b$pkg\\b" ||
				fail "$f needs $needed from $pkg, which Depends lacks: $depends"
			echo "$needed: $pkg" >>needed
		done
	done
	use_tree "$WORK/root/usr" "$WORK/root/usr/lib/gpt-trace"
	check_version root/usr/bin/gpt-trace
	;;

*)
	fail "unknown case"
	;;
esac
echo "PASS [$case]"
exit 0
