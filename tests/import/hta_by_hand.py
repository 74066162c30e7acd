#!/usr/bin/env python3
"""HTA's analyses applied by hand to a Kineto trace, beside gpt-trace's report of the same file.

HTA (Holistic Trace Analysis) cannot be installed here; its definitions are re-implemented from its
code (github.com/facebookresearch/HolisticTraceAnalysis at f4d0062, hta/common/trace.py,
hta/analyzers/breakdown_analysis.py, communication_analysis.py, cuda_kernel_analysis.py):

- the trace: each event's start rounded up and its end down to whole µs (trace_parser's
  round_down_time_stamps: end = ts + dur, ts = ceil(ts), end = floor(end), dur = end - ts);
  GPU events launched by a runtime call that starts at or after the last ProfilerStep's start are
  dropped (trace.py _filter_irrelevant_gpu_kernels), when there are at least 2 ProfilerSteps;
- temporal breakdown: over GPU events with a stream, the span from the first start to the last end;
  idle = span - merged busy; compute = merged kernels that are neither NCCL nor memory;
- idle-time breakdown: per stream, each gap before a kernel/copy/memset is host wait when its
  launch call started after the previous one ended, kernel wait when shorter than 30 µs, else other;
- comm/comp overlap: time NCCL and compute kernels run together / NCCL time;
- launch delay: kernel start - (launch call start + its duration), clipped at 0.

Each is computed twice: as HTA does (µs, ceil) and with the same definitions on exact ns, so that the
precision effect shows apart from the definitions. gpt-trace's numbers come from `gpt-trace report
-f json` (all phases summed: the whole GPU span, and its steady state).

usage: hta_by_hand.py GPT_TRACE TRACE.json[.gz]...   (prints a Markdown table)
       hta_by_hand.py --check GPT_TRACE TRACE.json[.gz]...
           HTA's temporal breakdown and comm/comp overlap, its definitions on exact ns over every GPU
           event (no last-step filter: gpt-trace's phases cover the whole GPU span), against the
           report's `by_union` split summed over the phases: each share within 1 point, or exit 1.
"""
import decimal
import gzip
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

GPU_CATS = {'kernel', 'Kernel', 'gpu_memcpy', 'Memcpy', 'gpu_memset', 'Memset'}
LAUNCH_CATS = {'cuda_runtime', 'Runtime', 'cuda_driver'}


def load(path):
    with (gzip.open if path.endswith('.gz') else open)(path, 'rt') as f:
        return json.load(f, parse_float=decimal.Decimal, parse_int=decimal.Decimal)['traceEvents']


def kind(e):
    name = str(e.get('name', ''))
    if 'nccl' in name.lower():
        return 'comm'
    if e['cat'] in ('gpu_memcpy', 'Memcpy', 'gpu_memset', 'Memset') or name.startswith(('Memcpy', 'Memset')):
        return 'memory'
    return 'compute'


