"""Keep a fixture's last KEEP NVTX 'step' ranges: every row of an event table (one with a start or
timestamp column) that begins before the first kept step, less MARGIN_MS, is deleted, and GPT_META
says so (fixture_trimmed_steps). For traces whose steady state is all a test reads, so that the
repository stays well under the device's 64 MiB working-tree limit.
usage: trim_steps.py TRACE KEEP [MARGIN_MS]"""
import sqlite3, sys


def delete_before(db, cut):
    """Delete every row of an event table (one with a start or timestamp column) before cut."""
    for (t,) in db.execute("select name from sqlite_master where type = 'table'").fetchall():
        cols = {r[1] for r in db.execute('select * from pragma_table_info(?)', (t,))}
        col = 'start' if 'start' in cols else 'timestamp' if 'timestamp' in cols else None
        if col and t != 'GPT_META':
            db.execute('delete from "%s" where "%s" < ?' % (t, col), (cut,))


if __name__ == "__main__":
    db = sqlite3.connect(sys.argv[1])
    keep = int(sys.argv[2])
    margin = int(float(sys.argv[3]) * 1e6) if len(sys.argv) > 3 else 2_000_000
    starts = [r[0] for r in db.execute("select start from NVTX_EVENTS where text = 'step' order by start")]
    if len(starts) <= keep:
        sys.exit("trim_steps: only %d steps" % len(starts))
    cut = starts[-keep] - margin
    delete_before(db, cut)
    db.execute("insert or replace into GPT_META values ('fixture_trimmed_steps', ?)",
               ("rows before %d ns deleted: the last %d of %d steps kept, from %d ms before the first" %
                (cut, keep, len(starts), margin // 1_000_000),))
    db.commit(); db.execute("vacuum"); db.close()
