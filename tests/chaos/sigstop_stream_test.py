"""Chaos (issue 8.3): SIGSTOP of the worker while many GenerateStreams run.

A stopped process still holds its connections but makes no progress: after
health.watchdog_seconds the progress watchdog turns health NOT_SERVING, kills and replaces the
worker, and every request it was running is re-run. Health is SERVING again once the replacement
is ready, every stream ends OK with exactly the output of an undisturbed run, and the slot gauges
return to idle.

watchdog_seconds is 5, not less: the re-run's first step (12 groups' prefill) on a loaded machine
under ASan must not look like a hang itself. One worker, so that health must go NOT_SERVING: with
a second ready worker rolloutd can still serve and health says so (the kill follows the watchdog's
verdict within one 50 ms tick). A second case stops one of two workers: the other keeps serving,
only the stopped one is replaced, and the outputs are again identical.
"""

import signal
import threading
import time
import unittest

from tests.e2e import e2e_util as u

CONFIG = 'workers { count: 1 devices: "cpu" }\nhealth { watchdog_seconds: 5 }\n'
CONFIG_TWO = 'workers { count: 2 devices: "cpu" devices: "cpu" }\nhealth { watchdog_seconds: 5 }\n'
STREAMS = 12
MAX_TOKENS = 64


class HealthLog:
    """Polls health on a thread and records each change as (time, serving)."""

    def __init__(self, server):
        self.server = server
        self.changes = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.thread.start()

    def poll(self):
        last = None
        while not self.stop.is_set():
            try:
                now = u.serving(self.server)
            except Exception:  # noqa: BLE001 (a slow answer on a loaded machine: poll again)
                now = last
            if now != last:
                self.changes.append((time.time(), now))
                last = now
            self.stop.wait(0.05)

    def close(self):
        self.stop.set()
        self.thread.join(30)
        return [serving for _, serving in self.changes]


class SigstopStreamTest(unittest.TestCase):
    def setUp(self):
        self.server = u.start_server(CONFIG)
        self.addCleanup(self.server.stop)
        self.addCleanup(u.print_server_log, self.server)
        u.wait_ready(self.server)

    def test_stopped_worker_detected_replaced_and_re_run(self):
        requests = u.seeded_requests(STREAMS, n=4, max_tokens=MAX_TOKENS)
        results, errors = u.run_streams(self.server, requests)
        self.assertEqual(errors, {})
        baseline = {rid: r.output() for rid, r in results.items()}
        u.wait_idle(self.server, 1)

        victim = u.worker_pids(self.server)[0]
        self.addCleanup(lambda: u.os.kill(victim, signal.SIGCONT)
                        if u.os.path.exists("/proc/%d" % victim) else None)
        health = HealthLog(self.server)
        self.addCleanup(health.close)
        load = u.StreamLoad(self.server, requests).start()
        load.wait_tokens(200)
        self.assertLess(load.tokens, STREAMS * 4 * MAX_TOKENS // 2)  # most of the work is ahead
        u.os.kill(victim, signal.SIGSTOP)  # alive, answers nothing: a hung engine
        stopped_at = time.time()

        results, errors = load.join()
        self.assertEqual(errors, {})
        self.assertEqual({rid: r.output() for rid, r in results.items()}, baseline)
        self.assertIn("progress watchdog: no progress for", self.server.stderr_text())
        self.assertEqual(u.metric(self.server, "rollout_worker_restarts_total", {"worker": "0"}), 1)
        u.wait_ready(self.server)
        self.assertNotEqual(u.worker_pids(self.server)[0], victim)

        changes = health.close()
        # SERVING, then NOT_SERVING (stalled, then no ready worker), then SERVING again.
        self.assertEqual(changes, [True, False, True], health.changes)
        not_serving_at = health.changes[1][0]
        # Not before the watchdog (5 s since the last progress, which came shortly before the stop).
        self.assertGreaterEqual(not_serving_at - stopped_at, 3)
        u.wait_idle(self.server, 1)


class SigstopOneOfTwoTest(unittest.TestCase):
    """Two workers, one stopped: the other keeps streaming; the stopped one's requests are re-run
    (on the live worker or the replacement) with identical output; only worker 0 restarts."""

    def setUp(self):
        self.server = u.start_server(CONFIG_TWO)
        self.addCleanup(self.server.stop)
        self.addCleanup(u.print_server_log, self.server)
        u.wait_ready(self.server, workers=2)

    def test_stopped_worker_of_two(self):
        requests = u.seeded_requests(STREAMS, n=4, max_tokens=MAX_TOKENS)
        results, errors = u.run_streams(self.server, requests)
        self.assertEqual(errors, {})
        baseline = {rid: r.output() for rid, r in results.items()}
        u.wait_idle(self.server, 2)

        victim = u.worker_pids(self.server)[0]
        self.addCleanup(lambda: u.os.kill(victim, signal.SIGCONT)
                        if u.os.path.exists("/proc/%d" % victim) else None)
        load = u.StreamLoad(self.server, requests).start()
        load.wait_tokens(200)
        u.os.kill(victim, signal.SIGSTOP)
        results, errors = load.join()
        self.assertEqual(errors, {})
        self.assertEqual({rid: r.output() for rid, r in results.items()}, baseline)
        self.assertIn("worker 0: killing process %d: progress watchdog" % victim,
                      self.server.stderr_text())
        self.assertEqual(u.metric(self.server, "rollout_worker_restarts_total", {"worker": "0"}), 1)
        self.assertEqual(u.metric(self.server, "rollout_worker_restarts_total", {"worker": "1"}), 0)
        u.wait_ready(self.server, workers=2)
        self.assertNotEqual(u.worker_pids(self.server)[0], victim)
        u.wait_idle(self.server, 2)


if __name__ == "__main__":
    unittest.main()
