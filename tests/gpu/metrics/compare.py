#!/usr/bin/env python3
"""Side by side: what inject/metrics wrote (GPT_KERNEL_METRICS of the probe's SQLite file) and what
Nsight Compute measured on the same kernels of the same binary (ncu --csv --print-units base).
Launches are matched by kernel and by their rank among that kernel's launches.

usage: compare.py PROBE.sqlite NCU.csv [NCU-SOURCE.csv]
Exit status 1 when a load or store sectors-per-request figure differs from ncu's by more than 1%.
"""
import csv
import sqlite3
import sys
from collections import defaultdict

LD_S = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
LD_R = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
ST_S = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
ST_R = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
DUR = "gpu__time_duration.sum"


def number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def short(name):
    """coalesced_copy(const float *, float *, unsigned long) -> coalesced_copy"""
    return name.split("(")[0].split("<")[0].split("::")[-1].strip()


def read_ncu(path):
    """{kernel: [ {metric: value} per launch, in order ]}"""
    launches = {}
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    for row in csv.DictReader(lines):
        ident = row.get("ID")
        name = short(row.get("Kernel Name", ""))
        metric, value = row.get("Metric Name"), number(row.get("Metric Value", ""))
        if ident is None or metric is None:
            continue
        launches.setdefault(int(ident), {"kernel": name})[metric] = value
    by_kernel = defaultdict(list)
    for ident in sorted(launches):
        by_kernel[launches[ident]["kernel"]].append(launches[ident])
    return by_kernel


def read_probe(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT shortName, source, gldSectors, gldRequests, gstSectors, gstRequests, "
        "gldSectorsIdeal, gstSectorsIdeal, idealSource, durationNs, passes "
        "FROM GPT_KERNEL_METRICS ORDER BY rowid").fetchall()
    by_kernel = defaultdict(list)
    for r in rows:
        by_kernel[r[0]].append(dict(zip(
            ["kernel", "source", "lds", "ldr", "sts", "str", "ldi", "sti", "ideal", "dur",
             "passes"], r)))
    lines = db.execute(
        "SELECT shortName, file, line, gldSectors, gldSectorsIdeal, gstSectors, gstSectorsIdeal "
        "FROM GPT_SOURCE_METRICS ORDER BY shortName, line").fetchall()
    return by_kernel, lines


def read_ncu_source(path):
    """{kernel: (memory_l2_theoretical_sectors_global, ..._ideal)} from ncu --page raw --csv
    (one row per launch, one column per metric; the first launch of each kernel is kept)."""
    with open(path, newline="") as f:
        rows = list(csv.reader([l for l in f if l.startswith('"')]))
    if not rows:
        return {}
    head = rows[0]
    col = {name: i for i, name in enumerate(head)}
    need = ("Kernel Name", "memory_l2_theoretical_sectors_global",
            "memory_l2_theoretical_sectors_global_ideal")
    if any(n not in col for n in need):
        return {}
    out = {}
    for r in rows[2:]:
        kernel = short(r[col["Kernel Name"]])
        if kernel and kernel not in out:
            out[kernel] = (number(r[col[need[1]]]), number(r[col[need[2]]]))
    return out


