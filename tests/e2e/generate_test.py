"""Issue 5, must hold #1: the README's rolloutd (no flags: the embedded tiny model on the CPU, one
worker) answers a Python client's GRPO group of n = 8 with token ids, logprobs, finish reasons and
weight versions, and greedy output equals the transformers golden continuation
(tests/data/tiny_qwen3_5/golden.safetensors, ignore_eos). Also: GenerateStream delivers exactly what
Generate returns, Score agrees with the sampled logprobs, health and GetServerInfo describe the
worker.
"""

import unittest

import numpy as np

from rollout.v1 import rollout_pb2
from tests.e2e import e2e_util as u

GOLDEN = "tests/data/tiny_qwen3_5/golden.safetensors"
PROMPTS = 5


class GenerateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = u.start_server()  # no --config: the README command
        u.wait_ready(cls.server)
        cls.golden = u.read_safetensors(GOLDEN)

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0, "rolloutd did not exit cleanly on SIGTERM"

    def test_group_of_eight(self):
        request = u.generate_request([1, 2, 3, 4, 5], n=8, max_tokens=24, seed=1234,
                                     logprobs=True, top_k_logprobs=3)
        response = self.server.rollout.Generate(request, timeout=60)
        self.assertEqual(len(response.completions), 8)
        self.assertEqual(response.seed, 1234)
        self.assertEqual(response.worker, "0")
        model = u.info(self.server).model
        total = 0
        for i, c in enumerate(response.completions):
            self.assertEqual(c.index, i)
            self.assertGreater(len(c.token_ids), 0)
            self.assertTrue(all(0 <= t < u.VOCAB for t in c.token_ids))
            self.assertEqual(len(c.logprobs), len(c.token_ids))
            self.assertTrue(all(lp <= 0.0 for lp in c.logprobs))
            self.assertEqual(len(c.top_logprob_token_ids), 3 * len(c.token_ids))
            self.assertEqual(len(c.top_logprobs), 3 * len(c.token_ids))
            self.assertIn(c.finish_reason, (rollout_pb2.FINISH_REASON_STOP,
                                            rollout_pb2.FINISH_REASON_LENGTH))
            if c.finish_reason == rollout_pb2.FINISH_REASON_LENGTH:
                self.assertEqual(len(c.token_ids), 24)
            else:
                self.assertIn(c.token_ids[-1], model.eos_token_ids)
            self.assertEqual(c.weight_version_start, 0)
            self.assertEqual(c.weight_version_end, 0)
            total += len(c.token_ids)
        # Different random streams per completion: the group is not 8 copies.
        self.assertGreater(len({tuple(c.token_ids) for c in response.completions}), 1)
        self.assertEqual(response.usage.prompt_tokens, 5)
        self.assertEqual(response.usage.prompt_tokens_computed, 5)  # prefilled once
        self.assertEqual(response.usage.completion_tokens, total)
        self.assertGreater(response.timing.total_seconds, 0)
        self.assertGreater(response.timing.time_to_first_token_seconds, 0)
        # Same seed, same group.
        again = self.server.rollout.Generate(request, timeout=60)
        self.assertEqual([list(c.token_ids) for c in again.completions],
                         [list(c.token_ids) for c in response.completions])

    def test_greedy_equals_golden(self):
        for i in range(PROMPTS):
            prompt = self.golden["prompt_%d" % i].tolist()
            want = self.golden["greedy_tokens_%d" % i].tolist()
            logits = self.golden["greedy_logits_%d" % i].astype(np.float64)
            expected_logprobs = u.log_softmax(logits)
            request = u.generate_request(prompt, n=8, max_tokens=len(want), temperature=0.0,
                                         ignore_eos=True, logprobs=True)
            response = self.server.rollout.Generate(request, timeout=120)
            self.assertEqual(len(response.completions), 8)
            for c in response.completions:
                self.assertEqual(list(c.token_ids), want, "prompt %d" % i)
                self.assertEqual(c.finish_reason, rollout_pb2.FINISH_REASON_LENGTH)
                got = np.array(c.logprobs)
                ref = expected_logprobs[np.arange(len(want)), want]
                self.assertLess(np.max(np.abs(got - ref)), 2e-3, "prompt %d" % i)

    def test_stream_delivers_what_generate_returns(self):
        request = u.generate_request([7, 8, 9], n=4, max_tokens=32, seed=99, logprobs=True)
        unary = self.server.rollout.Generate(request, timeout=60)
        chunks = list(self.server.rollout.GenerateStream(request, timeout=60))
        tokens, logprobs, finish, last = u.collect_stream(chunks)
        self.assertEqual(chunks[0].seed, 99)
        self.assertTrue(last.done)
        self.assertEqual(last.worker, "0")
        self.assertEqual(last.usage.completion_tokens, unary.usage.completion_tokens)
        for c in unary.completions:
            self.assertEqual(tokens[c.index], list(c.token_ids))
            self.assertEqual(logprobs[c.index], list(c.logprobs))
            self.assertEqual(finish[c.index], c.finish_reason)

    def test_score_agrees_with_sampled_logprobs(self):
        request = u.generate_request([11, 12, 13], n=2, max_tokens=16, seed=5, logprobs=True,
                                     ignore_eos=True)
        generated = self.server.rollout.Generate(request, timeout=60)
        score = rollout_pb2.ScoreRequest(prompt_token_ids=[11, 12, 13])
        for c in generated.completions:
            score.completions.add(token_ids=c.token_ids)
        scored = self.server.rollout.Score(score, timeout=60)
        self.assertEqual(len(scored.completions), 2)
        for c, s in zip(generated.completions, scored.completions):
            self.assertEqual(len(s.logprobs), len(c.logprobs))
            self.assertLess(np.max(np.abs(np.array(s.logprobs) - np.array(c.logprobs))), 1e-4)
        self.assertEqual(scored.worker, "0")

    def test_health_and_server_info_describe_the_worker(self):
        self.assertTrue(u.serving(self.server))
        server_info = u.info(self.server)
        self.assertEqual(server_info.ready_workers, 1)
        self.assertEqual(len(server_info.workers), 1)
        worker = server_info.workers[0]
        self.assertEqual(worker.state, rollout_pb2.WORKER_STATE_READY)
        self.assertEqual(worker.device, "cpu")
        self.assertEqual(worker.backend, "cpu")
        self.assertEqual(server_info.model.vocab_size, u.VOCAB)
        self.assertTrue(server_info.replay_ssm.available)
        # A token id beyond the workers' vocabulary is refused up front.
        bad = u.generate_request([u.VOCAB], max_tokens=2)
        with self.assertRaises(u.grpc.RpcError) as e:
            self.server.rollout.Generate(bad, timeout=10)
        self.assertEqual(e.exception.code(), u.grpc.StatusCode.INVALID_ARGUMENT)


if __name__ == "__main__":
    unittest.main()
