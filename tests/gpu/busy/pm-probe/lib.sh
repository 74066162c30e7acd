# Shared by sets.sh and nsys-sets.sh, sourced with OUT set: pm_probe built into $W, and run_set.
# Each set runs in a process of its own (a refused configuration is not trusted to leave CUPTI
# whole).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=$(mktemp -d /tmp/pmsets.XXXXXX)
mkdir -p "$OUT"
T=TriageCompute; P=avg.pct_of_peak_sustained_elapsed

# build_probe LOG: pm_probe into $W, or the compiler's output into LOG and exit 1
build_probe() {
	nvcc -O2 -arch=sm_90 -o "$W/pm_probe" "$here/pm_probe.cu" -lcupti -lcuda >"$W/build.txt" 2>&1 ||
		{ cat "$W/build.txt" >"$1"; exit 1; }
}

# run_set NAME LIST [SUBSTRING...]: the set's pass count or refusal, then its columns (columns.py)
run_set() {
	local name=$1 list=$2 rc
	shift 2
	timeout 90 "$W/pm_probe" "$list" 100000 mono "$W/$name" >"$W/$name.out" 2>&1
	rc=$?
	echo "== $name rc=$rc: $(grep -h -E "^(set:|SetConfig|REFUSED|FAIL|not one|samples |peer)" "$W/$name.out" | tr '\n' ';')"
	[ -s "$W/$name-samples.csv" ] && python3 "$here/columns.py" "$W/$name-samples.csv" "$@"
	return 0
}