def excess(actual, ideal):
    return 100.0 * (actual - ideal) / actual if actual and ideal is not None else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, width=7, prec=2):
    return f"{v:{width}.{prec}f}" if v is not None else " " * (width - 1) + "-"


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    ours, lines = read_probe(sys.argv[1])
    ncu = read_ncu(sys.argv[2])
    bad = 0
    print(f"{'kernel':16} {'#':>2} {'ours':8} | {'ld s/r ncu':>10} {'ours':>7} | "
          f"{'st s/r ncu':>10} {'ours':>7} | {'ld sectors ncu':>14} {'ours':>10} | "
          f"{'st sectors ncu':>14} {'ours':>10} | {'dur us ncu':>10} {'ours':>7}")
    for kernel in sorted(set(ours) | set(ncu)):
        n_launches = ncu.get(kernel, [])
        o_launches = [r for r in ours.get(kernel, []) if r["source"] == "counters"]
        for i in range(max(len(n_launches), len(o_launches))):
            n = n_launches[i] if i < len(n_launches) else {}
            o = o_launches[i] if i < len(o_launches) else {}
            n_ld, o_ld = ratio(n.get(LD_S), n.get(LD_R)), ratio(o.get("lds"), o.get("ldr"))
            n_st, o_st = ratio(n.get(ST_S), n.get(ST_R)), ratio(o.get("sts"), o.get("str"))
            flag = ""
            for a, b in ((n_ld, o_ld), (n_st, o_st)):
                if a is not None and b is not None and abs(a - b) > 0.01 * max(a, 1e-9):
                    flag = "  <-- differs"
                    bad += 1
            n_dur = n.get(DUR)
            o_dur = o.get("dur")
            print(f"{kernel:16} {i:2} {o.get('source', '-'):8} | {fmt(n_ld, 10)} {fmt(o_ld)} | "
                  f"{fmt(n_st, 10)} {fmt(o_st)} | {fmt(n.get(LD_S), 14, 0)} "
                  f"{fmt(o.get('lds'), 10, 0)} | {fmt(n.get(ST_S), 14, 0)} "
                  f"{fmt(o.get('sts'), 10, 0)} | {fmt(n_dur and n_dur / 1e3, 10, 1)} "
                  f"{fmt(o_dur and o_dur / 1e3, 7, 1)}{flag}")
    print()
    print("ideal sectors per request, ours (SASS), per kernel:")
    for kernel in sorted(ours):
        for r in ours[kernel][:1]:
            src = [x for x in ours[kernel] if x["ideal"] == "sass"]
            if not src:
                continue
            x = src[0]
            print(f"  {kernel:16} ld {fmt(ratio(x['ldi'], x['ldr']))} (actual "
                  f"{fmt(ratio(x['lds'], x['ldr']))})  st {fmt(ratio(x['sti'], x['str']))} "
                  f"(actual {fmt(ratio(x['sts'], x['str']))})  from a '{x['source']}' launch")
    if len(sys.argv) > 3:
        print()
        print("global sectors, loads + stores, ideal vs actual (what UncoalescedGlobalAccess "
              "compares): ncu SourceCounters vs ours (SASS)")
        print(f"  {'kernel':16} {'ncu actual':>12} {'ncu ideal':>12} {'excess %':>9} | "
              f"{'ours actual':>12} {'ours ideal':>12} {'excess %':>9}")
        for kernel, (actual, ideal) in sorted(read_ncu_source(sys.argv[3]).items()):
            mine = [x for x in ours.get(kernel, []) if x["ideal"] == "sass"]
            o_act = o_idl = None
            if mine:
                x = mine[0]
                # The SASS totals of the instrumented launch; counters rows carry them as ideal
                # only, so take the actual sectors from the source lines.
                o_act = sum(l[3] + l[5] for l in lines if l[0] == kernel)
                o_idl = sum(l[4] + l[6] for l in lines if l[0] == kernel)
            flag = ""
            if o_idl is not None and ideal and abs(o_idl - ideal) > 0.01 * ideal:
                flag = "  <-- ideal differs"
                bad += 1
            if o_act is not None and actual and abs(o_act - actual) > 0.01 * actual:
                flag += "  <-- actual differs"
                bad += 1
            print(f"  {kernel:16} {fmt(actual, 12, 0)} {fmt(ideal, 12, 0)} "
                  f"{fmt(excess(actual, ideal), 9, 1)} | {fmt(o_act, 12, 0)} {fmt(o_idl, 12, 0)} "
                  f"{fmt(excess(o_act, o_idl), 9, 1)}{flag}")
    print()
    print("source lines (ours):")
    for kernel, file, line, lds, ldi, sts, sti in lines:
        base = (file or "?").rsplit("/", 1)[-1]
        print(f"  {kernel:16} {base}:{line:<4} ld {lds:>10} (ideal {ldi:>10})  st {sts:>10} "
              f"(ideal {sti:>10})")
    print()
    print("verdict:", "all figures agree with ncu within 1%" if not bad else
          f"{bad} figure(s) differ from ncu by more than 1%")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
