#!/usr/bin/env python3
"""Check `gpt-trace import` against the JSON it read: every Kineto event of an imported category is
one row (kernels, copies, memsets, syncs, runtime and driver calls, CPU-op and annotation ranges),
each at exactly the ns its text says (ts and dur parsed with Decimal, not through a double, then
rounded half up to the ns, as the importer does), the ProfilerSteps are NVTX ranges, the devices and
the rank are there. Prints one line per fixture; exits 1 on the first mismatch.

usage: check_import.py GPT_TRACE WORKDIR FIXTURE.json[.gz]...
"""
import collections
import decimal
import gzip
import json
import os
import sqlite3
import subprocess
import sys

TABLES = {
    'kernel': ('CUPTI_ACTIVITY_KIND_KERNEL', {'kernel', 'Kernel'}),
    'memcpy': ('CUPTI_ACTIVITY_KIND_MEMCPY', {'gpu_memcpy', 'Memcpy'}),
    'memset': ('CUPTI_ACTIVITY_KIND_MEMSET', {'gpu_memset', 'Memset'}),
    'sync': ('CUPTI_ACTIVITY_KIND_SYNCHRONIZATION', {'cuda_sync'}),
    'api': ('CUPTI_ACTIVITY_KIND_RUNTIME', {'cuda_runtime', 'Runtime', 'cuda_driver'}),
    'range': ('NVTX_EVENTS', {'cpu_op', 'user_annotation', 'Operator'}),
}
HOST = {'api', 'range'}


def ns(value):
    """µs (a Decimal from the JSON text) to integer ns, rounded half up."""
    return int((decimal.Decimal(value) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def numeric(v):
    if isinstance(v, decimal.Decimal):
        return True
    return isinstance(v, str) and v.lstrip('-').isdigit()


def expected(trace):
    base = int(trace.get('baseTimeNanoseconds', 0))
    rows = collections.defaultdict(list)
    seen_corr = set()
    steps = 0
    for e in trace['traceEvents']:
        if e.get('ph') != 'X' or 'ts' not in e:
            continue
        for kind, (_, cats) in TABLES.items():
            if e.get('cat') not in cats:
                continue
            if kind in HOST and not numeric(e.get('pid')):
                continue
            if kind == 'api':
                corr = e.get('args', {}).get('correlation')
                if corr is not None and corr in seen_corr:
                    continue  # the first call with a correlation id is kept
                seen_corr.add(corr)
            start = base + ns(e['ts'])
            dur = ns(e.get('dur', 0))
            rows[kind].append((start, start + max(dur, 0)))
            if kind == 'range' and str(e.get('name', '')).startswith('ProfilerStep#'):
                steps += 1
    return rows, steps


def check(gpt_trace, work, path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        trace = json.load(f, parse_float=decimal.Decimal, parse_int=decimal.Decimal)
    out = os.path.join(work, os.path.basename(path) + '.sqlite')
    subprocess.run([gpt_trace, 'import', '-q', path, '-o', out], check=True)
    db = sqlite3.connect(out)
    meta = dict(db.execute('SELECT name, value FROM GPT_META'))
    origin = int(meta['time_origin_ns'])
    want, steps = expected(trace)
    got_counts = []
    for kind, (table, _) in TABLES.items():
        got = sorted((s + origin, e + origin) for s, e in db.execute(f'SELECT start, end FROM {table}'))
        if got != sorted(want[kind]):
            w = sorted(want[kind])
            diff = next((i for i, (a, b) in enumerate(zip(got, w)) if a != b), min(len(got), len(w)))
            sys.exit(f'{path}: {table}: {len(got)} rows, JSON has {len(w)}; first difference at #{diff}: '
                     f'{got[diff] if diff < len(got) else None} vs {w[diff] if diff < len(w) else None}')
        got_counts.append(f'{len(got)} {kind}')
    nsteps = db.execute("SELECT count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId "
                        "WHERE s.value LIKE 'ProfilerStep#%'").fetchone()[0]
    if nsteps != steps:
        sys.exit(f'{path}: {nsteps} ProfilerStep ranges, JSON has {steps}')
    # kernels and copies keep their launch's correlation id
    for table in ('CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY'):
        n = db.execute(f'SELECT count(*) FROM {table} WHERE correlationId IS NULL').fetchone()[0]
        if n:
            sys.exit(f'{path}: {table}: {n} rows without a correlation id')
    ndev = db.execute('SELECT count(*) FROM TARGET_INFO_GPU').fetchone()[0]
    if ndev != len(trace.get('deviceProperties', [])):
        sys.exit(f'{path}: {ndev} TARGET_INFO_GPU rows, deviceProperties has {len(trace.get("deviceProperties", []))}')
    rank = trace.get('distributedInfo', {}).get('rank')
    if (None if rank is None else str(rank)) != meta.get('rank'):
        sys.exit(f'{path}: GPT_META rank {meta.get("rank")}, distributedInfo rank {rank}')
    if meta.get('import_source') != path or meta.get('trace_complete') != '1':
        sys.exit(f'{path}: GPT_META import_source/trace_complete wrong: {meta}')
    print(f'{os.path.basename(path)}: {", ".join(got_counts)}, {steps} ProfilerSteps, {ndev} GPUs, rank {rank}: '
          'rows and ns times match the JSON')


def main():
    gpt_trace, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    for path in sys.argv[3:]:
        check(gpt_trace, work, path)


if __name__ == '__main__':
    main()
