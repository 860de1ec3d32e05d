"""Issue 5, must hold #4: a burst beyond the configured admission queue gets RESOURCE_EXHAUSTED
(with a retry hint) for the excess while the admitted requests complete; the token budget bounds
admission the same way.
"""

import unittest

import grpc

from tests.e2e import e2e_util as u

CONFIG = "admission { max_queued_requests: 4 max_queued_tokens: 100000 }\n"
BURST = 16


class BackpressureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = u.start_server(CONFIG)
        u.wait_ready(cls.server)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def burst(self, requests):
        futures = [self.server.rollout.Generate.future(r, timeout=120) for r in requests]
        ok, exhausted = [], []
        for r, f in zip(requests, futures):
            try:
                ok.append((r, f.result()))
            except grpc.RpcError as e:
                self.assertEqual(e.code(), grpc.StatusCode.RESOURCE_EXHAUSTED, e.details())
                exhausted.append(e)
        return ok, exhausted

    def test_burst_beyond_the_queue(self):
        before = u.metric(self.server, "rollout_admission_rejections_total",
                          {"reason": "queue_requests"}) or 0
        requests = [u.generate_request([1, 2, 3 + i], n=2, max_tokens=400, seed=i,
                                       ignore_eos=True) for i in range(BURST)]
        ok, exhausted = self.burst(requests)
        self.assertEqual(len(ok) + len(exhausted), BURST)
        self.assertGreaterEqual(len(ok), 4)
        self.assertGreaterEqual(len(exhausted), 1)
        for request, response in ok:  # the admitted ones complete in full
            self.assertEqual([len(c.token_ids) for c in response.completions], [400, 400])
        for e in exhausted:
            self.assertIn("admission.max_queued_requests", e.details())
            self.assertIn("retry", e.details())
            hint = dict(e.trailing_metadata() or ())
            self.assertGreater(int(hint["grpc-retry-pushback-ms"]), 0)
        after = u.metric(self.server, "rollout_admission_rejections_total",
                         {"reason": "queue_requests"})
        self.assertEqual(after - before, len(exhausted))
        # Nothing is left behind: the queue budget is back to zero.
        self.assertTrue(u.wait_for(lambda: u.metric(self.server, "rollout_queue_tokens") == 0, 10))

    def test_token_budget(self):
        # Each costs 3 + 16 x 4000 = 64003 tokens of the 100000 budget: one fits at a time.
        big = [u.generate_request([1, 2, 3], n=16, max_tokens=4000, seed=i) for i in range(4)]
        futures = [self.server.rollout.Generate.future(r, timeout=3) for r in big]
        codes = []
        for f in futures:
            try:
                f.result()
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as e:
                codes.append(e.code())
                if e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    self.assertIn("admission.max_queued_tokens", e.details())
        self.assertGreaterEqual(codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED), 1)
        # The admitted one ran (to its end or to its deadline).
        self.assertLessEqual(
            set(codes), {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED,
                         grpc.StatusCode.DEADLINE_EXCEEDED})
        self.assertTrue(u.wait_for(lambda: u.metric(self.server, "rollout_queue_tokens") == 0, 10))


if __name__ == "__main__":
    unittest.main()
