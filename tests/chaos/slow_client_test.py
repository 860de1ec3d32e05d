"""Chaos (issue 8.3): a client that never reads its GenerateStream.

The slow client asks for far more than admission.max_response_bytes plus what HTTP/2 flow control
lets travel (n = 32, 4000 tokens, top-20 logprobs per token) and never reads. rolloutd buffers at
most max_response_bytes for it, then cancels its work (its slots are freed while it still has not
read) and ends the stream with RESOURCE_EXHAUSTED naming the limit, which the client sees once it
reads. rolloutd's memory stays bounded. Meanwhile other clients' seeded streams end OK with the
output of an undisturbed run and take at most a bounded factor longer.
"""

import time
import unittest

import grpc

from rollout.v1 import rollout_pb2_grpc
from tests.e2e import e2e_util as u

MAX_RESPONSE_BYTES = 65536
CONFIG = "admission { max_response_bytes: %d }\n" % MAX_RESPONSE_BYTES
STREAMS = 6
N, MAX_TOKENS = 2, 300
SLOW_N, SLOW_TOKENS, SLOW_TOP_K = 32, 4000, 20


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for %d" % pid)


class SlowClientTest(unittest.TestCase):
    def setUp(self):
        self.server = u.start_server(CONFIG)  # one CPU worker
        self.addCleanup(self.server.stop)
        self.addCleanup(u.print_server_log, self.server)
        u.wait_ready(self.server)

    def test_unread_stream_is_cut_off_others_unaffected(self):
        requests = u.seeded_requests(STREAMS, n=N, max_tokens=MAX_TOKENS)
        baseline_load = u.StreamLoad(self.server, requests).start()
        results, errors = baseline_load.join()
        self.assertEqual(errors, {})
        baseline = {rid: r.output() for rid, r in results.items()}
        u.wait_idle(self.server, 1)
        rss_before = rss_bytes(self.server.process.pid)
        tokens_before = u.metric_sum(self.server, "rollout_generation_tokens_total")

        slow_request = u.generate_request([4, 4, 4], n=SLOW_N, max_tokens=SLOW_TOKENS, seed=5,
                                          ignore_eos=True, logprobs=True,
                                          top_k_logprobs=SLOW_TOP_K, request_id="slow")
        # BDP probing off keeps this client's HTTP/2 stream window at its initial 64 KiB; with it,
        # the client's own transport keeps granting window and absorbs megabytes unread before
        # rolloutd has anything to hold back (a slow reader with tight windows is the hard case).
        channel = grpc.insecure_channel(self.server.address,
                                        options=[("grpc.http2.bdp_probe", 0)])
        self.addCleanup(channel.close)
        # Started, never iterated: gRPC Python asks for a message only when the caller reads.
        slow = rollout_pb2_grpc.RolloutStub(channel).GenerateStream(slow_request, timeout=300)
        load = u.StreamLoad(self.server, requests).start()
        results, errors = load.join()
        self.assertEqual(errors, {})
        self.assertEqual({rid: r.output() for rid, r in results.items()}, baseline)
        # Not slowed down beyond sharing the engine for a moment with the slow group.
        self.assertLess(load.seconds, 2 * baseline_load.seconds + 10)
        # The slow group's work is over: nothing holds slots or admission budget while its client
        # still has not read (only the bounded buffer waits for it), and the engine made a small
        # part of what it asked for.
        u.wait_idle(self.server, 1)
        rss_after = rss_bytes(self.server.process.pid)
        for_slow = (u.metric_sum(self.server, "rollout_generation_tokens_total") - tokens_before -
                    STREAMS * N * MAX_TOKENS)
        self.assertLess(for_slow, SLOW_N * SLOW_TOKENS // 10)

        # rolloutd held at most max_response_bytes for the slow stream (the whole response would
        # be > 20 MB); the bound leaves room for allocator noise from the other streams.
        self.assertLess(rss_after - rss_before, 16 << 20)
        print("baseline load %.2fs, with the slow client %.2fs; rolloutd RSS %d -> %d KiB; "
              "tokens generated for the slow group %d" %
              (baseline_load.seconds, load.seconds, rss_before // 1024, rss_after // 1024,
               for_slow))

        # Now the slow client reads: what was buffered, then the status that names the limit.
        got = u.StreamResult()
        with self.assertRaises(grpc.RpcError) as e:
            for chunk in slow:
                got.add(chunk)
        self.assertEqual(e.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("admission.max_response_bytes (%d)" % MAX_RESPONSE_BYTES,
                      e.exception.details())
        self.assertIn("did not read", e.exception.details())
        received = sum(len(t) for t in got.tokens.values())
        print("slow client received %d tokens before the status" % received)
        self.assertGreater(received, 0)
        self.assertLessEqual(received, for_slow)
        u.wait_idle(self.server, 1)


if __name__ == "__main__":
    unittest.main()
