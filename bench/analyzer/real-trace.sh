#!/bin/bash
# A real trace for the analyzer benchmark, made on the GPU (the device): GPT-2 training
# (tests/gpu/real/programs.py gpt2train, STEPS steps of about 575 kernels and 1,100 API calls each)
# under gpt-trace run, then compressed with xz into OUT in 15 MiB parts, to bring back and time
# with bench/analyzer/run.sh -t:
#   cat OUT/gpt2train.sqlite.xz.part-* | xz -d > /tmp/gpt2train.sqlite
# usage: bench/analyzer/real-trace.sh BINDIR OUT [STEPS]   (default 1800 steps: about 1M kernels)
set -eu
bin=$1 out=$2 steps=${3:-1800}
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
STEPS=$steps "$bin/gpt-trace" run -o "$out/gpt2train.sqlite" -- python3 "$here/tests/gpu/real/programs.py" gpt2train \
	> "$out/run.log" 2>&1
# python3's sqlite3 module: the GPU machine has no sqlite3 command
python3 - "$out/gpt2train.sqlite" >> "$out/run.log" 2>&1 <<'EOF' || true
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"):
    print(table, db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
EOF
ls -l "$out/gpt2train.sqlite" >> "$out/run.log"
xz -T0 -6 -c "$out/gpt2train.sqlite" | split -b 15M - "$out/gpt2train.sqlite.xz.part-"
rm "$out/gpt2train.sqlite"
