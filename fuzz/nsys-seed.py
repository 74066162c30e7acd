#!/usr/bin/env python3
"""Cut an nsys export down to the tables the loader reads, a few rows each, as SQL text for fuzz-sql
(first line "-- nsys": the harness then loads no schema of its own). Keeps the first ROWS kernels,
their launch calls and a few other API calls, the first copies, sets, syncs and NVTX events, the
processes and GPUs, and only the StringIds rows that what is kept refers to.
usage: nsys-seed.py EXPORT.sqlite [ROWS] > seed.sql"""
import sqlite3
import sys

TABLES = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
          "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "PROCESSES",
          "TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME", "META_DATA_EXPORT", "EXPORT_META_DATA"]
STRING_COLUMNS = ["demangledName", "shortName", "mangledName", "nameId", "textId", "domainId"]


def literal(v):
    if v is None:
        return "NULL"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, bytes):
        return "X'" + v.hex() + "'"
    return "'" + str(v).replace("'", "''") + "'"


def main():
    db = sqlite3.connect(sys.argv[1])
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    have = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    out = ["-- nsys"]
    kept = {}
    for t in TABLES:
        if t not in have:
            continue
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
        order = "start" if "start" in cols else "rowid"
        if t == "CUPTI_ACTIVITY_KIND_RUNTIME" and "CUPTI_ACTIVITY_KIND_KERNEL" in kept:
            kcols, krows = kept["CUPTI_ACTIVITY_KIND_KERNEL"]
            ids = ",".join(str(r[kcols.index("correlationId")]) for r in krows) or "NULL"
            sel = db.execute(f"SELECT * FROM {t} WHERE correlationId IN ({ids}) UNION "
                             f"SELECT * FROM (SELECT * FROM {t} ORDER BY start LIMIT {rows})").fetchall()
        elif t in ("PROCESSES", "TARGET_INFO_GPU", "META_DATA_EXPORT", "EXPORT_META_DATA",
                   "TARGET_INFO_SESSION_START_TIME"):
            sel = db.execute(f"SELECT * FROM {t} LIMIT 40").fetchall()
        else:
            sel = db.execute(f"SELECT * FROM {t} ORDER BY {order} LIMIT {rows}").fetchall()
        kept[t] = (cols, sel)
        out.append(db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0] + ";")
        for r in sel:
            out.append(f"INSERT INTO {t} VALUES(" + ",".join(literal(v) for v in r) + ");")
    if "StringIds" in have:
        ids = set()
        for cols, sel in kept.values():
            for c in STRING_COLUMNS:
                if c in cols:
                    ids.update(r[cols.index(c)] for r in sel if isinstance(r[cols.index(c)], int))
        out.append(db.execute("SELECT sql FROM sqlite_master WHERE name = 'StringIds'").fetchone()[0] + ";")
        for i in sorted(ids):
            for r in db.execute("SELECT * FROM StringIds WHERE id = ?", (i,)):
                out.append("INSERT INTO StringIds VALUES(" + ",".join(literal(v) for v in r) + ");")
    print("\n".join(out))


main()
