"""Tests of bench/ab_summary.py on log lines in gdn_bench's --replay-only format."""
import os
import tempfile
import unittest

import ab_summary

LOG_A1 = """device: NVIDIA H200
REPLAY HV=32 B=1024 packed 1060.00 | replay 640.00 (585.00 / 1472.50) | x 1.656 | staggered 641.00
REPLAY HV=16 B=128 packed 70.00 | replay 48.00 (44.00 / 108.00) | x 1.458 | staggered 50.00
SLOTS HV=32 B=1024 packed scattered 1060.00 sorted 1045.00 contiguous 1028.00
"""
LOG_A2 = LOG_A1.replace("640.00 (585.00", "642.00 (587.00")
LOG_B1 = LOG_A1.replace("640.00 (585.00 / 1472.50)", "636.00 (590.00 / 1326.00)")


class AbSummaryTest(unittest.TestCase):

    def test_parse_takes_replay_lines_only(self):
        rows = ab_summary.parse(LOG_A1)
        self.assertEqual(set(rows), {(32, 1024), (16, 128)})
        self.assertEqual(rows[(32, 1024)],
                         {"packed": 1060.0, "cycle": 640.0, "nonflush": 585.0, "flush": 1472.5})

    def test_summary_means_spread_ratio_and_change(self):
        with tempfile.TemporaryDirectory() as d:
            for name, text in (("main_p1", LOG_A1), ("main_p2", LOG_A2), ("var_p1", LOG_B1)):
                with open(os.path.join(d, name + ".log"), "w", encoding="utf-8") as f:
                    f.write(text)
            runs = {v: ab_summary.load(d, v) for v in ("main", "var")}
        self.assertEqual(len(runs["main"]), 2)
        table = ab_summary.summarize(runs)
        main = table[(32, 1024)]["main"]
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

    def test_missing_variant_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(ab_summary.main(["ab_summary.py", d, "nothing"]), 1)
        self.assertEqual(ab_summary.main(["ab_summary.py"]), 2)


if __name__ == "__main__":
    unittest.main()
