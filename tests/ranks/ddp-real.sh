#!/bin/bash
# The cross-rank report on the real two-GPU DDP traces of tests/fixtures/gpu/ddp (recorded by
# tests/gpu/multirank.sh on 2 H100s; see their README): its checks replayed with -R, and every one
# must pass: the straggler on all slow steps of the slow variants, none on the clean ones (DDP's
# bucket rebuild at the second step is warm-up), the exposed communication.
. "$(dirname "$0")/lib.sh"

out=$(bash "$SRC/tests/gpu/multirank.sh" -b "$BIN/.." -w "$TMP/work" -R "$SRC/tests/fixtures/gpu/ddp" 2>&1)
for want in "slow-overlapped: straggler rank 1 on steps 4, 9, ... within 20% of 50 ms" \
	"slow-overlapped: the straggler finding names rank 1" \
	"slow-exposed: straggler rank 1 on steps 4, 9, ... within 20% of 50 ms" \
	"slow-exposed: the straggler finding names rank 1" \
	"clean-overlapped: no straggler" \
	"clean-exposed: no straggler" \
	"exposed: more exposed transfer time than overlapped" \
	"exposed: the exposed-communication finding"; do
	expect "$want" "PASS $want" "$(grep -F "PASS $want" <<< "$out")"
done
expect "no check fails" "" "$(grep '^FAIL' <<< "$out")"
finish
