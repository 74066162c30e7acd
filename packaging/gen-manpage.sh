#!/bin/sh
# Writes the gpt-trace(1) man page from the program's own help: the command table of 'gpt-trace
# --help' and each command's 'gpt-trace COMMAND --help', so the page cannot drift from the usage
# text. Run by the build (packaging/CMakeLists.txt) with the gpt-trace it just built.
# Usage: gen-manpage.sh GPT_TRACE OUT.1
set -eu
gpt=$1
out=$2
tmp=$out.tmp

# roff: backslashes doubled, a line starting with '.' or "'" protected by \&.
roff() {
	sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
}

version=$("$gpt" --version | sed -n '1s/^gpt-trace //p')
help=$("$gpt" --help)
commands=$(printf '%s\n' "$help" | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\)  *.*/\1/p')
[ -n "$commands" ] || { echo "gen-manpage.sh: no commands in '$gpt --help'" >&2; exit 1; }

{
	echo '.TH GPT-TRACE 1 "" "gpt-trace '"$(echo "$version" | sed 's/,.*//')"'" "User Commands"'
	echo '.SH NAME'
	echo 'gpt-trace \- record GPU traces of CUDA programs and find their bottlenecks'
	echo '.SH SYNOPSIS'
	echo '.B gpt-trace'
	echo '.I command'
	echo '[options] [args]'
	echo '.br'
	echo '.B gpt-trace run'
	echo '[options] [\-\-]'
	echo '.I program'
	echo '[args...]'
	echo '.SH DESCRIPTION'
	echo 'gpt-trace wraps a CUDA program, writes one SQLite trace per process that uses CUDA (tables'
	echo 'shared with the Nsight Systems SQLite export), and analyzes traces offline: bottleneck'
	echo 'reports ranked by recoverable time, statistics, Perfetto or Chrome timelines, and kernel'
	echo 'timing comparisons with an exit status for CI.'
	echo '.SH COMMANDS'
	printf '%s\n' "$help" | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\)  *\(.*\)/.TP\n.B \1\n\2/p' |
		sed 's/\\/\\e/g'
	for c in $commands; do
		echo ".SH \"GPT-TRACE $(echo "$c" | tr a-z A-Z)\""
		echo '.nf'
		"$gpt" "$c" --help | roff
		echo '.fi'
	done
	echo '.SH "EXIT STATUS"'
	printf '%s\n' "$help" | sed -n 's/^exit status: //p' | roff
	echo '.SH VERSION'
	echo "$version" | roff
	echo '.SH FILES'
	echo '.TP'
	echo '.I ../lib/gpt\-trace/libgpt_inject.so'
	echo 'the library injected into traced programs, found relative to the gpt-trace executable'
	echo '(or beside it, in a build tree); GPT_TRACE_INJECT_LIB names another.'
	echo '.SH "SEE ALSO"'
	echo 'The documentation in share/doc/gpt-trace of the installation (README.md, docs/).'
	echo '.BR nsys (1)'
} >"$tmp"
mv "$tmp" "$out"
