"""workers.max_num_seqs / memory_budget_bytes / max_batch_tokens reach the workers: the pools a
worker reports are the configured ones, and a budget too small for the configured slots makes the
worker fail at start with a message that names the budget and the bytes it needed (reported, not
served)."""

import unittest

from tests.e2e import e2e_util as u


class WorkerSizingTest(unittest.TestCase):
    def test_configured_pools(self):
        server = u.start_server('workers { count: 1 devices: "cpu" max_num_seqs: 8 '
                                'memory_budget_bytes: 67108864 max_batch_tokens: 64 }\n'
                                'admission { max_n: 8 }\n'
                                'replay_ssm { ring_pool_share: 0.5 }\n')
        self.addCleanup(server.stop)
        u.wait_ready(server)
        w = {"worker": "0"}
        u.wait_metric(server, "rollout_state_slots_capacity", w, lambda v: v == 8)
        u.wait_metric(server, "rollout_replayssm_rings_capacity", w, lambda v: v == 4)
        # A group of n = 8 fills every slot and still completes.
        response = server.rollout.Generate(
            u.generate_request(list(range(1, 100)), n=8, max_tokens=8, ignore_eos=True),
            timeout=60)
        self.assertEqual(len(response.completions), 8)
        # Metrics arrive with the worker's next snapshot.
        u.wait_metric(server, "rollout_pool_peak_bytes", {"worker": "0", "pool": "state"},
                      lambda v: v > 0)
        peak = sum(u.metric(server, "rollout_pool_peak_bytes", {"worker": "0", "pool": p}) or 0
                   for p in ("state", "ring", "kv"))
        self.assertLessEqual(peak, 67108864)

    def test_budget_too_small_is_reported(self):
        server = u.start_server('workers { count: 1 devices: "cpu" max_num_seqs: 65536 '
                                'memory_budget_bytes: 1048576 restart_backoff_max_seconds: 1 }\n')
        self.addCleanup(server.stop)
        u.wait_metric(server, "rollout_worker_restarts_total", {"worker": "0"}, lambda v: v >= 1)
        self.assertFalse(u.serving(server))
        self.assertTrue(u.wait_for(
            lambda: "memory_budget_bytes is 1048576" in server.stderr_text(), 20),
            server.stderr_text())


if __name__ == "__main__":
    unittest.main()
