#!/usr/bin/env bash
# NVIDIA's own `nsys stats` on our traces, against `gpt-trace stats` on the same traces: both must
# run, and their numbers must agree (kernel instances and total time per kernel, API call counts per
# function, copy and memset counts, times and bytes per kind, NVTX range instances and total time).
# Also checks each trace for what third-party SQL relies on (tests/collector/sql_invariants.py).
# Prints the numbers side by side with PASS/FAIL lines (tests/gpu/nsys_compat.py) and a final
# "N passed, M failed"; exits 1 when a check failed, 2 when it could not run. Run it on the GPU
# machine, where nsys is; see tests/gpu/README.md.
#
# usage: tests/gpu/nsys-compat.sh [-b BUILD] [-n NSYS] [-o OUTDIR] [TRACE|DIR ...]
#   -b BUILD    the build folder holding bin/gpt-trace (default: $BUILD, else build)
#   -n NSYS     the nsys command (default: $NSYS, else the one bundled with Nsight Compute on the
#               H200 machine, /opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys)
#   -o OUTDIR   where the CSV and JSON files and logs go (default: a new folder under
#               ${TMPDIR:-/tmp})
#   TRACE|DIR   traces, or folders searched for *.sqlite (default: tests/fixtures/gpu)
#
# Each trace is copied into OUTDIR first (<label>.sqlite, label: its path below the folder given,
# with / as _), so neither tool touches the original. Per trace OUTDIR then holds
# <label>_<report>.csv (nsys stats --format csv --output OUTDIR/<label>), <label>.nsys.log,
# <label>.gpt.json (gpt-trace stats --format json) and <label>.gpt.log, and traces.tsv lists
# label, trace, nsys exit status, gpt-trace exit status.
set -u -o pipefail

usage() {
	sed -n '/^# usage:/,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
}

die() {
	echo "nsys-compat: $*" >&2
	exit 2
}

REPORTS=cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum

build=${BUILD:-build}
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
out=
while getopts "b:n:o:h" opt; do
	case $opt in
	b) build=$OPTARG ;;
	n) nsys=$OPTARG ;;
	o) out=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -gt 0 ] || set -- "$root/tests/fixtures/gpu"
gpt=$build/bin/gpt-trace
[ -x "$gpt" ] || die "no '$gpt': build first (cmake -S . -B build && cmake --build build -j)"
# NSYS may be a command with arguments (the CPU self-test passes a stand-in): split on spaces.
read -r -a nsys_cmd <<<"$nsys"
command -v "${nsys_cmd[0]}" >/dev/null || die "no nsys at '${nsys_cmd[0]}' (-n NSYS)"
python=${PYTHON:-python3}
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/gpt-nsys-compat.XXXXXX")}
mkdir -p "$out" || die "cannot create '$out'"
rm -f "$out"/*.csv "$out"/*.json "$out"/*.log "$out"/*.sqlite "$out"/traces.tsv

# label<TAB>trace for every trace named or found.
list_traces() {
	local arg f
	for arg; do
		if [ -d "$arg" ]; then
			find "$arg" -name '*.sqlite' -type f | LC_ALL=C sort | while read -r f; do
				printf '%s\t%s\n' "$(echo "${f#"${arg%/}"/}" | sed 's|/|_|g; s|\.sqlite$||')" "$f"
			done
		elif [ -f "$arg" ]; then
			printf '%s\t%s\n' "$(basename "$arg" .sqlite)" "$arg"
		else
			die "no trace '$arg'"
		fi
	done
}

: >"$out/traces.tsv"
ntraces=0
while IFS=$'\t' read -r label trace; do
	copy=$out/$label.sqlite
	cp "$trace" "$copy" || die "cannot copy '$trace'"
	timeout 600 "${nsys_cmd[@]}" stats --report "$REPORTS" --format csv --output "$out/$label" \
		--force-overwrite true "$copy" >"$out/$label.nsys.log" 2>&1
	nsys_rc=$?
	timeout 600 "$gpt" stats --format json -o "$out/$label.gpt.json" "$copy" \
		>"$out/$label.gpt.log" 2>&1
	gpt_rc=$?
	printf '%s\t%s\t%s\t%s\n' "$label" "$trace" "$nsys_rc" "$gpt_rc" >>"$out/traces.tsv"
	ntraces=$((ntraces + 1))
done < <(list_traces "$@")
[ "$ntraces" -gt 0 ] || die "no traces found in $*"
echo "# $ntraces traces, nsys: ${nsys_cmd[*]} ($("${nsys_cmd[@]}" --version 2>/dev/null | head -n 1)), output in $out"
"$python" "$here/nsys_compat.py" "$out"
