#!/usr/bin/env python3
"""Facts about one gpt-trace trace, as one JSON object, for the GPU smoke test (gpu-smoke.sh).

Counts per table, GPT_META, API call names, NVTX rows, bytes on disk per table and index (SQLite's
dbstat when available), what an index on kernel start would add, and consistency checks: every
kernel starts after the API call that launched it (same clock), timestamps are relative to the
origin.

Usage: trace_facts.py TRACE [--with-start-index]
"""
import json
import os
import shutil
import sqlite3
import sys
import tempfile


def one(db, sql, default=None):
    try:
        row = db.execute(sql).fetchone()
    except sqlite3.Error:
        return default
    return row[0] if row and row[0] is not None else default


def table_bytes(path):
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.Error:
        return None
    finally:
        db.close()
    return {name: size for name, size in rows if size}


def start_index_bytes(path):
    """Bytes an index on CUPTI_ACTIVITY_KIND_KERNEL(start) would add to the file."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "t.sqlite")
        shutil.copyfile(path, copy)
        before = os.path.getsize(copy)
        db = sqlite3.connect(copy)
        db.execute("CREATE INDEX k_start ON CUPTI_ACTIVITY_KIND_KERNEL(start)")
        db.commit()
        db.close()
        return os.path.getsize(copy) - before


def main():
    path = sys.argv[1]
    if not os.path.exists(path):
        print(json.dumps({"path": path, "missing": True}))
        return
    facts = {"path": path, "file_bytes": os.path.getsize(path)}
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    tables = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
              "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "StringIds", "TARGET_INFO_GPU",
              "ThreadNames", "PROCESSES"]
    facts["rows"] = {t: one(db, "SELECT count(*) FROM %s" % t, -1) for t in tables}
    facts["meta"] = dict(db.execute("SELECT name, value FROM GPT_META").fetchall())
    facts["api_names"] = dict(db.execute(
        "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
        "ON s.id = r.nameId GROUP BY 1 ORDER BY 2 DESC LIMIT 30").fetchall())
    facts["kernel_names"] = dict(db.execute(
        "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
        "ON s.id = k.shortName GROUP BY 1 ORDER BY 2 DESC LIMIT 10").fetchall())
    facts["kernel_start_min"] = one(db, "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    facts["kernel_before_launch"] = one(db,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
        "USING (correlationId) WHERE k.start < r.start")
    facts["kernels_with_launch"] = one(db,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
        "USING (correlationId)")
    facts["graph_kernels"] = one(db,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId IS NOT NULL")
    facts["copies"] = db.execute(
        "SELECT copyKind, srcKind, dstKind, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY").fetchall()[:10]
    facts["syncs"] = db.execute(
        "SELECT syncType, count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION GROUP BY 1").fetchall()
    facts["nvtx"] = db.execute(
        "SELECT eventType, coalesce(n.text, s.value), domainId, end IS NULL FROM NVTX_EVENTS n "
        "LEFT JOIN StringIds s ON s.id = n.textId ORDER BY start LIMIT 20").fetchall()
    facts["gpu"] = db.execute(
        "SELECT name, smCount, totalMemory, memoryBandwidth, clockRate, computeMajor, "
        "computeMinor, uuid FROM TARGET_INFO_GPU").fetchall()
    facts["indexes"] = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()]
    db.close()
    facts["bytes"] = table_bytes(path)
    kernels = facts["rows"]["CUPTI_ACTIVITY_KIND_KERNEL"]
    if kernels > 0:
        facts["file_bytes_per_kernel"] = round(facts["file_bytes"] / kernels, 1)
        if facts["bytes"]:
            b = facts["bytes"]
            launch = b.get("CUPTI_ACTIVITY_KIND_KERNEL", 0) + b.get("CUPTI_ACTIVITY_KIND_RUNTIME", 0)
            facts["launch_bytes_per_kernel"] = round(launch / kernels, 1)
        if "--with-start-index" in sys.argv:
            facts["start_index_bytes_per_kernel"] = round(start_index_bytes(path) / kernels, 1)
    print(json.dumps(facts, default=str))


main()
