"""A real Prometheus server scrapes rolloutd's metrics on loopback, evaluates the rules and answers
every dashboard query (Debian's prometheus 2.42, the version promtool checks against).

Target: $ROLLOUT_METRICS_TARGET ("host:port" of a running rolloutd's metrics_listen) when set;
otherwise a stand-in exporter on loopback that serves `dump_exposition --samples`: rolloutd's real
metrics registry with one series in every family. Once rolloutd runs in the test suite (issue 5),
start it here instead of the stand-in; the checks stay the same.

Checks: the target is scraped (up == 1) and a throughput query returns data through the HTTP API;
every alert and recording rule evaluates without error; every PromQL query of the dashboard (Grafana
variables replaced) runs without error and, against the stand-in, returns data; every variable's
label_values query finds values.
"""
import datetime
import json
import os
import re
import socket
import subprocess
import threading
import time
import unittest
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import deploy_env
from deploy_env import runfile

DASHBOARD = runfile("deploy/grafana/rollout-dashboard.json")
RULES = runfile("deploy/prometheus/rollout-rules.yaml")
DUMP = runfile("deploy/dump_exposition")
JOB = "rollout"
SCRAPE_INTERVAL_S = 1


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def substitute(expr):
    """Grafana variables -> values that select everything (the dashboard's "All")."""
    expr = expr.replace("$__rate_interval", "15s")
    return re.sub(r"\$\{?(job|instance|worker)\}?", ".*", expr)


