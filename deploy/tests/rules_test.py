"""Tests of deploy/prometheus/rollout-rules.yaml with Debian's promtool.

- `promtool check rules` (syntax, PromQL, templates);
- `promtool test rules` on rollout-rules.test.yaml: every alert fires on synthetic series that should
  fire it, and stays silent on the ones that should not;
- conventions: each alert has a severity, summary/description/runbook annotations, a runbook entry in
  deploy/README.md, and both a firing and a silent case in the unit tests; the alerts issue 7 asks
  for exist.
"""
import os
import re
import unittest

import yaml

import deploy_env
from deploy_env import run, runfile

RULES = runfile("deploy/prometheus/rollout-rules.yaml")
RULE_TESTS = runfile("deploy/prometheus/rollout-rules.test.yaml")
README = runfile("deploy/README.md")

REQUIRED_ALERTS = {
    "RolloutNoWorkerReady",
    "RolloutProgressStalled",
    "RolloutReplaySSMFallbackRateHigh",
    "RolloutQueueSaturated",
    "RolloutWorkerCrashLooping",
}


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def alerts():
    return [r for g in load(RULES)["groups"] for r in g["rules"] if "alert" in r]


class RulesTest(unittest.TestCase):
    def test_promtool_check_rules(self):
        p = run([deploy_env.promtool(), "check", "rules", RULES])
        self.assertIn("SUCCESS", p.stdout)

    def test_promtool_unit_tests(self):
        # promtool resolves rule_files relative to the test file: run it in a copy next to a copy
        # of the rules (the runfiles links may point into different trees).
        d = os.path.join(deploy_env.tmpdir(), "rules")
        os.makedirs(d, exist_ok=True)
        for src in (RULES, RULE_TESTS):
            with open(src) as f, open(os.path.join(d, os.path.basename(src)), "w") as g:
                g.write(f.read())
        p = run([deploy_env.promtool(), "test", "rules", os.path.join(d, "rollout-rules.test.yaml")])
        self.assertIn("SUCCESS", p.stdout)

    def test_required_alerts_exist(self):
        self.assertLessEqual(REQUIRED_ALERTS, {a["alert"] for a in alerts()})

    def test_alert_conventions(self):
        with open(README) as f:
            headings = {re.sub(r"[^a-z0-9]", "", l.lower()) for l in f if l.startswith("#")}
        for a in alerts():
            with self.subTest(alert=a["alert"]):
                self.assertIn(a["labels"]["severity"], ("critical", "warning", "info"))
                for k in ("summary", "description", "runbook"):
                    self.assertTrue(a["annotations"].get(k, "").strip(), k)
                anchor = "deploy/README.md#" + a["alert"].lower()
                self.assertIn(anchor, a["annotations"]["runbook"])
                self.assertIn(a["alert"].lower(), headings, "no runbook heading in deploy/README.md")

    def test_every_alert_has_firing_and_silent_unit_tests(self):
        firing, silent = set(), set()
        for t in load(RULE_TESTS)["tests"]:
            for case in t.get("alert_rule_test", []):
                (firing if case.get("exp_alerts") else silent).add(case["alertname"])
        names = {a["alert"] for a in alerts()}
        self.assertEqual(names - firing, set(), "alerts never shown to fire")
        self.assertEqual(names - silent, set(), "alerts never shown to stay silent")

    def test_recording_rule_names_follow_the_convention(self):
        for g in load(RULES)["groups"]:
            for r in g["rules"]:
                if "record" in r:
                    self.assertRegex(r["record"], r"^rollout:[a-z0-9_]+:[a-z0-9_]+$")


if __name__ == "__main__":
    deploy_env.main()
