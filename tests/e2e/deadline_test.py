"""Issue 5, must hold #3: a request with a 50 ms deadline on a long generation ends
DEADLINE_EXCEEDED and the slot-use gauge (rollout_state_slots_used) returns to its idle value; the
same for a longer deadline that expires mid-generation (the slots were in use, then freed), and for
a client that cancels its stream.
"""

import time
import unittest

import grpc

from tests.e2e import e2e_util as u

SLOTS = ("rollout_state_slots_used", {"worker": "0"})
RUNNING = ("rollout_requests_running", {"worker": "0"})


def long_request(n=4):
    # The context is 4096 tokens: ~4000 tokens per completion keep the worker busy for seconds.
    return u.generate_request([1, 2, 3], n=n, max_tokens=4000, seed=3, ignore_eos=True)


class DeadlineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = u.start_server()
        u.wait_ready(cls.server)
        # The idle value, once the first stats snapshot arrived.
        cls.idle = u.wait_metric(cls.server, *SLOTS, predicate=lambda v: True)
        assert cls.idle == 0, cls.idle

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def assert_back_to_idle(self):
        u.wait_metric(self.server, *SLOTS, predicate=lambda v: v == self.idle)
        u.wait_metric(self.server, *RUNNING, predicate=lambda v: v == 0)
        self.assertTrue(u.wait_for(
            lambda: u.info(self.server).workers[0].requests_running == 0, 10))

    def test_50ms_deadline(self):
        start = time.time()
        with self.assertRaises(grpc.RpcError) as e:
            self.server.rollout.Generate(long_request(), timeout=0.05)
        self.assertEqual(e.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertLess(u.elapsed(start), 5)
        self.assert_back_to_idle()
        # The worker is fine: the next request is served.
        response = self.server.rollout.Generate(
            u.generate_request([1, 2, 3], max_tokens=4, ignore_eos=True), timeout=30)
        self.assertEqual(len(response.completions[0].token_ids), 4)

    def test_deadline_mid_generation_frees_the_slots(self):
        future = self.server.rollout.Generate.future(long_request(n=8), timeout=3)
        # The group holds its 8 slots while it runs...
        u.wait_metric(self.server, *SLOTS, predicate=lambda v: v >= 8)
        with self.assertRaises(grpc.RpcError) as e:
            future.result()
        self.assertEqual(e.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        # ... and gives them back when its deadline stops it in the engine.
        self.assert_back_to_idle()

    def test_cancelled_stream_frees_the_slots(self):
        stream = self.server.rollout.GenerateStream(long_request(), timeout=60)
        tokens = 0
        for chunk in stream:
            tokens += sum(len(d.token_ids) for d in chunk.deltas)
            if tokens >= 16:
                break
        stream.cancel()
        self.assertGreaterEqual(tokens, 16)
        self.assert_back_to_idle()


if __name__ == "__main__":
    unittest.main()
