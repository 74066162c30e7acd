#!/usr/bin/env bash
# gpt-trace as a user installs it, on a GPU machine (issue 27). Installs the Debian package made by
# `cpack -G DEB` (dpkg -i as root, else unpacked with dpkg -x into a scratch root) or, with
# -m prefix or without dpkg, `cmake --install` into a prefix that is then moved; moves the build
# tree's bin/ out of reach for the whole run; then, from the installed gpt-trace only:
#   - `gpt-trace doctor` as is: exit 0, the installed library, a CUPTI, the driver, GPU lines
#   - a small PyTorch program traced: exit 0, a trace with kernels, report and export read it
#   - `gpt-trace doctor` with CUDA_VISIBLE_DEVICES= : exit 1, says no GPU is visible, with a fix
#   - `gpt-trace doctor --metrics`: exit 0 exactly when the counters are allowed here
#     (RmProfilingAdminOnly: 0 in /proc/driver/nvidia/params, or this user is root)
# Prints the package's control fields and contents, every doctor output, PASS/FAIL per check and
# "N passed, M failed"; exits non-zero when a check failed.
#
# usage: tests/gpu/doctor.sh [-b BUILD | -d DEB] [-w WORKDIR] [-m deb|prefix] [-p PYTHON]
#   -b BUILD    a configured and built build folder (default: $BUILD, else build)
#   -w WORKDIR  install root, traces and logs (default: a new folder under ${TMPDIR:-/tmp})
#   -d DEB      a package made elsewhere (cpack -G DEB on the build machine): no build folder needed
#   -m MODE     deb (default when cpack and dpkg are there) or prefix
#   -p PYTHON   the Python with torch (default: python3)
set -u -o pipefail

build=${BUILD:-build}
work=
mode=
python=python3
deb_given=
while getopts "b:d:w:m:p:h" opt; do
	case $opt in
	d) deb_given=$(realpath "$OPTARG") ;;
	b) build=$OPTARG ;;
	w) work=$OPTARG ;;
	m) mode=$OPTARG ;;
	p) python=$OPTARG ;;
	*) sed -n '/^# usage:/,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 2 ;;
	esac
done
if [ -n "$deb_given" ]; then
	[ -f "$deb_given" ] || { echo "doctor.sh: no package '$deb_given'" >&2; exit 2; }
	mode=deb
	build=
else
	build=$(cd "$build" 2>/dev/null && pwd) || { echo "doctor.sh: no build folder '$build'" >&2; exit 2; }
	[ -x "$build/bin/gpt-trace" ] && [ -e "$build/bin/libgpt_inject.so" ] ||
		{ echo "doctor.sh: build gpt-trace with CUPTI in '$build' first" >&2; exit 2; }
fi
if [ -z "$mode" ]; then
	mode=prefix
	command -v cpack >/dev/null && command -v dpkg-deb >/dev/null && mode=deb
