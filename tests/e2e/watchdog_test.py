"""The progress watchdog (issue 5 mechanism; issue 8's chaos suite builds on it): a worker stopped
with SIGSTOP while it has work makes no progress; after health.watchdog_seconds health turns
NOT_SERVING, rolloutd kills and replaces the worker, and the request it was running is re-run:
the stream completes OK with exactly the tokens of an undisturbed run. A stopped idle worker
(no work, so no progress to miss) is replaced once it has not answered a stats poll for 10 s.
"""

import signal
import unittest

from rollout.v1 import rollout_pb2
from tests.e2e import e2e_util as u
from tests.e2e.control_test import Stream

CONFIG = 'workers { count: 1 devices: "cpu" }\nhealth { watchdog_seconds: 2 }\n'


class WatchdogTest(unittest.TestCase):
    def setUp(self):
        self.server = u.start_server(CONFIG)
        self.addCleanup(self.server.stop)
        u.wait_ready(self.server)

    def test_stopped_worker_is_replaced_and_its_work_re_run(self):
        request = u.generate_request([9, 8, 7], n=2, max_tokens=400, seed=77, ignore_eos=True,
                                     logprobs=True, replay_ssm=rollout_pb2.REPLAY_SSM_MODE_OFF)
        baseline = self.server.rollout.Generate(request, timeout=120)

        victim = u.worker_pids(self.server)[0]
        self.addCleanup(lambda: u.os.kill(victim, signal.SIGCONT)
                        if u.os.path.exists("/proc/%d" % victim) else None)
        stream = Stream(self.server, request)
        stream.wait_tokens()
        u.os.kill(victim, signal.SIGSTOP)  # alive, answers nothing: a hung engine

        self.assertTrue(u.wait_for(lambda: not u.serving(self.server), 20, interval=0.1))
        u.wait_metric(self.server, "rollout_worker_restarts_total", {"worker": "0"},
                      lambda v: v == 1, timeout=30)
        self.assertIn("progress watchdog: no progress for", self.server.stderr_text())
        tokens, logprobs, finish, last = stream.result()
        self.assertTrue(last.done)
        for c in baseline.completions:
            self.assertEqual(tokens[c.index], list(c.token_ids))
            self.assertEqual(logprobs[c.index], list(c.logprobs))
            self.assertEqual(finish[c.index], c.finish_reason)
        u.wait_ready(self.server)
        self.assertNotEqual(u.worker_pids(self.server)[0], victim)


    def test_stopped_idle_worker_is_replaced(self):
        victim = u.worker_pids(self.server)[0]
        self.addCleanup(lambda: u.os.kill(victim, signal.SIGCONT)
                        if u.os.path.exists("/proc/%d" % victim) else None)
        u.os.kill(victim, signal.SIGSTOP)
        u.wait_metric(self.server, "rollout_worker_restarts_total", {"worker": "0"},
                      lambda v: v == 1, timeout=40)
        self.assertIn("not answering", self.server.stderr_text())
        u.wait_ready(self.server)
        response = self.server.rollout.Generate(
            u.generate_request([1, 2], max_tokens=4, ignore_eos=True), timeout=30)
        self.assertEqual(len(response.completions[0].token_ids), 4)


if __name__ == "__main__":
    unittest.main()
