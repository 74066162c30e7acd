#!/usr/bin/env bash
# Builds gpt-trace twice (warnings as errors; then with AddressSanitizer + UBSan) and runs the whole
# CPU test suite in both. GPU tests run on a GPU machine with tests/gpu/run-samples.sh instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

cmake -S . -B build -DGPT_TRACE_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

cmake -S . -B build-asan -DGPT_TRACE_WERROR=ON -DGPT_TRACE_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	ctest --output-on-failure -j"$jobs")
