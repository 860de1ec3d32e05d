"""Issue 5, must hold #5: /metrics (checked by promtool) shows non-zero generation tokens, the
peak memory of each worker, and the ReplaySSM fallback counter with its reason label after a
request that fell back; also the other families merged from worker snapshots and rolloutd's own
latency histograms.
"""

import subprocess
import unittest

from rollout.v1 import rollout_pb2
from tests.e2e import e2e_util as u

CONFIG = 'workers { count: 2 devices: "cpu" devices: "cpu" }\n'
W0 = {"worker": "0"}


class MetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = u.start_server(CONFIG)
        u.wait_ready(cls.server, workers=2)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def generated(self, text, worker):
        return sum(u.metric_value(text, "rollout_generation_tokens_total",
                                  {"worker": worker, "replay_ssm": path}) or 0
                   for path in ("on", "off"))

    def test_worker_metrics_after_work_and_a_fallback(self):
        # At the same time, so that they spread over both workers (one at a time, each would go
        # to the least loaded, idle worker 0).
        futures = [self.server.rollout.Generate.future(
            u.generate_request([5, 6, 7], n=4, max_tokens=16, seed=seed), timeout=60)
            for seed in range(4)]
        self.assertEqual({f.result().worker for f in futures}, {"0", "1"})
        # ON with max_tokens = 1: the completion ends before any decode step, so it cannot use
        # the ring: a prefill_only fallback, reported on the completion and counted.
        fell_back = self.server.rollout.Generate(
            u.generate_request([5, 6, 7], n=2, max_tokens=1, seed=9,
                               replay_ssm=rollout_pb2.REPLAY_SSM_MODE_ON), timeout=60)
        for c in fell_back.completions:
            self.assertEqual(c.replay_ssm_fallback_reason,
                             rollout_pb2.REPLAY_SSM_FALLBACK_REASON_PREFILL_ONLY)
            self.assertFalse(c.replay_ssm_applied)
        worker = fell_back.worker
        u.wait_metric(self.server, "rollout_replayssm_fallbacks_total",
                      {"worker": worker, "reason": "prefill_only"}, lambda v: v >= 2)
        self.assertTrue(u.wait_for(
            lambda: self.generated(u.metrics(self.server), "0") > 0 and
            self.generated(u.metrics(self.server), "1") > 0, 20))
        for w in ("0", "1"):  # a snapshot taken after the work ended
            u.wait_metric(self.server, "rollout_state_slots_used", {"worker": w},
                          lambda v: v == 0)

        text = u.metrics(self.server)
        check = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                               capture_output=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        for w in ("0", "1"):
            labels = {"worker": w}
            self.assertGreater(u.metric_value(text, "rollout_gpu_memory_peak_bytes",
                                              {"worker": w, "device": "cpu"}), 0)
            self.assertGreater(u.metric_value(text, "rollout_gpu_memory_used_bytes",
                                              {"worker": w, "device": "cpu"}), 0)
            self.assertEqual(u.metric_value(text, "rollout_worker_ready", labels), 1)
            self.assertEqual(u.metric_value(text, "rollout_worker_crashloop", labels), 0)
            self.assertEqual(u.metric_value(text, "rollout_worker_restarts_total", labels), 0)
            self.assertEqual(u.metric_value(text, "rollout_requests_running", labels), 0)
            # Pool sizes (gauges named *_capacity, so promtool's lint passes with them present):
            # the dashboard's use panels divide *_used by them.
            for pool in ("rollout_state_slots", "rollout_kv_blocks", "rollout_replayssm_rings"):
                capacity = u.metric_value(text, pool + "_capacity", labels)
                self.assertGreater(capacity, 0, pool)  # ring_pool_share 1 by default
                self.assertLessEqual(u.metric_value(text, pool + "_used", labels), capacity, pool)
            self.assertGreater(u.metric_value(text, "rollout_pool_peak_bytes",
                                              {"worker": w, "pool": "state"}), 0)
            self.assertEqual(u.metric_value(text, "rollout_weight_version", labels), 0)
            self.assertGreater(u.metric_value(text, "rollout_batch_size_count", labels), 0)
            self.assertGreater(u.metric_value(text, "rollout_prompt_tokens_total", labels), 0)
            self.assertIsNotNone(u.metric_value(text, "rollout_last_token_age_seconds", labels))
        self.assertGreaterEqual(
            sum(u.metric_value(text, "rollout_replayssm_requests_total", {"worker": w,
                                                                         "mode": "on"}) or 0
                for w in ("0", "1")), 2)
        self.assertGreater(sum(u.metric_value(text, "rollout_completions_total",
                                              {"worker": w, "finish_reason": "length"}) or 0
                               for w in ("0", "1")), 0)
        for family in ("rollout_e2e_request_seconds", "rollout_time_to_first_token_seconds",
                       "rollout_queue_seconds", "rollout_time_per_output_token_seconds"):
            self.assertGreaterEqual(u.metric_value(text, family + "_count"), 5, family)
        self.assertEqual(u.metric_value(text, "rollout_requests_waiting", {"worker": "frontend"}),
                         0)
        self.assertIn('rollout_build_info{backend="cpu"', text)


if __name__ == "__main__":
    unittest.main()