def merged(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def busy(intervals):
    return sum(e - s for s, e in merged(intervals))


def overlap(a, b):
    a, b = merged(a), merged(b)
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def hta(events, exact, last_step_filter=True):
    """HTA's numbers in µs (exact: the same definitions on ns, in µs with decimals; last_step_filter:
    HTA's dropping of the kernels launched at or after the last ProfilerStep's start)."""
    def t(ts, dur):
        ts, dur = decimal.Decimal(ts), decimal.Decimal(dur)
        # HTA: end = ts + dur first, then ts = ceil(ts) and end = floor(end)
        if exact:
            return ts, ts + dur
        return decimal.Decimal(math.ceil(ts)), decimal.Decimal(math.floor(ts + dur))
    launches = {}
    steps = []
    gpu = []
    for e in events:
        if e.get('ph') != 'X' or 'ts' not in e:
            continue
        if e.get('cat') in LAUNCH_CATS and 'correlation' in e.get('args', {}):
            launches[e['args']['correlation']] = t(e['ts'], e.get('dur', 0))
        elif e.get('cat') in GPU_CATS and int(e.get('args', {}).get('stream', -1)) != -1:
            gpu.append(e)
        elif str(e.get('name', '')).startswith('ProfilerStep#'):
            steps.append(t(e['ts'], e.get('dur', 0)))
    if len(steps) >= 2 and last_step_filter:
        last = max(s for s, _ in steps)
        gpu = [e for e in gpu if e['args'].get('correlation') in launches and launches[e['args']['correlation']][0] < last]
    rows = []
    for e in gpu:
        s, end = t(e['ts'], e.get('dur', 0))
        rows.append((s, end, kind(e), int(e['args']['stream']), launches.get(e['args'].get('correlation'))))
    if not rows:
        return None
    span = max(r[1] for r in rows) - min(r[0] for r in rows)
    idle = span - busy([(r[0], r[1]) for r in rows])
    compute = busy([(r[0], r[1]) for r in rows if r[2] == 'compute'])
    comm = [(r[0], r[1]) for r in rows if r[2] == 'comm']
    comp = [(r[0], r[1]) for r in rows if r[2] == 'compute']
    cats = {'host wait': 0, 'kernel wait': 0, 'other': 0}
    for stream in {r[3] for r in rows}:
        prev_end = None
        for s, end, _, _, launch in sorted(r for r in rows if r[3] == stream):
            if prev_end is not None:
                gap = s - prev_end
                if launch is not None and launch[0] > prev_end:
                    cats['host wait'] += gap
                elif gap < 30:
                    cats['kernel wait'] += gap
                else:
                    cats['other'] += gap
            prev_end = end
    delays = [max(0, s - l[1]) for s, _, k, _, l in rows if l is not None and k != 'memory']
    return {
        'span': span, 'idle': idle, 'compute': compute, 'non-compute': span - idle - compute,
        'comm': busy(comm), 'memory': busy([(r[0], r[1]) for r in rows if r[2] == 'memory']),
        'overlap': 100 * overlap(comm, comp) / busy(comm) if comm else None,
        'idle by stream': cats, 'launch delay median': statistics.median(delays) if delays else None,
        'launch delay mean': statistics.mean(delays) if delays else None, 'kernels': len(rows),
    }


def report_of(gpt_trace, path):
    """gpt-trace's JSON report of the trace, imported into a temporary file, so that no cache is left
    beside the JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, 'trace.sqlite')
        subprocess.run([gpt_trace, 'import', '-q', path, '-o', trace], check=True)
        rep = json.loads(subprocess.run([gpt_trace, 'report', '-q', '-f', 'json', trace], check=True,
                                        capture_output=True, text=True).stdout)
    return rep


def ours(gpt_trace, path):
    rep = report_of(gpt_trace, path)
    phases = rep['phases'][0]['phases']
    total = {k: sum(p['split'][k] for p in phases) for k in ('compute_ns', 'communication_ns', 'copies_ns', 'idle_ns')}
    kinds = {}
    for p in phases:
        for k, v in p['split']['idle_by_kind_ns'].items():
            kinds[k] = kinds.get(k, 0) + v
    steady = next(p for p in phases if p['name'] == 'steady')
    exposed = next((f for f in rep['findings'] if f['rule'] == 'exposed-communication'), None)
    return total, kinds, steady, exposed


def fmt(v):
    return '-' if v is None else f'{v:,.1f}' if isinstance(v, (float, decimal.Decimal)) else f'{v:,}'


def union_shares(gpt_trace, path):
    """gpt-trace's by_union split over the whole GPU span, in % of it (and the overlap, % of comm)."""
    rep = report_of(gpt_trace, path)
    phases = [p for p in rep['phases'][0]['phases'] if p['name'] != 'start-up']
    u = {k: sum(p['split']['by_union'][k] for p in phases) for k in
         ('compute_ns', 'communication_ns', 'memory_ns', 'idle_ns', 'overlap_ns')}
    span = sum(p['split']['compute_ns'] + p['split']['communication_ns'] + p['split']['copies_ns'] +
               p['split']['idle_ns'] for p in phases)
    return {'compute': 100 * u['compute_ns'] / span, 'comm': 100 * u['communication_ns'] / span,
            'memory': 100 * u['memory_ns'] / span, 'idle': 100 * u['idle_ns'] / span,
            'overlap': 100 * u['overlap_ns'] / u['communication_ns'] if u['communication_ns'] else None}


def check(gpt_trace, paths):
    bad = 0
    print('| trace | compute % HTA / ours | communication % | memory % | idle % | comm/comp overlap % |')
    print('|---|---|---|---|---|---|')
    for path in paths:
        h = hta(load(path), True, last_step_filter=False)
        if h is None:
            continue
        ref = {k: float(100 * h[k] / h['span']) for k in ('compute', 'comm', 'memory', 'idle')}
        ref['overlap'] = float(h['overlap']) if h['overlap'] is not None else None
        got = union_shares(gpt_trace, path)
        cells = []
        for k in ('compute', 'comm', 'memory', 'idle', 'overlap'):
            a, b = ref[k], got[k]
            ok = (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= 1.0)
            bad += not ok
            cells.append(('-' if a is None else f'{a:.1f}') + ' / ' + ('-' if b is None else f'{b:.1f}') +
                         ('' if ok else ' **differs**'))
        print(f'| {path.rsplit("/", 1)[-1]} | ' + ' | '.join(cells) + ' |')
    return 1 if bad else 0


def main():
    if sys.argv[1] == '--check':
        sys.exit(check(sys.argv[2], sys.argv[3:]))
    gpt_trace = sys.argv[1]
    for path in sys.argv[2:]:
        events = load(path)
        a, b = hta(events, False), hta(events, True)
        if a is None:
            print(f'{path}: no GPU events')
            continue
        total, kinds, steady, exposed = ours(gpt_trace, path)
        span_ours = sum(total.values()) / 1000
        print(f'\n### {path.rsplit("/", 1)[-1]}\n')
        print('| measure (µs unless %) | HTA (µs, ceil) | HTA definitions on exact ns | gpt-trace, whole GPU span | gpt-trace, steady state |')
        print('|---|---|---|---|---|')
        print(f'| GPU events counted | {a["kernels"]} | {b["kernels"]} | all | steady iterations |')
        print(f'| span | {fmt(a["span"])} | {fmt(b["span"])} | {fmt(span_ours)} | {fmt(steady["duration_ns"] / 1000)} |')
        print(f'| idle | {fmt(a["idle"])} | {fmt(b["idle"])} | {fmt(total["idle_ns"] / 1000)} | {fmt(steady["split"]["idle_ns"] / 1000)} |')
        print(f'| compute | {fmt(a["compute"])} | {fmt(b["compute"])} | {fmt(total["compute_ns"] / 1000)} | {fmt(steady["split"]["compute_ns"] / 1000)} |')
        print(f'| non-compute (comm + memory) | {fmt(a["non-compute"])} | {fmt(b["non-compute"])} | '
              f'{fmt((total["communication_ns"] + total["copies_ns"]) / 1000)} | '
              f'{fmt((steady["split"]["communication_ns"] + steady["split"]["copies_ns"]) / 1000)} |')
        for cat in ('host wait', 'kernel wait', 'other'):
            print(f'| idle by stream: {cat} | {fmt(a["idle by stream"][cat])} | {fmt(b["idle by stream"][cat])} | | |')
        print('| idle by cause (device idle) | | | ' + ', '.join(f'{k} {v / 1000:,.1f}' for k, v in kinds.items() if v) + ' | ' +
              ', '.join(f'{k} {v / 1000:,.1f}' for k, v in steady['split']['idle_by_kind_ns'].items() if v) + ' |')
        print(f'| comm/comp overlap % | {fmt(a["overlap"])} | {fmt(b["overlap"])} | | '
              f'{"exposed communication " + exposed["message"] if exposed else "-"} |')
        print(f'| launch delay median / mean | {fmt(a["launch delay median"])} / {fmt(a["launch delay mean"])} | '
              f'{fmt(b["launch delay median"])} / {fmt(b["launch delay mean"])} | | |')


if __name__ == '__main__':
    main()
