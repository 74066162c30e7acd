# Helpers for the diff/check/baseline shell tests: synthetic traces made from schema/schema.sql,
# and assertions. Sourced; needs SRC (source tree) and BIN (build/bin) in the environment.

set -u
GPT="$BIN/gpt-trace"
# In the sanitizer build a report must not pass for exit status 1 ("regression").
export ASAN_OPTIONS="${ASAN_OPTIONS:-exitcode=86}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-exitcode=86}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpt-diff-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# kernels NAME_ID COUNT MEDIAN_NS JITTER SEED GRID_X BLOCK_X T0: COUNT launches of kernel NAME_ID,
# one every 100 us from T0 on stream 7, durations MEDIAN_NS * (1 + JITTER * u), u uniform in [-1, 1)
# from a hash of the launch index and SEED (deterministic; different seeds give different samples).
kernels() {
	cat <<EOF
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $2 - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,
	globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY,
	blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
SELECT $8 + i * 100000, $8 + i * 100000 + CAST(round($3 * (1 + $4 * (2.0 * (((i + $5 * 7919)
	* 1103515245 + 12345) % 2147483648) / 2147483648.0 - 1))) AS INTEGER), 0, 1, 7, i,
	4242 << 24, $1, $1, 32, $6, 1, 1, $7, 1, 1, 0, 0, 0, 0, i FROM n;
EOF
}

# mktrace OUT SQL...: a trace with our schema, four kernel names, one copy, one NVTX range
# 'train_step' over [1 ms, 11 ms), and the rows of the SQL arguments.
mktrace() {
	local out=$1
	shift
	rm -f "$out"
	{
		cat "$SRC/schema/schema.sql"
		cat <<EOF
INSERT INTO GPT_META VALUES ('schema_version', '1'), ('tool', 'gpt-trace'), ('pid', '4242');
INSERT INTO StringIds VALUES (1, 'gemm_kernel(float const*, float*)'), (2, 'relu_kernel'),
	(3, 'old_kernel'), (4, 'new_kernel');
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId,
	globalPid, bytes, copyKind, srcKind, dstKind) VALUES (100, 2100, 0, 1, 7, 0, 4242 << 24, 1000000, 1, 1, 2);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
	VALUES (1000000, 11000000, 59, 'train_step', (4242 << 24) + 4243, 0);
EOF
		printf '%s\n' "$@"
	} | sqlite3 "$out" || fail "cannot make $out"
}

# The usual pair: gemm 20 us and relu 5 us, 200 launches each, 1.5% jitter; old_kernel 3 us x 50.
# SEED picks the sample; GEMM_NS the gemm median.
standard_trace() {
	local out=$1 seed=$2 gemm_ns=${3:-20000}
	mktrace "$out" "$(kernels 1 200 "$gemm_ns" 0.015 "$seed" 128 256 1000000)" \
		"$(kernels 2 200 5000 0.015 $((seed + 1)) 64 128 1050000)" \
		"$(kernels 3 50 3000 0.01 $((seed + 2)) 1 32 1070000)"
}

# run EXPECTED_RC CMD...: run, keep stdout in out.txt and stderr in err.txt, check the status.
run() {
	local want=$1 rc
	shift
	"$@" >out.txt 2>err.txt
	rc=$?
	if grep -Eq 'Sanitizer|runtime error' err.txt; then
		cat err.txt >&2
		fail "'$*': sanitizer report"
	fi
	if [ "$rc" != "$want" ]; then
		echo "--- stdout" >&2
		cat out.txt >&2
		echo "--- stderr" >&2
		cat err.txt >&2
		fail "'$*' exited $rc, expected $want"
	fi
}

# The stderr of the last run is exactly one gpt-trace error line, matching the regex.
one_error() {
	[ "$(wc -l <err.txt)" = 1 ] || { cat err.txt >&2; fail "expected one line on stderr"; }
	grep -Eq "^gpt-trace: $1" err.txt || fail "stderr '$(cat err.txt)' does not match '$1'"
}

# A usage error: the error line first (matching the regex), then at most the usage line.
usage_error() {
	[ "$(wc -l <err.txt)" -le 2 ] || { cat err.txt >&2; fail "expected at most two lines on stderr"; }
	head -1 err.txt | grep -Eq "^gpt-trace: $1" || fail "stderr '$(cat err.txt)' does not match '$1'"
}

# expect_line REGEX [FILE]: some line of FILE (default out.txt) matches.
expect_line() {
	grep -Eq "$1" "${2:-out.txt}" || { cat "${2:-out.txt}" >&2; fail "no line matches '$1'"; }
}

# count_lines REGEX N [FILE]
count_lines() {
	local n
	n=$(grep -Ec "$1" "${3:-out.txt}")
	[ "$n" = "$2" ] || { cat "${3:-out.txt}" >&2; fail "$n lines match '$1', expected $2"; }
}