fi
[ -n "$work" ] || work=$(mktemp -d "${TMPDIR:-/tmp}/gpt-trace-doctor.XXXXXX")
mkdir -p "$work" && rm -rf "${work:?}"/*
work=$(cd "$work" && pwd)
cd "$work" || exit 2
passed=0
failed=0

check() {	# check WHAT CONDITION-STATUS DETAIL
	if [ "$2" = 0 ]; then
		echo "PASS $1"
		passed=$((passed + 1))
	else
		echo "FAIL $1 ($3)"
		failed=$((failed + 1))
	fi
}
show() {	# show FILE: a file's lines, indented
	sed 's/^/    /' "$1"
}

# Install.
if [ -n "$deb_given" ]; then
	deb=$deb_given
elif [ "$mode" = deb ]; then
	cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >cpack.log 2>&1
	deb=$(ls "$work"/pkg/gpt-trace_*.deb 2>/dev/null)
	check "cpack -G DEB made a package" "$([ -f "$deb" ]; echo $?)" "see $work/cpack.log"
	[ -f "$deb" ] || { echo "info no package: using a prefix instead"; mode=prefix; }
fi
if [ "$mode" = deb ]; then
	echo "info package: $(basename "$deb")"
	dpkg-deb -I "$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\|Installed-Size\):/    \1:/p'
	dpkg-deb -c "$deb" | awk '{ print "    " $6 }' | grep -v '/docs/.'
	if [ "$(id -u)" = 0 ] && dpkg -i "$deb" >dpkg.log 2>&1; then
		root=/usr
		echo "info installed with dpkg -i (remove with: dpkg -r gpt-trace)"
	else
		dpkg -x "$deb" "$work/root"
		root=$work/root/usr
		echo "info unpacked with dpkg -x into $work/root (not root, or dpkg -i failed: $work/dpkg.log)"
	fi
else
	cmake --install "$build" --prefix "$work/stage" >install.log 2>&1
	mkdir -p moved && mv stage moved/gpt-trace
	root=$work/moved/gpt-trace
	echo "info installed with cmake --install into a prefix, then moved to $root"
fi
gpt=$root/bin/gpt-trace
check "installed gpt-trace at $gpt" "$([ -x "$gpt" ]; echo $?)" "not there"

# The build tree's bin/ out of reach until the end.
if [ -n "$build" ]; then
	mv "$build/bin" "$build/bin.away-doctor" || { echo "doctor.sh: cannot move $build/bin away" >&2; exit 2; }
	trap 'mv "$build/bin.away-doctor" "$build/bin"' EXIT
	PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v "^$build" | paste -sd: -)
fi
unset GPT_TRACE_INJECT_LIB GPT_TRACE_CUPTI_LIB
echo "info $("$gpt" --version)"

# doctor as is.
"$gpt" doctor >doctor.out 2>&1
rc=$?
show doctor.out
check "doctor exits 0 here" "$([ $rc = 0 ]; echo $?)" "exit $rc"
grep -q "^ok    library   $(realpath "$root")/lib/gpt-trace/libgpt_inject.so (../lib/gpt-trace/ from the launcher: an installation)$" doctor.out
check "doctor names the installed library" $? "see above"
grep -q '^ok    CUPTI     .*, API version [0-9]*, from ' doctor.out
check "doctor finds a CUPTI" $? "see above"
grep -q '^ok    driver    [0-9.]*, supports CUDA [0-9.]*$' doctor.out
check "doctor names the driver and its CUDA version" $? "see above"
grep -q '^ok    GPU 0     .* (sm_[0-9]*)$' doctor.out
check "doctor lists GPU 0" $? "see above"
nvidia-smi -L >smi.out 2>/dev/null && check "doctor lists as many GPUs as nvidia-smi -L" \
	"$([ "$(grep -c '^ok    GPU [0-9]' doctor.out)" = "$(grep -c '^GPU [0-9]' smi.out)" ]; echo $?)" \
	"$(grep -c '^GPU [0-9]' smi.out) in nvidia-smi"

# A PyTorch program traced by the installed gpt-trace.
prog='import torch
x = torch.randn(1024, 1024, device="cuda")
for _ in range(20):
    y = torch.relu(x @ x)
torch.cuda.synchronize()
print("torch ok", torch.__version__, torch.cuda.get_device_name(0))'
"$gpt" run -o "$work/torch-%p.sqlite" -- "$python" -c "$prog" >torch.out 2>torch.err
rc=$?
sed 's/^/    /' torch.out torch.err | tail -n 8
check "PyTorch traced by the installed gpt-trace exits 0" "$([ $rc = 0 ]; echo $?)" "exit $rc"
trace=$(ls "$work"/torch-*.sqlite 2>/dev/null | head -n 1)
kernels=$("$python" -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print(db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0],
      db.execute("SELECT value FROM GPT_META WHERE name = ?", ("cupti_library",)).fetchone()[0])' "$trace" 2>&1)
echo "info trace $trace: kernels and CUPTI: $kernels"
check "the trace has kernels" "$([ "${kernels%% *}" -gt 20 ] 2>/dev/null; echo $?)" "$kernels"
"$gpt" report "$trace" >report.out 2>&1
check "report reads it" $? "see $work/report.out"
"$gpt" export "$trace" -o torch.perfetto-trace >export.out 2>&1 && [ -s torch.perfetto-trace ]
check "export writes a timeline" $? "see $work/export.out"

# No GPU visible.
CUDA_VISIBLE_DEVICES= "$gpt" doctor >doctor-novisible.out 2>&1
rc=$?
show doctor-novisible.out
check "doctor with CUDA_VISIBLE_DEVICES= exits 1" "$([ $rc = 1 ]; echo $?)" "exit $rc"
grep -q "^FAIL  GPUs      none visible (.*CUDA_VISIBLE_DEVICES='')$" doctor-novisible.out &&
	grep -q '^                fix: unset CUDA_VISIBLE_DEVICES' doctor-novisible.out
check "doctor says no GPU is visible, and the fix" $? "see above"

# The counters: doctor --metrics exits 0 exactly when they are allowed for this user.
admin_only=$(sed -n 's/^RmProfilingAdminOnly: //p' /proc/driver/nvidia/params 2>/dev/null)
echo "info RmProfilingAdminOnly: ${admin_only:-unknown}, uid $(id -u)"
"$gpt" doctor --metrics >doctor-metrics.out 2>&1
rc=$?
sed -n '/^.... *counters/{p;n;/^ *fix:/p}' doctor-metrics.out | sed 's/^/    /'
if [ "$admin_only" = 0 ] || [ "$(id -u)" = 0 ]; then expected=0; else expected=1; fi
check "doctor --metrics exits $expected (counters allowed: $([ $expected = 0 ] && echo yes || echo no))" \
	"$([ $rc = $expected ]; echo $?)" "exit $rc"
if [ "$(id -u)" = 0 ] && [ "$admin_only" = 1 ] && command -v setpriv >/dev/null; then
	setpriv --bounding-set=-all --inh-caps=-all -- "$gpt" doctor --metrics >doctor-nocaps.out 2>&1
	rc=$?
	sed -n '/^.... *counters/{p;n;/^ *fix:/p}' doctor-nocaps.out | sed 's/^/    /'
	check "doctor --metrics without capabilities exits 1 (counters restricted)" \
		"$([ $rc = 1 ]; echo $?)" "exit $rc"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
