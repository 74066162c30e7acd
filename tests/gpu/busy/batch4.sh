#!/bin/bash
# Device batch 4 of the GPU-metrics work (issue 23): usage batch4.sh OUT, from the repository root
# with the binaries in .dev/bin. First which sampler end aborts (stop-modes.sh); then, if the
# default end no longer aborts on membw, the checks and the overhead table of gpu-metrics.sh.
OUT=${1:-/tmp/batch4}; mkdir -p $OUT
bash tests/gpu/busy/stop-modes.sh .dev/bin $OUT
if grep -E "^full +all +membw" $OUT/stop-modes.txt | grep -qv "rc=0 .*complete=1"; then
	echo "the default end still fails: gpu-metrics.sh not run" | tee $OUT/log.txt
	exit 0
fi
mkdir -p /tmp/b4/bin; cp .dev/bin/* /tmp/b4/bin/
REPS="1 2" timeout 420 bash tests/gpu/busy/gpu-metrics.sh /tmp/b4 /tmp/b4/gm
cp /tmp/b4/gm/log.txt /tmp/b4/gm/classes.txt $OUT/
tar -C /tmp/b4/gm -czf $OUT/gm-traces.tgz $(cd /tmp/b4/gm && ls *.sqlite)
tail -5 $OUT/log.txt; cat $OUT/classes.txt | head -60
