"""Tests of deploy/grafana/rollout-dashboard.json.

Valid dashboard JSON for the Grafana sidecar: parses, recent schemaVersion, unique panel ids, panels
inside the 24-column grid and not overlapping, every panel queries something, every datasource is the
templated ${datasource} (no hard-coded uids), datasource/job/instance/worker variables, and the panels
issue 7 asks for (throughput by ReplaySSM path, TTFT/TPOT/e2e p50+p99, queue/running, batch size,
device memory used+peak per worker, fallbacks by reason, flushes, weight version + update time,
worker restarts, config reloads). Metric names against docs/METRICS.md: metric_names_test.py.
"""
import json
import re
import unittest

import deploy_env
import metric_names
from deploy_env import runfile

DASHBOARD = runfile("deploy/grafana/rollout-dashboard.json")
CATALOG = runfile("docs/METRICS.md")
TEMPLATED_DS = ("${datasource}", "$datasource")


def load():
    with open(DASHBOARD) as f:
        return json.load(f)


def all_panels(d):
    out = []

    def walk(ps):
        for p in ps:
            out.append(p)
            walk(p.get("panels", []))

    walk(d["panels"])
    return out


def all_exprs(d):
    return [t["expr"] for p in all_panels(d) for t in p.get("targets", []) if t.get("expr")]


class DashboardTest(unittest.TestCase):
    def setUp(self):
        self.d = load()

    def test_top_level(self):
        d = self.d
        self.assertGreaterEqual(d["schemaVersion"], 36)
        self.assertTrue(d["uid"]) and self.assertLessEqual(len(d["uid"]), 40)
        self.assertTrue(d["title"])
        self.assertNotIn("id", d)  # provisioned dashboards must not carry a database id
        self.assertNotIn("__inputs", d)  # import-time inputs are not resolved by the sidecar

    def test_datasource_is_templated_everywhere(self):
        found = []

        def walk(x, path):
            if isinstance(x, dict):
                for k, v in x.items():
                    if k == "datasource":
                        found.append((path, v))
                    walk(v, path + "/" + k)
            elif isinstance(x, list):
                for i, v in enumerate(x):
                    walk(v, "%s/%d" % (path, i))

        walk(self.d, "")
        self.assertTrue(found)
        for path, ds in found:
            with self.subTest(path=path):
                self.assertIsInstance(ds, dict, "datasource must be {type, uid}")
                if ds.get("type") == "grafana":  # the built-in annotations query
                    continue
                self.assertEqual(ds.get("type"), "prometheus")
                self.assertIn(ds.get("uid"), TEMPLATED_DS)

    def test_variables(self):
        v = {x["name"]: x for x in self.d["templating"]["list"]}
        self.assertEqual(v["datasource"]["type"], "datasource")
        self.assertEqual(v["datasource"]["query"], "prometheus")
        for name in ("job", "instance", "worker"):
            self.assertEqual(v[name]["type"], "query")
            self.assertIn(v[name]["datasource"]["uid"], TEMPLATED_DS)
            self.assertTrue(v[name]["includeAll"])
        self.assertIn("worker)", v["worker"]["definition"])

    def test_panels_have_targets_and_unique_ids(self):
        ids = set()
        for p in all_panels(self.d):
            with self.subTest(panel=p.get("title")):
                self.assertNotIn(p["id"], ids)
                ids.add(p["id"])
                self.assertTrue(p.get("title"))
                if p["type"] == "row":
                    continue
                self.assertTrue(p.get("targets"), "panel without a query")
                refs = [t["refId"] for t in p["targets"]]
                self.assertEqual(len(refs), len(set(refs)))
                for t in p["targets"]:
                    self.assertTrue(t.get("expr", "").strip())
                    self.assertIn(t["datasource"]["uid"], TEMPLATED_DS)

    def test_grid_layout(self):
        cells = set()
        for p in all_panels(self.d):
            g = p["gridPos"]
            with self.subTest(panel=p.get("title")):
                self.assertGreaterEqual(g["x"], 0)
                self.assertLessEqual(g["x"] + g["w"], 24)
                for x in range(g["x"], g["x"] + g["w"]):
                    for y in range(g["y"], g["y"] + g["h"]):
                        self.assertNotIn((x, y), cells, "panels overlap")
                        cells.add((x, y))

    def test_exprs_filter_by_the_variables(self):
        """Every selector filters by job and instance; selectors of per-worker metrics also by worker."""
        catalog = metric_names.parse_catalog(CATALOG)
        families = {n: c["type"] for n, c in catalog.items()}
        for e in all_exprs(self.d):
            u = metric_names.parse_promql(e)
            for name, labels in u.selectors:
                with self.subTest(expr=e, metric=name):
                    self.assertIn("job", labels)
                    self.assertIn("instance", labels)
                    fam = metric_names.family_of(name, families)
                    if fam and "worker" in catalog[fam]["labels"]:
                        self.assertIn("worker", labels)
            self.assertNotIn('"$worker"', e.replace('=~"$worker"', ""), "use =~ for multi-value variables")

    def test_required_panels(self):
        exprs = all_exprs(self.d)

        def has(pattern, what):
            self.assertTrue(any(re.search(pattern, e) for e in exprs), "no panel for " + what)

        has(r"by \(replay_ssm\) \(rate\(rollout_generation_tokens_total", "throughput by ReplaySSM path")
        for h in ("time_to_first_token", "time_per_output_token", "e2e_request"):
            for q in ("0.5", "0.99"):
                has(r"histogram_quantile\(%s, .*rollout_%s_seconds_bucket" % (re.escape(q), h), "%s p%s" % (h, q))
        has(r"rollout_requests_running", "running requests")
        has(r"rollout_requests_waiting", "queued requests")
        has(r"rollout_batch_size_bucket", "batch size")
        has(r"by \(instance, worker, device\) \(rollout_gpu_memory_used_bytes", "device memory used per worker")
        has(r"by \(instance, worker, device\) \(rollout_gpu_memory_peak_bytes", "device memory peak per worker")
        has(r"by \(reason\) \(rate\(rollout_replayssm_fallbacks_total", "fallbacks by reason")
        has(r"rate\(rollout_replayssm_flushes_total", "flush rate")
        has(r"rollout_weight_version", "weight version")
        has(r"rollout_weight_update_seconds", "weight update time")
        has(r"rollout_worker_restarts_total", "worker restarts")
        has(r"rollout_config_reloads_total", "config reloads")

    def test_rates_use_rate_interval(self):
        for e in all_exprs(self.d):
            for rng in re.findall(r"\[([^\]]*)\]", e):
                with self.subTest(expr=e):
                    self.assertIn(rng, ("$__rate_interval", "2m:"))


if __name__ == "__main__":
    deploy_env.main()
