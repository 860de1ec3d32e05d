"""Issue 5, must hold #2: with two CPU workers and 32 concurrent seeded groups (half Generate, half
GenerateStream), kill -9 of one worker mid-run loses nothing: every request completes OK, the
outputs are identical to a run without the kill (streams never re-send or contradict a token), and
rollout_worker_restarts_total of that worker is 1.
"""

import signal
import threading
import unittest

import grpc

from rollout.v1 import rollout_pb2
from tests.e2e import e2e_util as u

CONFIG = 'workers { count: 2 devices: "cpu" devices: "cpu" }\n'
GROUPS = 32
N = 4
MAX_TOKENS = 48


def request(i):
    # ReplaySSM ON or OFF, not AUTO: AUTO picks the ring or the plain path from the decode batch
    # size, which a re-run changes; both paths give the same tokens, but logprobs may differ in the
    # last bits (fp32 summation order), and this test checks logprobs bit for bit.
    mode = rollout_pb2.REPLAY_SSM_MODE_ON if i % 4 < 2 else rollout_pb2.REPLAY_SSM_MODE_OFF
    return u.generate_request([(7 * i + k) % 1000 + 1 for k in range(3 + i % 5)], n=N,
                              max_tokens=MAX_TOKENS, seed=1000 + i, ignore_eos=True,
                              logprobs=True, replay_ssm=mode, request_id="group-%d" % i)


class WorkerCrashTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = u.start_server(CONFIG)
        u.wait_ready(cls.server, workers=2)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def run_groups(self, on_progress=None):
        """Runs the 32 groups at once; returns {i: [(tokens, logprobs) per completion]}.

        on_progress(tokens_streamed) is called from the stream readers as tokens arrive.
        """
        results = {}
        errors = []
        lock = threading.Lock()
        streamed = [0]

        def stream(i):
            try:
                tokens, logprobs = {}, {}
                for chunk in self.server.rollout.GenerateStream(request(i), timeout=300):
                    for d in chunk.deltas:
                        have = tokens.setdefault(d.index, [])
                        self.assertEqual(d.offset, len(have))  # never re-sent, never skipped
                        have.extend(d.token_ids)
                        logprobs.setdefault(d.index, []).extend(d.logprobs)
                        with lock:
                            streamed[0] += len(d.token_ids)
                            count = streamed[0]
                        if on_progress is not None:
                            on_progress(count)
                    if chunk.done:
                        self.assertEqual(chunk.usage.completion_tokens, N * MAX_TOKENS)
                with lock:
                    results[i] = [(tokens[k], logprobs[k]) for k in range(N)]
            except Exception as e:  # noqa: BLE001 (reported below)
                with lock:
                    errors.append((i, e))

        threads = [threading.Thread(target=stream, args=(i,)) for i in range(GROUPS) if i % 2]
        futures = {i: self.server.rollout.Generate.future(request(i), timeout=300)
                   for i in range(GROUPS) if i % 2 == 0}
        for t in threads:
            t.start()
        for i, f in futures.items():
            try:
                response = f.result()
                results[i] = [(list(c.token_ids), list(c.logprobs)) for c in response.completions]
            except grpc.RpcError as e:
                errors.append((i, e))
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        return results

    def test_kill_9_mid_run_loses_nothing(self):
        baseline = self.run_groups()
        self.assertEqual(len(baseline), GROUPS)
        for completions in baseline.values():
            self.assertEqual(len(completions), N)
            for tokens, logprobs in completions:
                self.assertEqual(len(tokens), MAX_TOKENS)
                self.assertEqual(len(logprobs), MAX_TOKENS)

        self.assertEqual(u.metric(self.server, "rollout_worker_restarts_total", {"worker": "0"}), 0)
        victim = u.worker_pids(self.server)[0]
        killed = threading.Event()

        def kill_once(tokens_streamed):
            # Mid-run: streams are flowing, most of the work is still ahead.
            if tokens_streamed >= 64 and not killed.is_set():
                killed.set()
                u.os.kill(victim, signal.SIGKILL)

        again = self.run_groups(on_progress=kill_once)
        self.assertTrue(killed.is_set())
        self.assertEqual(again, baseline)  # token ids and logprobs, every completion
        self.assertIn("are re-run from the start", self.server.stderr_text())

        u.wait_metric(self.server, "rollout_worker_restarts_total", {"worker": "0"},
                      lambda v: v == 1)
        self.assertEqual(u.metric(self.server, "rollout_worker_restarts_total", {"worker": "1"}), 0)
        u.wait_ready(self.server, workers=2)
        self.assertNotEqual(u.worker_pids(self.server)[0], victim)
        workers = {w.index: w for w in u.info(self.server).workers}
        self.assertEqual(workers[0].restarts, 1)
        self.assertEqual(workers[0].state, rollout_pb2.WORKER_STATE_READY)


if __name__ == "__main__":
    unittest.main()
