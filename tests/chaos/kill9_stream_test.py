"""Chaos (issue 8.3): kill -9 of one of two workers while many GenerateStreams run.

Nothing is lost: every stream ends OK with exactly the tokens and logprobs of an undisturbed run
(the re-run on a live worker never re-sends or contradicts a streamed token), the killed worker is
restarted once, and afterwards every worker's slots, KV blocks and rings are back to idle.
"""

import signal
import threading
import unittest

from tests.e2e import e2e_util as u

CONFIG = 'workers { count: 2 devices: "cpu" devices: "cpu" }\n'
WORKERS = 2
STREAMS = 24


class Kill9StreamTest(unittest.TestCase):
    def setUp(self):
        self.server = u.start_server(CONFIG)
        self.addCleanup(self.server.stop)
        self.addCleanup(u.print_server_log, self.server)
        u.wait_ready(self.server, workers=WORKERS)

    def test_kill_9_under_streaming_load(self):
        requests = u.seeded_requests(STREAMS, n=4, max_tokens=64)
        results, errors = u.run_streams(self.server, requests)
        self.assertEqual(errors, {})
        baseline = {rid: r.output() for rid, r in results.items()}
        self.assertEqual(len(baseline), STREAMS)
        u.wait_idle(self.server, WORKERS)

        victim = u.worker_pids(self.server)[0]
        killed = threading.Event()
        tokens_at_kill = []

        def kill_once(total):
            # Mid-run: streams are flowing, most of the work (24 x 4 x 64 tokens) is ahead.
            if total >= 400 and not killed.is_set():
                killed.set()
                tokens_at_kill.append(total)
                u.os.kill(victim, signal.SIGKILL)

        load = u.StreamLoad(self.server, requests, on_tokens=kill_once).start()
        results, errors = load.join()
        self.assertTrue(killed.is_set())
        self.assertLess(tokens_at_kill[0], STREAMS * 4 * 64 // 2)
        self.assertEqual(errors, {})
        self.assertEqual({rid: r.output() for rid, r in results.items()}, baseline)
        self.assertIn("are re-run from the start", self.server.stderr_text())

        u.wait_metric(self.server, "rollout_worker_restarts_total", {"worker": "0"},
                      lambda v: v == 1)
        self.assertEqual(u.metric(self.server, "rollout_worker_restarts_total", {"worker": "1"}), 0)
        u.wait_ready(self.server, workers=WORKERS)
        self.assertNotEqual(u.worker_pids(self.server)[0], victim)
        u.wait_idle(self.server, WORKERS)


if __name__ == "__main__":
    unittest.main()
