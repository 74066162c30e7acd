"""Keep a trace's GPU metrics only around its steps (NVTX 'step' ranges, else the last second of
kernels), so that fixtures stay small. usage: trim.py TRACE [MARGIN_MS]"""
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
margin = int(float(sys.argv[2]) * 1e6) if len(sys.argv) > 2 else 20_000_000
lo = hi = None
try:
    lo, hi = db.execute("select min(start), max(end) from NVTX_EVENTS where text = 'step'").fetchone()
except sqlite3.Error:
    pass
if lo is None:
    hi = db.execute("select max(end) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0] or 0
    lo = hi - 1_000_000_000
lo -= margin; hi += margin
db.execute("delete from GPU_METRICS where timestamp < ? or timestamp > ?", (lo, hi))
db.execute("delete from GPT_GPU_METRICS where start < ? or start > ?", (lo, hi))
db.execute("insert or replace into GPT_META values ('fixture_trimmed', ?)",
           (f"GPU_METRICS rows kept from {lo} to {hi} ns (steps +- {margin // 1_000_000} ms)",))
db.commit(); db.execute("vacuum"); db.close()
