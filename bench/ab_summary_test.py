"""Tests of bench/ab_summary.py on log lines in gdn_bench's --replay-only and --prefill formats."""
import os
import tempfile
import unittest

import ab_summary

LOG_A1 = """device: NVIDIA H200
REPLAY HV=32 B=1024 packed 1060.00 | replay 640.00 (585.00 / 1472.50) | x 1.656 | staggered 641.00
REPLAY HV=16 B=128 packed 70.00 | replay 48.00 (44.00 / 108.00) | x 1.458 | staggered 50.00
SLOTS HV=32 B=1024 packed scattered 1060.00 sorted 1045.00 contiguous 1028.00
REPLAY HV=32 B=1 packed 2.71 | replay 3.16 (3.04 / 5.03) | x 0.858 | staggered 3.16
FLAGS HV=32 B=1 packed 2.71 | replay 3.32 (3.20 / 5.10) | x 0.816
"""
LOG_A2 = LOG_A1.replace("640.00 (585.00", "642.00 (587.00")
LOG_B1 = LOG_A1.replace("640.00 (585.00 / 1472.50)", "636.00 (590.00 / 1326.00)")


PREFILL_A1 = """device: NVIDIA H200
prefill HV=32 seqs=1 len=4096 two-pass: 912.4 us per layer, 4.49 Mtok/s
prefill HV=32 seqs=64 len=256 two-pass: 2901.0 us per layer, 5.65 Mtok/s
prefill HV=32 seqs=1 len=4096 single pass: 3739.9 us per layer, 1.10 Mtok/s
prefill HV=16 seqs=1 len=4096 two-pass: 657.8 us per layer, 6.23 Mtok/s
"""
PREFILL_A2 = PREFILL_A1.replace("912.4 us", "916.4 us")
PREFILL_B1 = PREFILL_A1.replace("912.4 us", "821.3 us").replace("657.8 us", "664.4 us")


def write_logs(d, logs):
    for name, text in logs:
        with open(os.path.join(d, name + ".log"), "w", encoding="utf-8") as f:
            f.write(text)


class AbSummaryTest(unittest.TestCase):

    def test_parse_takes_replay_lines_only(self):
        rows = ab_summary.parse(LOG_A1)
        self.assertEqual(set(rows), {(32, 1024, ""), (16, 128, ""), (32, 1, ""),
                                     (32, 1, "+flags")})
        self.assertEqual(rows[(32, 1024, "")],
                         {"packed": 1060.0, "cycle": 640.0, "nonflush": 585.0, "flush": 1472.5})
        self.assertEqual(rows[(32, 1, "+flags")],
                         {"packed": 2.71, "cycle": 3.32, "nonflush": 3.2, "flush": 5.1})

    def test_summary_means_spread_ratio_and_change(self):
        with tempfile.TemporaryDirectory() as d:
            for name, text in (("main_p1", LOG_A1), ("main_p2", LOG_A2), ("var_p1", LOG_B1)):
                with open(os.path.join(d, name + ".log"), "w", encoding="utf-8") as f:
                    f.write(text)
            runs = {v: ab_summary.load(d, v) for v in ("main", "var")}
        self.assertEqual(len(runs["main"]), 2)
        table = ab_summary.summarize(runs)
        main = table[(32, 1024, "")]["main"]
        self.assertAlmostEqual(main["cycle"], 641.0)
        self.assertAlmostEqual(main["nonflush"], 586.0)
        self.assertAlmostEqual(main["spread"], 2.0)
        self.assertAlmostEqual(main["ratio"], 1060.0 / 641.0)
        self.assertEqual(main["passes"], 2)
        text = ab_summary.format_table(table, ["main", "var"])
        # var against main: cycle 636 vs 641, non-flush 590 vs 586, flush 1326 vs 1472.5.
        self.assertIn("-0.8 % / +0.7 % / -9.9 %", text)
        lines = text.splitlines()
        self.assertTrue(lines[1].lstrip().startswith("16/32"))  # 16/32 first, then 16/16
        # Batch 1 first, its FLAGS row right after its REPLAY row.
        self.assertEqual(lines[1].split()[1], "1")
        self.assertEqual(lines[3].split()[1], "1+flags")

    def test_parse_prefill_takes_prefill_lines_only(self):
        rows = ab_summary.parse_prefill(PREFILL_A1 + LOG_A1)
        self.assertEqual(len(rows), 4)
        self.assertEqual(rows[(32, 1, 4096, "two-pass")], 912.4)
        self.assertEqual(rows[(32, 1, 4096, "single pass")], 3739.9)
        self.assertEqual(ab_summary.parse(PREFILL_A1), {})

    def test_prefill_summary_and_change(self):
        with tempfile.TemporaryDirectory() as d:
            write_logs(d, (("main_p1", PREFILL_A1), ("main_p2", PREFILL_A2),
                           ("var_p1", PREFILL_B1)))
            runs = {v: ab_summary.load(d, v, ab_summary.parse_prefill) for v in ("main", "var")}
        table = ab_summary.summarize_prefill(runs)
        main = table[(32, 1, 4096, "two-pass")]["main"]
        self.assertAlmostEqual(main["us"], 914.4)
        self.assertAlmostEqual(main["spread"], 4.0)
        self.assertEqual(main["passes"], 2)
        text = ab_summary.format_prefill_table(table, ["main", "var"])
        self.assertIn("-10.2 %", text)  # 821.3 against 914.4
        self.assertIn("+1.0 %", text)  # 664.4 against 657.8
        self.assertTrue(text.splitlines()[1].lstrip().startswith("16/32"))

    def test_main_prints_the_tables_that_have_lines(self):
        with tempfile.TemporaryDirectory() as d:
            write_logs(d, (("main_p1", PREFILL_A1), ("var_p1", PREFILL_B1)))
            self.assertEqual(ab_summary.main(["ab_summary.py", d, "main", "var"]), 0)
            write_logs(d, (("empty_p1", "device: NVIDIA H200\n"),))
            self.assertEqual(ab_summary.main(["ab_summary.py", d, "empty"]), 1)

    def test_missing_variant_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(ab_summary.main(["ab_summary.py", d, "nothing"]), 1)
        self.assertEqual(ab_summary.main(["ab_summary.py"]), 2)


if __name__ == "__main__":
    unittest.main()
