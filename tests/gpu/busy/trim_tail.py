"""Keep a trace's last KEEP_MS of GPU work: every row of an event table (one with a start or timestamp
column) that begins before the last kernel's end less KEEP_MS is deleted, then VACUUM; GPT_META
says so (fixture_trimmed_tail). For fixtures of programs without NVTX step ranges (advice.py), so
that the repository stays under the device's 64 MiB working-tree limit.
usage: trim_tail.py TRACE KEEP_MS"""
import sqlite3, sys

from trim_steps import delete_before

db = sqlite3.connect(sys.argv[1])
keep = int(float(sys.argv[2]) * 1e6)
cut = db.execute("select max(end) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0] - keep
delete_before(db, cut)
db.execute("insert or replace into GPT_META values ('fixture_trimmed_tail', ?)",
           ("rows before %d ns deleted: the last %d ms of GPU work kept" % (cut, keep // 1000000),))
db.commit(); db.execute("vacuum"); db.close()
