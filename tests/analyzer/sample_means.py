"""Time-weighted means of a trace's GPU_METRICS rows, read with SQL alone, for the tests that hold
the HTML chart (html-util.py) and stats' per-GPU means (gpu-metrics.sh) to the trace: each sample
lasts to the next one's start, or one median period after a gap over 3 periods; time between
samples counts 0 (the recorder stores no idle sample)."""


def samples(db, device, names):
    """[(start, end, value)] of device's samples, value the named metrics summed (0 where absent),
    and the median period."""
    rows = db.execute(
        "WITH s AS (SELECT g.timestamp AS t, SUM(CASE WHEN i.metricName IN (%s) THEN g.value ELSE 0 END) AS v "
        "FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS i ON i.metricId = g.metricId AND i.typeId = g.typeId "
        "WHERE (g.typeId & 255) = ? GROUP BY g.timestamp), "
        "e AS (SELECT t, v, LEAD(t) OVER (ORDER BY t) AS next FROM s) SELECT t, v, next FROM e ORDER BY t"
        % ",".join("?" * len(names)), (*names, device)).fetchall()
    gaps = sorted(r[2] - r[0] for r in rows if r[2] is not None)
    median = gaps[(len(gaps) - 1) // 2]
    return [(t, nxt if nxt is not None and nxt - t <= 3 * median else t + median, v)
            for t, v, nxt in rows], median


def mean(db, device, names, lo, hi):
    """The time-weighted mean of the named metrics (summed) over [lo, hi), and the median period."""
    rows, median = samples(db, device, names)
    return sum(v * max(0, min(end, hi) - max(t, lo)) for t, end, v in rows) / (hi - lo), median
