"""Each column of a pm_probe samples CSV: its samples, how many hold a number and how many of those
are above 0, their total, mean and peak. usage: columns.py CSV [SUBSTRING...] (only the columns
whose names hold one of the substrings, when given); used by sets.sh and nsys-sets.sh."""
import csv
import math
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
want = sys.argv[2:]
for col in rows[0].keys() if rows else []:
    if want and not any(w in col for w in want):
        continue
    vals = []
    for r in rows:
        try:
            v = float(r[col])
        except ValueError:
            continue
        if not math.isnan(v):
            vals.append(v)
    if not vals:
        print(f"   {col}: {len(rows)} samples, no numbers")
        continue
    print(f"   {col}: {len(rows)} samples, {len(vals)} numbers, {sum(1 for v in vals if v > 0)} > 0, "
          f"total {sum(vals):.4g}, mean {sum(vals) / len(vals):.4g}, peak {max(vals):.4g}")
