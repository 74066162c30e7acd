#!/bin/bash
# Whether API records come back after an on-demand start (single process, capture_torch.py):
# with the default per-call API selection and with --api all. 2026-11-27: the default gave kernels
# but no API records. usage: ondemand-api.sh OUT
set -u
B=$PWD/.dev/bin; OUT=${1:-/tmp/oda}; mkdir -p $OUT; export GPT_TRACE_CONTROL_DIR=/tmp/ctl-oda
for api in default all; do
	rm -rf $GPT_TRACE_CONTROL_DIR
	$B/gpt-trace run -q -f --start-later --api $api -o $OUT/api-$api.sqlite -- python3 tests/gpu/capture_torch.py --steps 300 --pace 0.01 >/dev/null 2>&1 &
	p=$!
	for i in $(seq 100); do ls $GPT_TRACE_CONTROL_DIR/*.armed >/dev/null 2>&1 && break; sleep 0.2; done
	sleep 1; $B/gpt-trace start all --duration 0.5 >/dev/null; wait $p
	python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); m = dict(db.execute('select name, value from GPT_META'))
print('api=$api', {k: m.get(k) for k in ('kernel_records', 'api_records', 'sync_records', 'capture_records_outside')})" $OUT/api-$api.sqlite
done
