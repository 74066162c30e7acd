#!/usr/bin/env bash
# The main job. With a GPU: build, trace a bundled sample under `gpt-trace run` and print its report.
# Without one: build and print the report of a bundled trace recorded on an H200.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && [ -x build/bin/idle_gaps ]; then
	out=$(mktemp -d)
	build/bin/gpt-trace run -o "$out/idle_gaps.sqlite" -- build/bin/idle_gaps
	build/bin/gpt-trace report "$out/idle_gaps.sqlite"
else
	echo "no GPU here: reporting on a trace recorded on an H200 (tests/fixtures/gpu/idle_gaps.sqlite)"
	build/bin/gpt-trace report tests/fixtures/gpu/idle_gaps.sqlite
fi
