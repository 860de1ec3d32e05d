"""Admin.ReloadConfig against the real rolloutd: a broken file is rejected and the generation stays;
dry_run changes nothing; a valid changed file applies (generation + 1, visible in GetServerInfo and
/metrics); restart-only fields are reported, not applied; the admin token is enforced; SIGTERM ends
the process cleanly.
"""

import signal
import unittest

import grpc

from rollout.v1 import admin_pb2
from rollout.v1 import rollout_pb2
from tests.server.rolloutd_process import RolloutdProcess, metric_value, write_temp

Outcome = admin_pb2.ConfigFieldChange


def changes(report):
    return {c.field: c for c in report.changes}


class ReloadTest(unittest.TestCase):
    def setUp(self):
        self.server = RolloutdProcess(config_text="admission { max_n: 16 }\n")
        self.server.start()
        self.addCleanup(self.server.stop)

    def write_config(self, text):
        with open(self.server.config_path, "w") as f:
            f.write(text)

    def info(self):
        return self.server.rollout.GetServerInfo(rollout_pb2.GetServerInfoRequest(), timeout=10)

    def reload(self, dry_run=False, metadata=None):
        return self.server.admin.ReloadConfig(admin_pb2.ReloadConfigRequest(dry_run=dry_run),
                                              timeout=10, metadata=metadata)

    def test_round_trip(self):
        self.assertEqual(self.info().config_generation, 1)
        self.assertEqual(self.info().limits.max_n, 16)

        # 1. A broken file: rejected, the previous config stays.
        self.write_config("admission { max_n: 32 \n")  # unbalanced brace
        with self.assertRaises(grpc.RpcError) as e:
            self.reload()
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("generation 1 stays in effect", e.exception.details())
        self.assertEqual(self.info().config_generation, 1)

        # 2. An invalid value: rejected per field; the report rides in the trailing metadata.
        self.write_config("admission { max_n: 99999 }\n")
        with self.assertRaises(grpc.RpcError) as e:
            self.reload()
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("admission.max_n", e.exception.details())
        report_bytes = dict(e.exception.trailing_metadata())["rollout-reload-report-bin"]
        report = admin_pb2.ReloadConfigResponse.FromString(report_bytes)
        self.assertEqual(changes(report)["admission.max_n"].outcome, Outcome.OUTCOME_REJECTED)
        self.assertEqual(self.info().config_generation, 1)

        # 3. dry_run of a valid change: reported, nothing changes.
        self.write_config("admission { max_n: 8 }\nreplay_ssm { ring_length: 32 }\n")
        report = self.reload(dry_run=True)
        self.assertTrue(report.dry_run)
        self.assertFalse(report.applied)
        self.assertEqual(report.generation, 1)
        self.assertEqual(changes(report)["admission.max_n"].outcome, Outcome.OUTCOME_WOULD_APPLY)
        self.assertEqual(changes(report)["replay_ssm.ring_length"].outcome,
                         Outcome.OUTCOME_NEEDS_RESTART)
        self.assertEqual(self.info().config_generation, 1)
        self.assertEqual(self.info().limits.max_n, 16)

        # 4. The same change for real: generation + 1, the hot field applies, the restart-only one
        # does not.
        report = self.reload()
        self.assertTrue(report.applied)
        self.assertEqual(report.generation, 2)
        self.assertEqual(changes(report)["admission.max_n"].outcome, Outcome.OUTCOME_APPLIED)
        self.assertEqual(changes(report)["admission.max_n"].old_value, "16")
        self.assertEqual(changes(report)["admission.max_n"].new_value, "8")
        info = self.info()
        self.assertEqual(info.config_generation, 2)
        self.assertEqual(info.limits.max_n, 8)
        self.assertEqual(info.replay_ssm.ring_length, 16)
        # ... and the new limit is in force.
        request = rollout_pb2.GenerateRequest(prompt_token_ids=[1], n=9)
        with self.assertRaises(grpc.RpcError) as e:
            self.server.rollout.Generate(request, timeout=10)
        self.assertIn("[1, 8]", e.exception.details())

        text = self.server.metrics_text()
        self.assertEqual(metric_value(text, "rollout_config_generation"), 2)
        self.assertEqual(metric_value(text, "rollout_config_reloads_total", {"result": "rejected"}), 2)
        self.assertEqual(metric_value(text, "rollout_config_reloads_total", {"result": "dry_run"}), 1)
        self.assertEqual(metric_value(text, "rollout_config_reloads_total", {"result": "applied"}), 1)
        self.assertEqual(metric_value(text, "rollout_config_last_reload_success"), 1)

    def test_inline_config(self):
        request = admin_pb2.ReloadConfigRequest()
        request.config.admission.max_n = 4
        report = self.server.admin.ReloadConfig(request, timeout=10)
        self.assertEqual(report.source, "inline")
        self.assertEqual(self.info().limits.max_n, 4)

    def test_admin_token_and_clean_shutdown(self):
        token_file = write_temp("admin-token", "t0ken-for-tests\n")
        self.write_config('security { admin_token_file: "%s" }\n' % token_file)
        self.reload()  # no token configured yet: open
        with self.assertRaises(grpc.RpcError) as e:
            self.reload()
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        self.assertNotIn("t0ken", e.exception.details())
        with self.assertRaises(grpc.RpcError) as e:
            self.reload(metadata=[("authorization", "Bearer wrong")])
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        for rpc, request in ((self.server.admin.Pause, admin_pb2.PauseRequest()),
                             (self.server.admin.Resume, admin_pb2.ResumeRequest()),
                             (self.server.admin.UpdateWeights,
                              admin_pb2.UpdateWeightsRequest(path="/tmp"))):
            with self.assertRaises(grpc.RpcError) as e:
                rpc(request, timeout=10)
            self.assertEqual(e.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        report = self.reload(metadata=[("authorization", "Bearer t0ken-for-tests")])
        self.assertFalse(report.applied)  # nothing changed since

        text = self.server.metrics_text()
        self.assertGreaterEqual(
            metric_value(text, "rollout_config_reloads_total", {"result": "unauthenticated"}), 2)
        self.assertNotIn("t0ken", text)
        self.assertEqual(self.server.stop(signal.SIGTERM), 0)
        self.assertNotIn("t0ken", self.server.stderr_text())
        self.assertIn("draining", self.server.stderr_text())


if __name__ == "__main__":
    unittest.main()
