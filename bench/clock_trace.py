"""The GPU's clocks and power during each timing of a gdn_bench sweep.

bench/run_gdn_on_device.sh samples nvidia-smi every 100 ms while gdn_bench runs (smi.csv: a
"# utc_offset +HHMM" line, then "timestamp, SM MHz, memory MHz, W, °C, event reasons" rows); every
gdn_bench JSON record carries the Unix time its timing ended (t_unix), so a timing's samples are
those after the previous record and up to its own. This prints, per head shape and batch, each
timing of the auto configurations (the five behind P.auto and R.auto) with the median SM clock, the
highest power and the clock event reasons of its samples: whether a slow timing coincided with a
lower clock (the H200's ReplaySSM timings spread by up to 23 % in runs 76, 79 and 85, its packed
timings by 0.3 %).

bench/ab_on_device.sh samples the same during its passes and writes each pass's start and end
(passes.txt: "pass build start end" in Unix seconds); with --passes this prints each pass's
samples instead.

The JSON may be gzipped (a name ending in .gz), as the runs' JSON files under bench/results are.

usage: python3 bench/clock_trace.py GDN_BENCH_JSON[.gz] SMI_CSV | --passes PASSES_TXT SMI_CSV
"""
import datetime
import gzip
import json
import statistics
import sys

# nvidia-smi's clocks_event_reasons bits (nvml.h, nvmlClocksEventReason*).
REASONS = {
    0x1: "idle",
    0x2: "app-clocks",
    0x4: "sw-power-cap",
    0x8: "hw-slowdown",
    0x10: "sync-boost",
    0x20: "sw-thermal",
    0x40: "hw-thermal",
    0x80: "hw-power-brake",
    0x100: "display-clocks",
}


def reason_names(mask):
    """The names of the set bits of a clock event reasons mask ("none" for 0)."""
    names = [name for bit, name in sorted(REASONS.items()) if mask & bit]
    rest = mask & ~sum(REASONS)
    if rest:
        names.append(hex(rest))
    return ",".join(names) or "none"


def number(field):
    """A sample's numeric field; None for "[N/A]" and the like."""
    try:
        return float(field)
    except ValueError:
        return None


def parse_samples(text):
    """[(unix seconds, sm MHz, mem MHz, W, °C, reasons mask)] from smi.csv's text."""
    offset = datetime.timedelta(0)
    samples = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("# utc_offset"):
            z = line.split()[-1]
            sign = -1 if z.startswith("-") else 1
            offset = sign * datetime.timedelta(hours=int(z[1:3]), minutes=int(z[3:5]))
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 6 or line.startswith("#"):
            continue
        try:
            local = datetime.datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f")
        except ValueError:
            continue
        t = (local - offset).replace(tzinfo=datetime.timezone.utc).timestamp()
        try:
            mask = int(fields[5], 16)
        except ValueError:
            mask = 0
        samples.append((t, number(fields[1]), number(fields[2]), number(fields[3]),
                        number(fields[4]), mask))
    return samples


def reasons_of(samples):
    """The OR of the samples' clock event reasons."""
    mask = 0
    for s in samples:
        mask |= s[5]
    return mask


def window_stats(samples, start, end):
    """Median and lowest SM clock, highest power and OR of the reasons of the samples in
    (start, end]; None without samples."""
    inside = [s for s in samples if start < s[0] <= end]
    clocks = [s[1] for s in inside if s[1] is not None]
    if not clocks:
        return None
    powers = [s[3] for s in inside if s[3] is not None]
    return {"n": len(inside), "sm_median": statistics.median(clocks), "sm_min": min(clocks),
            "power_max": max(powers) if powers else None, "reasons": reasons_of(inside)}


def power_text(st):
    """A window's highest power, "? W" without readings."""
    return f"{st['power_max']:.0f} W" if st["power_max"] is not None else "? W"


def label(record):
    """"packed" or "replay" for the timings behind P.auto and R.auto, else None."""
    if record.get("variant") != "auto" or record.get("linear_slots") or record.get("sorted_slots"):
        return None
    if record.get("overlap") != "auto" or record.get("policy", 0) != 0:
        return None
    if record.get("kind") == "packed":
        return "packed"
    if record.get("kind") == "replay_fp32" and record.get("coef_route", 0) == 0:
        return "replay"
    return None


def trace(records, samples):
    """Per (hv, batch): [(label, µs, stats)] for the auto timings, in time order."""
    out = {}
    timed = sorted((r for r in records if "t_unix" in r), key=lambda r: r["t_unix"])
    previous = None
    for r in timed:
        start = previous if previous is not None else r["t_unix"] - 1.0
        previous = r["t_unix"]
        what = label(r)
        if what is None:
            continue
        us = r["us"] if what == "packed" else r["cycle_us"]
        out.setdefault((r["hv"], r["batch"]), []).append(
            (what, us, window_stats(samples, start, r["t_unix"])))
    return out


def format_trace(traced, samples):
    """The report's lines."""
    clocks = [s[1] for s in samples if s[1] is not None]
    lines = []
    if clocks:
        top = max(clocks)
        low = sum(1 for c in clocks if c < 0.97 * top)
        lines.append(f"{len(samples)} samples: SM clock max {top:.0f} MHz, median "
                     f"{statistics.median(clocks):.0f}, {100.0 * low / len(clocks):.1f} % of "
                     f"samples under 97 % of the max; reasons seen: "
                     f"{reason_names(reasons_of(samples))}")
    for (hv, batch), timings in sorted(traced.items(), key=lambda kv: (-kv[0][0], kv[0][1])):
        parts = []
        for what, us, st in timings:
            if st is None:
                parts.append(f"{what[0]} {us:.2f} (no samples)")
            else:
                parts.append(f"{what[0]} {us:.2f} ({st['sm_median']:.0f}/{st['sm_min']:.0f} MHz, "
                             f"{power_text(st)}, {reason_names(st['reasons'])})")
        lines.append(f"16/{hv} B={batch}: " + "; ".join(parts))
    return lines


def parse_passes(text):
    """[(pass, build, start, end)] from passes.txt's text (malformed lines skipped)."""
    out = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) != 4:
            continue
        try:
            out.append((int(fields[0]), fields[1], float(fields[2]), float(fields[3])))
        except ValueError:
            continue
    return out


def format_passes(passes, samples):
    """One line per pass: its build and its samples' SM clock, power and reasons."""
    lines = []
    for index, build, start, end in passes:
        st = window_stats(samples, start, end)
        if st is None:
            lines.append(f"pass {index}: {build} (no samples)")
            continue
        lines.append(f"pass {index}: {build} SM {st['sm_median']:.0f} MHz median, "
                     f"{st['sm_min']:.0f} lowest; {power_text(st)} highest; "
                     f"{reason_names(st['reasons'])} ({st['n']} samples)")
    return lines


def open_text(path):
    """A text file, read through gzip when its name ends in .gz."""
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def main(argv):
    passes_mode = len(argv) == 4 and argv[1] == "--passes"
    if len(argv) != 3 and not passes_mode:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    if passes_mode:
        argv = argv[1:]
    with open(argv[2], encoding="utf-8") as f:
        samples = parse_samples(f.read())
    if not samples:
        print(f"clock_trace: no samples in {argv[2]}", file=sys.stderr)
        return 1
    with open_text(argv[1]) as f:
        if passes_mode:
            lines = format_passes(parse_passes(f.read()), samples)
        else:
            lines = format_trace(trace(json.load(f).get("records", []), samples), samples)
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
