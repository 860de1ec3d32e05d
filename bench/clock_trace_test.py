"""Tests of bench/clock_trace.py on a gdn_bench JSON's records and nvidia-smi samples."""
import contextlib
import gzip
import io
import json
import os
import tempfile
import unittest

import clock_trace

# Local time two hours ahead of UTC: 12:00:00 local is 10:00:00 UTC = 1796464800.
T0 = 1796464800.0
SMI = """# utc_offset +0200
2026/12/05 12:00:00.100, 1980, 3201, 650.10, 60, 0x0000000000000000
2026/12/05 12:00:00.200, 1980, 3201, 655.00, 60, 0x0000000000000000
2026/12/05 12:00:01.100, 1500, 3201, 699.90, 61, 0x0000000000000004
2026/12/05 12:00:01.200, 1410, 3201, 700.00, 61, 0x0000000000000004
2026/12/05 12:00:02.100, 1980, 3201, [N/A], 60, 0x0000000000000000
garbage line
"""

PACKED = {"kind": "packed", "variant": "auto", "overlap": "auto", "policy": 0,
          "linear_slots": False, "sorted_slots": False, "hv": 32, "batch": 512}
REPLAY = {"kind": "replay_fp32", "variant": "auto", "overlap": "auto", "policy": 0,
          "linear_slots": False, "sorted_slots": False, "coef_route": 0, "hv": 32,
          "batch": 512}


class ClockTraceTest(unittest.TestCase):

    def test_parse_samples_applies_the_utc_offset_and_skips_bad_lines(self):
        samples = clock_trace.parse_samples(SMI)
        self.assertEqual(len(samples), 5)
        self.assertAlmostEqual(samples[0][0], T0 + 0.1, places=3)
        self.assertEqual(samples[2][1], 1500.0)
        self.assertEqual(samples[2][5], 0x4)
        self.assertIsNone(samples[4][3])  # "[N/A]" power

    def test_reason_names(self):
        self.assertEqual(clock_trace.reason_names(0), "none")
        self.assertEqual(clock_trace.reason_names(0x4 | 0x40), "sw-power-cap,hw-thermal")
        self.assertEqual(clock_trace.reason_names(0x1000), "0x1000")

    def test_each_timing_gets_the_samples_since_the_previous_record(self):
        samples = clock_trace.parse_samples(SMI)
        records = [
            dict(PACKED, us=529.4, t_unix=T0 + 0.5),
            dict(PACKED, variant="bv8", us=525.1, t_unix=T0 + 0.9),  # not an auto timing
            dict(REPLAY, cycle_us=371.5, t_unix=T0 + 1.5),
            dict(REPLAY, variant="auto+fused", cycle_us=306.6, t_unix=T0 + 1.8),
            dict(REPLAY, cycle_us=301.5, t_unix=T0 + 2.5),
            {"kind": "point", "hv": 32, "batch": 512, "t_unix": T0 + 2.6},
        ]
        traced = clock_trace.trace(records, samples)
        timings = traced[(32, 512)]
        self.assertEqual([(w, us) for w, us, _ in timings],
                         [("packed", 529.4), ("replay", 371.5), ("replay", 301.5)])
        packed, slow, fast = (st for _, _, st in timings)
        self.assertEqual(packed["sm_median"], 1980.0)
        self.assertEqual(packed["reasons"], 0)
        # The slow timing's window is (0.9, 1.5]: the two power-capped samples.
        self.assertEqual(slow["n"], 2)
        self.assertEqual(slow["sm_min"], 1410.0)
        self.assertEqual(slow["power_max"], 700.0)
        self.assertEqual(slow["reasons"], 0x4)
        # The fast one's window, (1.8, 2.5], has one sample without a power reading.
        self.assertEqual(fast["n"], 1)
        self.assertIsNone(fast["power_max"])
        lines = clock_trace.format_trace(traced, samples)
        self.assertIn("40.0 % of samples under 97 % of the max", lines[0])
        self.assertIn("sw-power-cap", lines[0])
        self.assertIn("r 371.50 (1455/1410 MHz, 700 W, sw-power-cap)", lines[1])
        self.assertIn("r 301.50 (1980/1980 MHz, ? W, none)", lines[1])

    def test_a_timing_without_samples_says_so(self):
        traced = clock_trace.trace([dict(PACKED, us=10.0, t_unix=T0 + 100.0)],
                                   clock_trace.parse_samples(SMI))
        lines = clock_trace.format_trace(traced, clock_trace.parse_samples(SMI))
        self.assertIn("p 10.00 (no samples)", lines[1])

    def test_passes_get_their_own_windows(self):
        passes = clock_trace.parse_passes(
            f"1 dbase {T0} {T0 + 0.5}\n1 kpf {T0 + 0.5} {T0 + 1.5}\nbad line\n"
            f"2 kpf {T0 + 5} {T0 + 6}\n")
        self.assertEqual([(p, b) for p, b, _, _ in passes], [(1, "dbase"), (1, "kpf"), (2, "kpf")])
        lines = clock_trace.format_passes(passes, clock_trace.parse_samples(SMI))
        self.assertEqual(lines[0], "pass 1: dbase SM 1980 MHz median, 1980 lowest; 655 W highest; "
                                   "none (2 samples)")
        self.assertEqual(lines[1], "pass 1: kpf SM 1455 MHz median, 1410 lowest; 700 W highest; "
                                   "sw-power-cap (2 samples)")
        self.assertEqual(lines[2], "pass 2: kpf (no samples)")

    def test_main_reads_a_gzipped_json(self):
        with tempfile.TemporaryDirectory() as d:
            js = os.path.join(d, "gdn_bench.json.gz")
            with gzip.open(js, "wt", encoding="utf-8") as f:
                json.dump({"records": [dict(PACKED, us=10.0, t_unix=T0 + 0.5)]}, f)
            smi = os.path.join(d, "smi.csv")
            with open(smi, "w", encoding="utf-8") as f:
                f.write(SMI)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(clock_trace.main(["clock_trace.py", js, smi]), 0)
        self.assertIn("p 10.00 (1980/1980 MHz, 655 W, none)", out.getvalue())


if __name__ == "__main__":
    unittest.main()
