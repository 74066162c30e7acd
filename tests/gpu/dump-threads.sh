#!/bin/bash
# What a process tree that does not end is doing, for hang hunts (tests/gpu/busy/hang-hunt.sh,
# bench/overhead/modes.py and multi_gpu.py): for PID and every descendant, each thread's name,
# state, kernel wait channel and system call, the mapping a futex wait's address lies in, its
# kernel stack; where a thread runs, 1 s of perf samples (when perf is there); and the user-space
# stacks of a process that preloads tests/gpu/busy/stackdump.c's libstackdump.so (sent SIGUSR2,
# read from its $STACKDUMP_DIR). Reads /proc only otherwise; root sees every thread's stack.
# usage: dump-threads.sh PID
set -u
pid=${1:?usage: dump-threads.sh PID}
tmp=$(mktemp -d /tmp/dump-threads.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tree() { echo "$1"; for c in $(cat /proc/$1/task/*/children 2>/dev/null); do tree "$c"; done; }
mapping() { # PID ADDRESS(hex): the mapping of /proc/PID/maps that holds it, and the offset
	python3 - "$1" "$2" <<'PY'
import sys
a = int(sys.argv[2], 16)
for line in open(f"/proc/{sys.argv[1]}/maps"):
    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
    if lo <= a < hi:
        f = line.split()
        print(f"{f[5] if len(f) > 5 else '[anonymous]'}+{a - lo:#x}")
        break
PY
}
for p in $(tree "$pid"); do
	echo "  process $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-120)"
	stacks=$(grep -q libstackdump.so /proc/$p/maps 2>/dev/null &&
		tr '\0' '\n' < /proc/$p/environ | sed -n 's/^STACKDUMP_DIR=//p')
	for t in /proc/$p/task/*; do
		sc=$(cut -d' ' -f1-3 $t/syscall 2>/dev/null)
		state=$(awk '{print $3}' $t/stat 2>/dev/null)
		echo "    thread ${t##*/} $(cat $t/comm 2>/dev/null) state=$state wchan=$(cat $t/wchan 2>/dev/null) syscall=$sc"
		[ "${sc%% *}" = 202 ] && echo "      futex in $(mapping $p "$(echo "$sc" | cut -d' ' -f2)")"
		sed 's/^/      /' $t/stack 2>/dev/null | head -8
		if [ "$state" = R ] && command -v perf >/dev/null; then
			perf record -q -o $tmp/perf.data -t ${t##*/} -- sleep 1 >/dev/null 2>&1
			perf report -q -i $tmp/perf.data --stdio --sort dso,sym 2>/dev/null | grep -v '^$' | head -8 | sed 's/^/      perf /'
		fi
		[ -n "$stacks" ] && python3 -c "import ctypes,sys; ctypes.CDLL(None).syscall(234, int(sys.argv[1]), int(sys.argv[2]), 12)" $p ${t##*/}
	done
	[ -n "$stacks" ] && { sleep 0.5; sed 's/^/    stack /' "$stacks/stacks.$p.txt" 2>/dev/null | head -60; }
done
exit 0
