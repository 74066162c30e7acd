#!/usr/bin/env bash
# Small crash traces for the CPU tests (tests/analyzer/crash-fixtures.sh): samples/crash.cu at about
# 2,000 launches a second (batches of 20, 10 ms apart) under `gpt-trace run`, dying each way; the
# program's last "launched N" line and the launcher's exit status are kept beside each trace.
# usage: tests/gpu/crash-fixtures.sh BUILD OUTDIR
set -u
b=${1:-build}/bin; out=${2:?usage: crash-fixtures.sh BUILD OUTDIR}
mkdir -p "$out"
: > "$out/crashes.tsv"
for mode in segv-early segv-late abort _exit exception; do
	( ulimit -c 0; exec "$b/gpt-trace" run -f -o "$out/crash-$mode.sqlite" -- "$b/crash" --mode "$mode" \
		--seconds 2 --batch 20 --pause-ms 10 ) > "$out/$mode.out" 2> "$out/$mode.err"
	rc=$?
	printf '%s\t%s\t%s\n' "$mode" "$rc" "$(grep -o 'launched [0-9]*' "$out/$mode.out" | tail -1)" >> "$out/crashes.tsv"
done
# SIGKILL 1.5 s in: the launcher recovers the trace.
"$b/gpt-trace" run -f -o "$out/crash-sigkill.sqlite" -- "$b/crash" --mode sigkill --seconds 60 --batch 20 \
	--pause-ms 10 > "$out/sigkill.out" 2> "$out/sigkill.err" &
launcher=$!
sleep 3
pkill -KILL -f "crash --mode sigkill" ; wait "$launcher"
printf '%s\t%s\t%s\n' sigkill "$?" "$(grep -o 'launched [0-9]*' "$out/sigkill.out" | tail -1)" >> "$out/crashes.tsv"
cat "$out/crashes.tsv"
