"""A worker that keeps crashing (here: a checkpoint whose config.json reads but whose weights do
not) is restarted with a growing back-off, and reported: health of "rollout.v1.Rollout" stays
NOT_SERVING, GetServerInfo shows it RESTARTING with its restart count, rollout_worker_crashloop is
1, and Generate answers UNAVAILABLE.
"""

import os
import shutil
import tempfile
import unittest

import grpc

from rollout.v1 import rollout_pb2
from tests.e2e import e2e_util as u


class CrashLoopTest(unittest.TestCase):
    def setUp(self):
        model = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        for name in ("config.json", "generation_config.json"):
            shutil.copy(os.path.join(u.MODEL_DIR, name), model)
        with open(os.path.join(model, "model.safetensors"), "wb") as f:
            f.write(b"\x08\x00\x00\x00\x00\x00\x00\x00{broken}")
        config = ('model { path: "%s" }\n'
                  'workers { count: 1 devices: "cpu" restart_backoff_max_seconds: 1 }\n' % model)
        self.server = u.start_server(config)
        self.addCleanup(self.server.stop)

    def test_back_off_is_reported(self):
        u.wait_metric(self.server, "rollout_worker_crashloop", {"worker": "0"}, lambda v: v == 1)
        u.wait_metric(self.server, "rollout_worker_restarts_total", {"worker": "0"},
                      lambda v: v >= 2)
        self.assertFalse(u.serving(self.server))
        self.assertEqual(u.metric(self.server, "rollout_worker_ready", {"worker": "0"}), 0)
        info = u.info(self.server)
        self.assertEqual(info.ready_workers, 0)
        self.assertIn(info.workers[0].state, (rollout_pb2.WORKER_STATE_RESTARTING,
                                              rollout_pb2.WORKER_STATE_STARTING))
        self.assertGreaterEqual(info.workers[0].restarts, 2)
        self.assertTrue(u.wait_for(
            lambda: u.info(self.server).workers[0].state == rollout_pb2.WORKER_STATE_RESTARTING,
            10))
        with self.assertRaises(grpc.RpcError) as e:
            self.server.rollout.Generate(u.generate_request([1, 2], max_tokens=2), timeout=10)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)
        stderr = self.server.stderr_text()
        self.assertIn("model.safetensors", stderr)  # the worker says why it cannot start
        self.assertIn("failure 2 in a row", stderr)  # logged before restart 2


if __name__ == "__main__":
    unittest.main()
