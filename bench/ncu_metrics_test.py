"""Tests of bench/ncu_metrics.py on ncu --csv output with program lines before it."""
import unittest

import ncu_metrics

LOG = '''device: NVIDIA H100 80GB HBM3, 132 SMs
==PROF== Connected to process 123
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","123","gdn_bench","127.0.0.1","GdnDecodeKernel<...>","1","7","(128, 1, 1)","(2048, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","Mbyte","134.22"
"0","123","gdn_bench","127.0.0.1","GdnDecodeKernel<...>","1","7","(128, 1, 1)","(2048, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","69.12"
"0","123","gdn_bench","127.0.0.1","GdnDecodeKernel<...>","1","7","(128, 1, 1)","(2048, 1, 1)","0","9.0","Command line profiler metrics","lts__t_sector_hit_rate.pct","%","1.50"
"1","123","gdn_bench","127.0.0.1","GdnDecodeKernel<...>","1","7","(128, 1, 1)","(2048, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","68,950"
"1","123","gdn_bench","127.0.0.1","GdnDecodeKernel<...>","1","7","(128, 1, 1)","(2048, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","Gbyte","0.13"
"1","123","gdn_bench","127.0.0.1","GdnDecodeKernel<...>","1","7","(128, 1, 1)","(2048, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","furlong","1"
"2","123","gdn_bench","127.0.0.1","GdnDecodeKernel<...>","1","13","(64, 1, 1)","(32768, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","86,944"
profile launches done
==PROF== Disconnected from process 123
'''


class NcuMetricsTest(unittest.TestCase):

    def test_parse_converts_units_and_skips_other_lines(self):
        launches = ncu_metrics.parse(LOG)
        self.assertEqual(sorted(launches), [0, 1, 2])
        self.assertAlmostEqual(launches[0]["gpu__time_duration.sum"], 69.12)
        self.assertAlmostEqual(launches[0]["dram__bytes_read.sum"], 134.22)
        self.assertAlmostEqual(launches[0]["lts__t_sector_hit_rate.pct"], 1.5)
        self.assertAlmostEqual(launches[1]["gpu__time_duration.sum"], 68.95)
        self.assertAlmostEqual(launches[1]["dram__bytes_write.sum"], 130.0)
        # CUDA 13's ncu (run 119) names nanoseconds "ns".
        self.assertAlmostEqual(launches[2]["gpu__time_duration.sum"], 86.944)
        # An unknown unit is left out rather than misread.
        self.assertNotIn("dram__bytes_read.sum", launches[1])

    def test_table_labels_the_profile_launches(self):
        lines = ncu_metrics.table(ncu_metrics.parse(LOG))
        self.assertEqual(len(lines), 4)
        self.assertIn("packed", lines[1])
        self.assertIn("69.12", lines[1])
        self.assertIn("-", lines[2].split()[-3])

    def test_no_rows(self):
        self.assertEqual(ncu_metrics.parse("==PROF== no kernels were profiled\n"), {})


if __name__ == "__main__":
    unittest.main()
