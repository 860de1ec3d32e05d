"""Summary of A/B runs of `gdn_bench --replay-only` or `--prefill` (bench/ab_on_device.sh).

Reads the logs <variant>_p<pass>.log of a directory. From REPLAY lines (per head shape and batch:
the packed step, the ReplaySSM L = 16 cycle and its non-flush and flush steps, µs per call) and
FLAGS lines (the same with force-flush flags passed, shown as batch "B+flags") it prints, per shape
and batch, each variant's mean over its passes, the spread (max - min) of the cycle, and each mean's
change against the first variant named. From prefill lines (per head shape,
batch and route: µs per layer) it prints the same for the prefill.

usage: python3 bench/ab_summary.py DIR VARIANT [VARIANT ...]
"""
import glob
import os
import re
import statistics
import sys

REPLAY = re.compile(r"^(REPLAY|FLAGS) HV=(\d+) B=(\d+) packed ([\d.]+) \| replay ([\d.]+) "
                    r"\(([\d.]+) / ([\d.]+)\)")
TAGS = {"REPLAY": "", "FLAGS": "+flags"}
FIELDS = ("packed", "cycle", "nonflush", "flush")
PREFILL = re.compile(r"^prefill HV=(\d+) seqs=(\d+) len=(\d+) (.+?): ([\d.]+) us per layer")


def parse(text):
    """{(hv, batch, tag): {field: µs}} from one log's REPLAY ("") and FLAGS ("+flags") lines."""
    out = {}
    for line in text.splitlines():
        m = REPLAY.match(line)
        if m:
            values = [float(m.group(i)) for i in range(4, 8)]
            key = (int(m.group(2)), int(m.group(3)), TAGS[m.group(1)])
            out[key] = dict(zip(FIELDS, values))
    return out


def parse_prefill(text):
    """{(hv, seqs, len, route): µs per layer} from one log's prefill lines."""
    out = {}
    for line in text.splitlines():
        m = PREFILL.match(line)
        if m:
            out[(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4))] = float(m.group(5))
    return out


def load(directory, variant, parser=parse):
    """The parsed passes of one variant, in pass order."""
    paths = sorted(glob.glob(os.path.join(directory, f"{variant}_p*.log")))
    passes = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            passes.append(parser(f.read()))
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


def summarize_prefill(runs):
    """runs: {variant: [pass, ...]} of parse_prefill -> {key: {variant: stats}}: the mean µs per
    layer, its spread and the number of passes."""
    table = {}
    for variant, passes in runs.items():
        for key in set().union(*passes) if passes else set():
            values = [p[key] for p in passes if key in p]
            table.setdefault(key, {})[variant] = {
                "us": statistics.fmean(values),
                "spread": max(values) - min(values),
                "passes": len(values),
            }
    return table


def change(value, base):
    return 100.0 * (value - base) / base


def format_rows(header, table, variants, order, cells, changes):
    """The header, then a line per key (sorted by `order`) and variant present: cells(key, variant,
    stats), and for a variant other than the first named, changes(stats, the first's stats)."""
    base = variants[0]
    lines = [header]
    for key in sorted(table, key=order):
        row = table[key]
        for v in variants:
            if v not in row:
                continue
            line = cells(key, v, row[v])
            if v != base and base in row:
                line += changes(row[v], row[base])
            lines.append(line)
    return "\n".join(lines)


def format_table(table, variants):
    header = (f"{'shape':>6} {'B':>7} {'variant':<14} {'packed':>9} {'cycle':>9} {'spread':>7} "
              f"{'nonflush':>9} {'flush':>9} {'ratio':>6}  change vs {variants[0]} (cycle / nf / f)")

    def cells(key, v, s):
        hv, batch, tag = key
        return (f"{'16/' + str(hv):>6} {str(batch) + tag:>7} {v:<14} {s['packed']:9.2f} "
                f"{s['cycle']:9.2f} {s['spread']:7.2f} {s['nonflush']:9.2f} {s['flush']:9.2f} "
                f"{s['ratio']:6.3f}")

    def changes(s, b):
        return "  " + " / ".join(f"{change(s[f], b[f]):+.1f} %"
                                 for f in ("cycle", "nonflush", "flush"))

    return format_rows(header, table, variants, lambda k: (-k[0], k[1], k[2]), cells, changes)


def format_prefill_table(table, variants):
    header = (f"{'shape':>6} {'seqs':>5} {'len':>5} {'route':<12} {'variant':<14} {'us':>9} "
              f"{'spread':>7}  change vs {variants[0]}")

    def cells(key, v, s):
        hv, seqs, length, route = key
        return (f"{'16/' + str(hv):>6} {seqs:>5} {length:>5} {route:<12} {v:<14} "
                f"{s['us']:9.1f} {s['spread']:7.1f}")

    def changes(s, b):
        return f"  {change(s['us'], b['us']):+.1f} %"

    return format_rows(header, table, variants, lambda k: (-k[0], k[1], k[3]), cells, changes)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    directory, variants = argv[1], argv[2:]
    runs = {v: load(directory, v) for v in variants}
    missing = [v for v in variants if not glob.glob(os.path.join(directory, f"{v}_p*.log"))]
    if missing:
        print(f"ab_summary: no logs for {', '.join(missing)} in {directory}", file=sys.stderr)
        return 1
    prefill = {v: load(directory, v, parse_prefill) for v in variants}
    tables = []
    if any(any(p) for p in runs.values()):
        tables.append(format_table(summarize(runs), variants))
    if any(any(p) for p in prefill.values()):
        tables.append(format_prefill_table(summarize_prefill(prefill), variants))
    if not tables:
        print(f"ab_summary: no REPLAY or prefill lines in the logs of {directory}", file=sys.stderr)
        return 1
    print("\n\n".join(tables))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
