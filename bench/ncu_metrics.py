"""Per-launch table of an `ncu --csv --metrics ...` log of `gdn_bench --profile=HV/B`.

ncu prints one CSV row per (launch, metric) with the columns "ID", "Kernel Name", ...,
"Metric Name", "Metric Unit", "Metric Value", after any lines of its own and of the program
(skipped here). This prints one line per launch: its duration in µs, DRAM bytes read and
written in MB and the L2 sector hit rate, labelled by the launch order of
`gdn_bench --profile` (bench/gdn_bench_modes.h: ProfileLaunches).

usage: python3 bench/ncu_metrics.py LOG [LOG ...]
"""
import csv
import io
import sys

# gdn_bench --profile's 14 decode launches, in order.
PROFILE_LAUNCHES = (
    "packed", "packed",
    "non-flush c0", "non-flush c1", "non-flush c7", "flush c15",
    "non-flush c0", "non-flush c1", "non-flush c7", "flush c15",
    "fused bv64 c7", "fused bv64 flush c15",
    "forced flush c0", "forced flush c1",
)
# ncu's unit names differ between versions: run 119's (CUDA 13) prints "ns" and
# "byte", older ones "nsecond" and "Mbyte".
TIME_SCALE = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6,
              "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
BYTE_SCALE = {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3,
              "KB": 1e-3, "MB": 1.0, "GB": 1e3}
COLUMNS = (
    ("gpu__time_duration.sum", "us", TIME_SCALE),
    ("dram__bytes_read.sum", "read MB", BYTE_SCALE),
    ("dram__bytes_write.sum", "write MB", BYTE_SCALE),
    ("lts__t_sector_hit_rate.pct", "L2 hit %", None),
)


def parse(text):
    """{launch ID: {metric name: value in the table's unit}} from ncu's CSV rows."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return {}
    out = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        try:
            launch = int(row["ID"])
            value = float(row["Metric Value"].replace(",", ""))
        except (KeyError, TypeError, ValueError):
            continue
        name, unit = row.get("Metric Name", ""), row.get("Metric Unit", "")
        for metric, _, scale in COLUMNS:
            if name == metric:
                if scale is not None:
                    if unit not in scale:
                        continue
                    value *= scale[unit]
                out.setdefault(launch, {})[name] = value
    return out


def table(launches):
    """The printed lines, one per launch in ID order."""
    head = f"{'launch':>6} {'what':<22}" + "".join(f"{c[1]:>11}" for c in COLUMNS)
    lines = [head]
    for k, launch in enumerate(sorted(launches)):
        what = PROFILE_LAUNCHES[k] if k < len(PROFILE_LAUNCHES) else "?"
        cells = "".join(
            f"{launches[launch][c[0]]:>11.2f}" if c[0] in launches[launch] else f"{'-':>11}"
            for c in COLUMNS)
        lines.append(f"{launch:>6} {what:<22}{cells}")
    return lines


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    for path in argv[1:]:
        with open(path, encoding="utf-8", errors="replace") as f:
            launches = parse(f.read())
        print(f"== {path}")
        if not launches:
            print("no ncu metric rows")
            continue
        print("\n".join(table(launches)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
