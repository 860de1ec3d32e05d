"""Summary of A/B runs of `gdn_bench --replay-only` (bench/ab_on_device.sh).

Reads the logs <variant>_p<pass>.log of a directory, takes their REPLAY lines (per head shape and
batch: the packed step, the ReplaySSM L = 16 cycle and its non-flush and flush steps, µs per call)
and prints, per shape and batch, each variant's mean over its passes, the spread (max - min) of the
cycle, and each mean's change against the first variant named.

usage: python3 bench/ab_summary.py DIR VARIANT [VARIANT ...]
"""
import glob
import os
import re
import statistics
import sys

REPLAY = re.compile(r"^REPLAY HV=(\d+) B=(\d+) packed ([\d.]+) \| replay ([\d.]+) "
                    r"\(([\d.]+) / ([\d.]+)\)")
FIELDS = ("packed", "cycle", "nonflush", "flush")


def parse(text):
    """{(hv, batch): {field: µs}} from one log's REPLAY lines."""
    out = {}
    for line in text.splitlines():
        m = REPLAY.match(line)
        if m:
            values = [float(m.group(i)) for i in range(3, 7)]
            out[(int(m.group(1)), int(m.group(2)))] = dict(zip(FIELDS, values))
    return out


def load(directory, variant):
    """The parsed passes of one variant, in pass order."""
    paths = sorted(glob.glob(os.path.join(directory, f"{variant}_p*.log")))
    passes = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            passes.append(parse(f.read()))
    return passes


def summarize(runs):
    """runs: {variant: [pass, ...]} -> {(hv, batch): {variant: stats}}, where stats holds each
    field's mean, the cycle's spread and the ratio packed / cycle of the means."""
    table = {}
    for variant, passes in runs.items():
        keys = set().union(*passes) if passes else set()
        for key in keys:
            present = [p[key] for p in passes if key in p]
            means = {f: statistics.fmean(p[f] for p in present) for f in FIELDS}
            cycles = [p["cycle"] for p in present]
            table.setdefault(key, {})[variant] = {
                **means,
                "spread": max(cycles) - min(cycles),
                "ratio": means["packed"] / means["cycle"],
                "passes": len(present),
            }
    return table


def change(value, base):
    return 100.0 * (value - base) / base


def format_table(table, variants):
    base = variants[0]
    lines = [f"{'shape':>6} {'B':>5} {'variant':<14} {'packed':>9} {'cycle':>9} {'spread':>7} "
             f"{'nonflush':>9} {'flush':>9} {'ratio':>6}  change vs {base} (cycle / nf / f)"]
    for (hv, batch) in sorted(table, key=lambda k: (-k[0], k[1])):
        row = table[(hv, batch)]
        for v in variants:
            if v not in row:
                continue
            s = row[v]
            line = (f"{'16/' + str(hv):>6} {batch:>5} {v:<14} {s['packed']:9.2f} {s['cycle']:9.2f} "
                    f"{s['spread']:7.2f} {s['nonflush']:9.2f} {s['flush']:9.2f} {s['ratio']:6.3f}")
            if v != base and base in row:
                b = row[base]
                line += (f"  {change(s['cycle'], b['cycle']):+.1f} % / "
                         f"{change(s['nonflush'], b['nonflush']):+.1f} % / "
                         f"{change(s['flush'], b['flush']):+.1f} %")
            lines.append(line)
    return "\n".join(lines)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    directory, variants = argv[1], argv[2:]
    runs = {v: load(directory, v) for v in variants}
    missing = [v for v, p in runs.items() if not p]
    if missing:
        print(f"ab_summary: no logs for {', '.join(missing)} in {directory}", file=sys.stderr)
        return 1
    print(format_table(summarize(runs), variants))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
