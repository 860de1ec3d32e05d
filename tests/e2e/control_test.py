"""Fan-out of the control RPCs to the workers (docs/API.md): Abort returns partial tokens (the
aborted Generate returns OK with ABORTED completions), Pause KEEP / ABORT / WAIT and Resume,
UpdateWeights to one version on every worker with min_weight_version, a repeated update as an OK
no-op (retries), and model roots compared canonically.
"""

import os
import threading
import unittest

import grpc

from rollout.v1 import admin_pb2
from rollout.v1 import rollout_pb2
from tests.e2e import e2e_util as u

CONFIG = 'workers { count: 2 devices: "cpu" devices: "cpu" }\n'
ABORTED = rollout_pb2.FINISH_REASON_ABORTED


class Stream:
    """Reads a GenerateStream on a thread; `tokens` counts what arrived."""

    def __init__(self, server, request):
        self.call = server.rollout.GenerateStream(request, timeout=120)
        self.chunks = []
        self.error = None
        self.first_tokens = threading.Event()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            for chunk in self.call:
                self.chunks.append(chunk)
                if any(d.token_ids for d in chunk.deltas):
                    self.first_tokens.set()
        except grpc.RpcError as e:
            self.error = e

    def wait_tokens(self, timeout=30):
        assert self.first_tokens.wait(timeout), "no tokens"

    def result(self, timeout=120):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "stream did not end"
        if self.error is not None:
            raise self.error
        return u.collect_stream(self.chunks)


def long_request(request_id, n=2, max_tokens=4000, seed=1):
    return u.generate_request([1, 2, 3], n=n, max_tokens=max_tokens, seed=seed, ignore_eos=True,
                              request_id=request_id)


class ControlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = u.start_server(CONFIG)
        u.wait_ready(cls.server, workers=2)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def tearDown(self):
        # Each case leaves the server unpaused and idle.
        self.server.admin.Resume(admin_pb2.ResumeRequest(), timeout=30)
        self.server.rollout.Abort(rollout_pb2.AbortRequest(all=True), timeout=30)

    def test_abort_returns_partial_tokens(self):
        unary = self.server.rollout.Generate.future(long_request("unary-1"), timeout=120)
        stream = Stream(self.server, long_request("stream-1", seed=2))
        stream.wait_tokens()
        aborted = self.server.rollout.Abort(rollout_pb2.AbortRequest(request_id="stream-1"),
                                            timeout=60)
        self.assertEqual(list(aborted.request_ids), ["stream-1"])
        tokens, _, finish, last = stream.result()
        self.assertTrue(last.done)
        self.assertEqual(set(finish.values()), {ABORTED})
        partial = {c.index: list(c.token_ids) for c in aborted.aborted[0].completions}
        self.assertEqual(partial, tokens)  # what was streamed is what Abort reports
        self.assertTrue(all(0 < len(t) < 4000 for t in tokens.values()))

        everything = self.server.rollout.Abort(rollout_pb2.AbortRequest(all=True), timeout=60)
        self.assertIn("unary-1", everything.request_ids)
        response = unary.result()  # OK, not an error
        for c in response.completions:
            self.assertEqual(c.finish_reason, ABORTED)
            self.assertLess(len(c.token_ids), 4000)
            self.assertEqual(len(c.token_ids),
                             len(everything.aborted[0].completions[c.index].token_ids))

        with self.assertRaises(grpc.RpcError) as e:
            self.server.rollout.Abort(rollout_pb2.AbortRequest(request_id="stream-1"), timeout=10)
        self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)

    def test_pause_keep_then_resume(self):
        stream = Stream(self.server, long_request("kept", max_tokens=600))
        stream.wait_tokens()
        kept = self.server.admin.Pause(admin_pb2.PauseRequest(mode=admin_pb2.PAUSE_MODE_KEEP),
                                       timeout=60)
        self.assertEqual(kept.requests_kept, 1)
        self.assertTrue(u.info(self.server).paused)
        with self.assertRaises(grpc.RpcError) as e:
            self.server.rollout.Generate(u.generate_request([1], max_tokens=2), timeout=10)
        self.assertEqual(e.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
        # Frozen on purpose: health stays SERVING (no watchdog alarm).
        self.assertTrue(u.serving(self.server))
        resumed = self.server.admin.Resume(admin_pb2.ResumeRequest(), timeout=60)
        self.assertEqual(resumed.requests_resumed, 1)
        tokens, _, finish, _ = stream.result()
        self.assertEqual([len(t) for t in tokens.values()], [600, 600])
        self.assertEqual(set(finish.values()), {rollout_pb2.FINISH_REASON_LENGTH})

    def test_pause_abort(self):
        stream = Stream(self.server, long_request("to-abort"))
        stream.wait_tokens()
        paused = self.server.admin.Pause(admin_pb2.PauseRequest(mode=admin_pb2.PAUSE_MODE_ABORT),
                                         timeout=60)
        self.assertEqual(paused.requests_aborted, 1)
        tokens, _, finish, last = stream.result()
        self.assertTrue(last.done)
        self.assertEqual(set(finish.values()), {ABORTED})

    def test_pause_wait_lets_work_finish(self):
        stream = Stream(self.server, long_request("finishes", max_tokens=200))
        stream.wait_tokens()
        self.server.admin.Pause(admin_pb2.PauseRequest(mode=admin_pb2.PAUSE_MODE_WAIT),
                                timeout=60)
        # Pause(WAIT) returned: the stream has finished in full.
        tokens, _, finish, _ = stream.result(timeout=5)
        self.assertEqual([len(t) for t in tokens.values()], [200, 200])
        self.assertEqual(set(finish.values()), {rollout_pb2.FINISH_REASON_LENGTH})

    def test_update_weights_reaches_every_worker(self):
        model = os.path.abspath(u.MODEL_DIR)
        before = u.info(self.server).weight_version
        loads = u.metric(self.server, "rollout_weight_update_seconds_count") or 0
        updated = self.server.admin.UpdateWeights(admin_pb2.UpdateWeightsRequest(path=model),
                                                  timeout=120)
        self.assertEqual(updated.weight_version, before + 1)
        server_info = u.info(self.server)
        self.assertEqual(server_info.weight_version, before + 1)
        self.assertEqual({w.weight_version for w in server_info.workers}, {before + 1})
        # Both workers serve it (concurrent requests spread over them).
        futures = [self.server.rollout.Generate.future(
            u.generate_request([4, 5], n=2, max_tokens=32, seed=i, ignore_eos=True), timeout=60)
            for i in range(4)]
        responses = [f.result() for f in futures]
        self.assertEqual({r.worker for r in responses}, {"0", "1"})
        for r in responses:
            for c in r.completions:
                self.assertEqual(c.weight_version_start, before + 1)
                self.assertEqual(c.weight_version_end, before + 1)
        too_new = u.generate_request([4, 5], max_tokens=2)
        too_new.min_weight_version = before + 2
        with self.assertRaises(grpc.RpcError) as e:
            self.server.rollout.Generate(too_new, timeout=10)
        self.assertEqual(e.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("min_weight_version", e.exception.details())

        # A retry of that update (its answer lost): the same explicit version and the same
        # checkpoint, here also named through a symlink outside the model roots whose target is
        # inside (paths are compared canonically). OK, the version unchanged, nothing loaded.
        link = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "ckpt-link")
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(model, link)
        for path in (model, link):
            again = self.server.admin.UpdateWeights(
                admin_pb2.UpdateWeightsRequest(path=path, version=before + 1), timeout=60)
            self.assertEqual(again.weight_version, before + 1, path)
            self.assertEqual(again.seconds, 0, path)
        self.assertEqual({w.weight_version for w in u.info(self.server).workers}, {before + 1})
        self.assertEqual(u.metric(self.server, "rollout_weight_update_seconds_count"), loads + 1)
        # The same version with another checkpoint is a conflict.
        real = os.path.dirname(os.path.realpath(os.path.join(model, "config.json")))
        with self.assertRaises(grpc.RpcError) as e:
            self.server.admin.UpdateWeights(
                admin_pb2.UpdateWeightsRequest(path=real, version=before + 1), timeout=60)
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        # The model roots default to the model's directory as rolloutd found it (in the runfiles,
        # a tree of symlinks) and to where its files really are: the real path is accepted too.
        self.assertNotEqual(real, model)
        newer = self.server.admin.UpdateWeights(admin_pb2.UpdateWeightsRequest(path=real),
                                                timeout=120)
        self.assertEqual(newer.weight_version, before + 2)
        self.assertGreater(newer.seconds, 0)
        # An older version than the one serving, even with the serving path, is refused.
        with self.assertRaises(grpc.RpcError) as e:
            self.server.admin.UpdateWeights(
                admin_pb2.UpdateWeightsRequest(path=real, version=before + 1), timeout=60)
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("must be greater than the current weight version", e.exception.details())


if __name__ == "__main__":
    unittest.main()
