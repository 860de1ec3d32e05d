#!/usr/bin/env python3
"""Summarises an ncu per-SASS table (ncu -i R --page source --print-source
sass --csv, gzipped) of gdn_bench --profile=HV/B: per launch the executed
warp instructions, samples and top stall reasons, then the instructions one
launch executes more often than another (run 109 call 2: launches 13 and 14,
the flush forced at cursors 0 and 1).

  python3 bench/results/run109/ncu_summary.py sass_32.csv.gz [13 14]
"""
import collections
import csv
import gzip
import sys


def launches(path):
    """[(kernel name, header, rows)] per launch (ncu lists each twice)."""
    rows = list(csv.reader(gzip.open(path, 'rt')))
    out, i = [], 0
    while i < len(rows):
        if rows[i] and rows[i][0] == 'Kernel Name':
            name, hdr, j, body = rows[i][1], rows[i + 1], i + 2, []
            while j < len(rows) and not (rows[j] and rows[j][0] == 'Kernel Name'):
                if len(rows[j]) == len(hdr):
                    body.append(dict(zip(hdr, rows[j])))
                j += 1
            out.append((name, hdr, body))
            i = j
        else:
            i += 1
    return out[::2]


def count(r, key):
    return int(r[key] or 0)


def main():
    secs = launches(sys.argv[1])
    for k, (name, hdr, body) in enumerate(secs, 1):
        reasons = collections.Counter()
        for r in body:
            for h in hdr:
                if h.startswith('stall_') and '(Not Issued)' not in h:
                    reasons[h[6:]] += count(r, h)
        print(k, name.split('Tile<')[1].split('(rollout')[0][:60], len(body),
              'instr', sum(count(r, '# Samples') for r in body), 'samples',
              sum(count(r, 'Instructions Executed') for r in body),
              'warp-instr', reasons.most_common(6))
    if len(sys.argv) > 3:
        a, b = secs[int(sys.argv[2]) - 1][2], secs[int(sys.argv[3]) - 1][2]
        extra = 0
        for i, (ra, rb) in enumerate(zip(a, b)):
            ea, eb = count(ra, 'Instructions Executed'), count(rb, 'Instructions Executed')
            if ea != eb:
                extra += eb - ea
                print(f"{i:5d} {ea:7d} {eb:7d} s={count(ra, '# Samples'):3d}/"
                      f"{count(rb, '# Samples'):3d} {rb['Source'].strip()[:90]}")
        print('total extra warp-instr', extra)


if __name__ == '__main__':
    main()
