"""Chaos (issue 8.3): Admin.ReloadConfig again and again while seeded streams run.

Six reloads, spread over the run, alternate hot fields (health.watchdog_seconds,
default_sampling.max_tokens, replay_ssm.auto_min_batch_size, admission.max_queued_requests) that
the requests do not depend on (they set max_tokens and ReplaySSM ON/OFF themselves). Every reload
applies (generation + 1 each, visible in GetServerInfo and /metrics), no request fails, the
outputs equal an undisturbed run's bit for bit, and the workers end idle.
"""

import unittest

from rollout.v1 import admin_pb2
from tests.e2e import e2e_util as u

WORKERS = 2
BASE = 'workers { count: 2 devices: "cpu" devices: "cpu" }\n'
VARIANTS = [
    BASE + "health { watchdog_seconds: 30 }\ndefault_sampling { max_tokens: 512 }\n"
    "replay_ssm { auto_min_batch_size: 4 }\nadmission { max_queued_requests: 2048 }\n",
    BASE + "health { watchdog_seconds: 45 }\ndefault_sampling { max_tokens: 768 }\n"
    "replay_ssm { auto_min_batch_size: 16 }\nadmission { max_queued_requests: 1024 }\n",
]
RELOADS = 6
STREAMS = 16
N, MAX_TOKENS = 4, 96


class ReloadUnderLoadTest(unittest.TestCase):
    def setUp(self):
        self.server = u.start_server(BASE)
        self.addCleanup(self.server.stop)
        self.addCleanup(u.print_server_log, self.server)
        u.wait_ready(self.server, workers=WORKERS)

    def reload(self, text):
        with open(self.server.config_path, "w") as f:
            f.write(text)
        return self.server.admin.ReloadConfig(admin_pb2.ReloadConfigRequest(), timeout=30)

    def test_reloads_under_load_lose_nothing(self):
        requests = u.seeded_requests(STREAMS, n=N, max_tokens=MAX_TOKENS)
        results, errors = u.run_streams(self.server, requests)
        self.assertEqual(errors, {})
        baseline = {rid: r.output() for rid, r in results.items()}
        u.wait_idle(self.server, WORKERS)
        generation = u.info(self.server).config_generation

        load = u.StreamLoad(self.server, requests).start()
        total = STREAMS * N * MAX_TOKENS
        for k in range(RELOADS):
            # Spread over the run: reload k once k/8 of the tokens have arrived.
            load.wait_tokens(total * (k + 1) // (RELOADS + 2))
            report = self.reload(VARIANTS[k % 2])
            self.assertTrue(report.applied)
            self.assertEqual(report.generation, generation + k + 1)
        self.assertLess(load.tokens, total)  # the reloads happened while streams ran
        results, errors = load.join()
        self.assertEqual(errors, {})
        self.assertEqual({rid: r.output() for rid, r in results.items()}, baseline)

        server_info = u.info(self.server)
        self.assertEqual(server_info.config_generation, generation + RELOADS)
        self.assertEqual(server_info.default_sampling.max_tokens, 768)  # the last variant's
        self.assertEqual(u.metric(self.server, "rollout_config_generation"),
                         generation + RELOADS)
        self.assertEqual(u.metric(self.server, "rollout_config_reloads_total",
                                  {"result": "applied"}), RELOADS)
        u.wait_idle(self.server, WORKERS)


if __name__ == "__main__":
    unittest.main()
