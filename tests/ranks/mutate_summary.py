#!/usr/bin/env python3
"""Damaged summaries: summaries travel between machines, so the merge must take any bytes. Mutates a
good summary N times (fields set to extremes, lines dropped, repeated, cut, the file cut), reports each
with a good one, and fails on any exit status but 0 or 2, or any sanitizer report (CI's ASan/UBSan
build runs this too). Mutants that fail are kept in TMP as crash-N.summary.

usage: mutate_summary.py GPT GOOD.summary OTHER.summary TMP [SEED]   (N from the environment, default 150)
"""
import os
import random
import subprocess
import sys

EXTREMES = [b'-1', b'0', b'99999999999999999999', b'9223372036854775807', b'-9223372036854775808', b'x', b'',
            b'4095', b'7', b'100000001', b'16777217']


def main():
    gpt, good, other, tmp = sys.argv[1:5]
    random.seed(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
    lines = open(good, 'rb').read().split(b'\n')
    bad = 0
    for i in range(int(os.environ.get('N', '150'))):
        mutant = list(lines)
        for _ in range(random.randint(1, 4)):
            if not mutant:
                break
            k = random.randrange(len(mutant))
            r = random.random()
            if r < 0.3:
                fields = mutant[k].split(b' ')
                fields[random.randrange(len(fields))] = random.choice(EXTREMES)
                mutant[k] = b' '.join(fields)
            elif r < 0.5:
                del mutant[k]
            elif r < 0.7:
                mutant.insert(k, mutant[random.randrange(len(mutant))])
            elif r < 0.85:
                mutant[k] = mutant[k][:random.randrange(len(mutant[k]) + 1)]
            else:
                mutant = mutant[:k]
        path = os.path.join(tmp, 'mutant.summary')
        open(path, 'wb').write(b'\n'.join(mutant))
        res = subprocess.run([gpt, 'report', '-q', '-f', 'json', other, path], capture_output=True)
        if res.returncode not in (0, 2) or b'Sanitizer' in res.stderr or b'runtime error' in res.stderr:
            bad += 1
            os.rename(path, os.path.join(tmp, 'crash-%d.summary' % i))
            print('FAIL mutant %d: exit %d: %s' % (i, res.returncode, res.stderr[-400:].decode(errors='replace')))
    print('%s   damaged summaries: %d mutants, %d failed' % ('FAIL' if bad else 'ok', int(os.environ.get('N', '150')), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
