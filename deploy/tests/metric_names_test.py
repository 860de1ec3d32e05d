"""Metric names used by the dashboard and the rules, against docs/METRICS.md and against the
exposition that metrics/ really produces (//deploy:dump_exposition: RolloutMetrics' /metrics text,
every family with HELP/TYPE before any sample). The same helper, metric_names.py, checks a live
rolloutd: `metric_names.py exposition --url http://127.0.0.1:9464/metrics`.
"""
import os
import subprocess
import unittest

import deploy_env
import metric_names
from deploy_env import runfile

DASHBOARD = runfile("deploy/grafana/rollout-dashboard.json")
RULES = runfile("deploy/prometheus/rollout-rules.yaml")
CATALOG = runfile("docs/METRICS.md")
DUMP = runfile("deploy/dump_exposition")


class ParserTest(unittest.TestCase):
    def test_selectors_and_labels(self):
        u = metric_names.parse_promql(
            'histogram_quantile(0.99, sum by (le, worker) (rate(rollout_x_seconds_bucket{job=~"$job", '
            'worker=~"a|b"}[$__rate_interval]))) / on (job) group_left () rollout_y offset 5m '
            'and rollout_z{reason!="sum(rollout_fake)"} > bool 0')
        self.assertEqual(u.names, {"rollout_x_seconds_bucket", "rollout_y", "rollout_z"})
        self.assertEqual(dict(u.selectors)["rollout_x_seconds_bucket"], {"job", "worker"})
        self.assertEqual(u.grouping_labels, {"le", "worker", "job"})

    def test_functions_keywords_and_numbers_are_not_names(self):
        u = metric_names.parse_promql("sum without (worker) (increase(rollout_a_total[15m])) > 2 or vector(1)"
                                      " unless max_over_time(rollout_b[1h]) * 1e3")
        self.assertEqual(u.names, {"rollout_a_total", "rollout_b"})

    def test_histogram_family(self):
        fams = {"rollout_h_seconds": "histogram", "rollout_c_total": "counter"}
        self.assertEqual(metric_names.family_of("rollout_h_seconds_bucket", fams), "rollout_h_seconds")
        self.assertEqual(metric_names.family_of("rollout_h_seconds_count", fams), "rollout_h_seconds")
        self.assertIsNone(metric_names.family_of("rollout_c_total_count", fams))
        self.assertIsNone(metric_names.family_of("rollout_unknown", fams))

    def test_exposition_parsing(self):
        text = ("# HELP rollout_a_total A.\n# TYPE rollout_a_total counter\n"
                "# HELP rollout_h_seconds H.\n# TYPE rollout_h_seconds histogram\n"
                'rollout_g{worker="0"} 1\n')
        fams = metric_names.parse_exposition(text)
        self.assertEqual(metric_names.check_exposition(
            {"rollout_a_total", "rollout_h_seconds_bucket", "rollout_g", "rollout_missing"}, fams),
            ["rollout_missing"])


class CatalogTest(unittest.TestCase):
    def test_catalog_parses(self):
        cat = metric_names.parse_catalog(CATALOG)
        self.assertGreater(len(cat), 30)
        self.assertEqual(cat["rollout_generation_tokens_total"]["labels"], {"worker", "replay_ssm"})
        self.assertEqual(cat["rollout_admission_rejections_total"]["labels"], {"reason"})
        self.assertEqual(cat["rollout_batch_size"]["type"], "histogram")

    def test_dashboard_and_rules_use_catalog_names_and_labels(self):
        usages, recorded = metric_names.collect(DASHBOARD, RULES)
        problems = metric_names.check_catalog(usages, recorded, metric_names.parse_catalog(CATALOG))
        self.assertEqual(problems, [])
        self.assertGreater(len(metric_names.used_names(usages, recorded)), 30)

    def test_catalog_check_catches_a_wrong_name_and_label(self):
        usages = [("x", metric_names.parse_promql('rate(rollout_generation_tokens_totl[1m])')),
                  ("y", metric_names.parse_promql('rollout_worker_ready{reason="x"}'))]
        problems = metric_names.check_catalog(usages, set(), metric_names.parse_catalog(CATALOG))
        self.assertEqual(len(problems), 2, problems)


class ExpositionTest(unittest.TestCase):
    def test_every_used_name_is_in_the_real_exposition(self):
        text = subprocess.run([DUMP], check=True, stdout=subprocess.PIPE, text=True).stdout
        fams = metric_names.parse_exposition(text)
        usages, recorded = metric_names.collect(DASHBOARD, RULES)
        self.assertEqual(metric_names.check_exposition(metric_names.used_names(usages, recorded), fams), [])

    def test_command_line(self):
        path = os.path.join(deploy_env.tmpdir(), "exposition.txt")
        with open(path, "w") as f:
            f.write(subprocess.run([DUMP], check=True, stdout=subprocess.PIPE, text=True).stdout)
        rc = metric_names.main(["exposition", "--dashboard", DASHBOARD, "--rules", RULES, "--file", path])
        self.assertEqual(rc, 0)
        with open(path, "w") as f:
            f.write("# TYPE rollout_build_info gauge\n")
        rc = metric_names.main(["exposition", "--dashboard", DASHBOARD, "--rules", RULES, "--file", path])
        self.assertEqual(rc, 1)
        rc = metric_names.main(["catalog", "--dashboard", DASHBOARD, "--rules", RULES, "--catalog", CATALOG])
        self.assertEqual(rc, 0)


if __name__ == "__main__":
    deploy_env.main()