class _Exporter(object):
    """Serves a fixed exposition text at /metrics on 127.0.0.1 (stands in for rolloutd)."""

    def __init__(self, text):
        body = text.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.address = "127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class PrometheusScrapeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.exporter = None
        cls.live = bool(os.environ.get("ROLLOUT_METRICS_TARGET"))
        if cls.live:
            target = os.environ["ROLLOUT_METRICS_TARGET"]
        else:
            text = subprocess.run([DUMP, "--samples"], check=True, stdout=subprocess.PIPE, text=True).stdout
            cls.exporter = _Exporter(text)
            target = cls.exporter.address
        d = os.path.join(deploy_env.tmpdir(), "prometheus")
        os.makedirs(d, exist_ok=True)
        rules = os.path.join(d, "rollout-rules.yaml")
        with open(RULES) as f, open(rules, "w") as g:
            g.write(f.read())
        config = os.path.join(d, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: %ds\n  evaluation_interval: %ds\n"
                    "rule_files:\n  - %s\n"
                    "scrape_configs:\n  - job_name: %s\n    static_configs:\n      - targets: ['%s']\n"
                    % (SCRAPE_INTERVAL_S, SCRAPE_INTERVAL_S, rules, JOB, target))
        cls.port = free_port()
        cls.log = open(os.path.join(d, "prometheus.log"), "w")
        cls.proc = subprocess.Popen(
            [deploy_env.prometheus(), "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(d, "data"),
             "--web.listen-address=127.0.0.1:%d" % cls.port, "--log.level=warn"],
            stdout=cls.log, stderr=subprocess.STDOUT)
        try:
            cls._wait_until(lambda: cls._get("/-/ready", raw=True), "Prometheus ready")
            # Three scrapes, so rate() over the scrapes has data, and a rule evaluation after them.
            cls._wait_until(lambda: cls._scalar('count_over_time(up{job="%s"}[1m])' % JOB) >= 3, "three scrapes")
            cls.t0 = time.time()
            cls._wait_until(cls._rules_evaluated, "rule evaluation")
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "proc", None) and cls.proc.poll() is None:
            cls.proc.terminate()
            try:
                cls.proc.wait(10)
            except subprocess.TimeoutExpired:
                cls.proc.kill()
                cls.proc.wait()
        if getattr(cls, "log", None):
            cls.log.close()
        if cls.exporter:
            cls.exporter.close()

    # ------------------------------------------------------------------ HTTP API
    @classmethod
    def _get(cls, path, params=None, raw=False):
        url = "http://127.0.0.1:%d%s" % (cls.port, path)
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                status, body = r.status, r.read().decode()
        except urllib.error.HTTPError as e:  # the API answers errors (bad query: 400) as JSON
            status, body = e.code, e.read().decode()
        except OSError:
            return None
        if raw:
            return body if status == 200 else None
        try:
            return json.loads(body)
        except ValueError:  # not ready yet (503 text)
            return None

    @classmethod
    def _query(cls, expr):
        return cls._get("/api/v1/query", {"query": expr}) or {}

    @classmethod
    def _scalar(cls, expr):
        r = cls._query(expr)
        if not r or r.get("status") != "success" or not r["data"]["result"]:
            return 0
        return float(r["data"]["result"][0]["value"][1])

    @classmethod
    def _rules_evaluated(cls):
        """Every rule has been evaluated after the scrapes we waited for (cls.t0)."""
        r = cls._get("/api/v1/rules")
        if not r or r.get("status") != "success":
            return False
        rules = [rule for g in r["data"]["groups"] for rule in g["rules"]]

        def when(ts):  # RFC 3339 with up to nanoseconds -> epoch seconds
            m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", ts or "")
            if not m:
                return 0
            base = datetime.datetime.fromisoformat(m.group(1) + (m.group(3).replace("Z", "+00:00")))
            return base.timestamp() + float(m.group(2) or 0)

        return bool(rules) and all(when(rule.get("lastEvaluation")) > cls.t0 for rule in rules)

    @classmethod
    def _wait_until(cls, cond, what, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if cls.proc.poll() is not None:
                raise AssertionError("prometheus exited (rc %s); log:\n%s" % (cls.proc.returncode, cls._log_text()))
            if cond():
                return
            time.sleep(0.2)
        raise AssertionError("timed out waiting for %s; log:\n%s" % (what, cls._log_text()))

    @classmethod
    def _log_text(cls):
        cls.log.flush()
        with open(cls.log.name) as f:
            return f.read()[-4000:]

    # ------------------------------------------------------------------ tests
    def test_target_scraped_and_throughput_queryable(self):
        self.assertEqual(self._scalar('up{job="%s"}' % JOB), 1.0)
        r = self._query('sum by (replay_ssm) (rollout_generation_tokens_total{job="%s"})' % JOB)
        self.assertEqual(r["status"], "success")
        got = {s["metric"].get("replay_ssm"): float(s["value"][1]) for s in r["data"]["result"]}
        if self.live:
            self.assertTrue(got, "no rollout_generation_tokens_total series from the live target")
        else:
            self.assertEqual(got, {"on": 1000.0, "off": 100.0})

    def test_rules_load_and_evaluate_without_errors(self):
        r = self._get("/api/v1/rules")
        groups = {g["name"]: g for g in r["data"]["groups"]}
        self.assertEqual(set(groups), {"rollout.recording", "rollout.alerts"})
        for g in groups.values():
            for rule in g["rules"]:
                with self.subTest(rule=rule["name"]):
                    self.assertEqual(rule["health"], "ok", rule.get("lastError"))
        if not self.live:
            # Healthy stand-in data: no alert is firing or pending.
            alerts = self._get("/api/v1/alerts")["data"]["alerts"]
            self.assertEqual([a["labels"]["alertname"] for a in alerts], [])
            recorded = self._query('rollout:generation_tokens:rate1m{job="%s"}' % JOB)["data"]["result"]
            self.assertEqual(len(recorded), 2)

    def test_every_dashboard_query_runs(self):
        with open(DASHBOARD) as f:
            d = json.load(f)
        panels, stack = [], list(d["panels"])
        while stack:
            p = stack.pop(0)
            panels.append(p)
            stack.extend(p.get("panels", []))
        n = 0
        for p in panels:
            for t in p.get("targets", []):
                expr = substitute(t["expr"])
                with self.subTest(panel=p["title"], ref=t["refId"]):
                    r = self._query(expr)
                    self.assertEqual(r.get("status"), "success", "%s: %s" % (expr, r.get("error")))
                    if not self.live:
                        self.assertTrue(r["data"]["result"], "no data: " + expr)
                n += 1
        self.assertGreater(n, 40)

    def test_variable_queries_find_values(self):
        with open(DASHBOARD) as f:
            d = json.load(f)
        for v in d["templating"]["list"]:
            if v["type"] != "query":
                continue
            m = re.match(r"^label_values\((.*),\s*(\w+)\)$", v["query"]["query"])
            self.assertIsNotNone(m, v["name"])
            r = self._get("/api/v1/label/%s/values" % m.group(2), {"match[]": substitute(m.group(1))})
            with self.subTest(variable=v["name"]):
                self.assertEqual(r["status"], "success")
                self.assertTrue(r["data"], "variable %s has no values" % v["name"])


if __name__ == "__main__":
    deploy_env.main()
