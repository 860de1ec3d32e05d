"""The rollout-worker process on its own, through its internal API (rollout.worker.v1): it reports
what it serves, its unix socket is owner-only, it listens on no TCP port (no /metrics: rolloutd
pulls its stats), and SIGTERM drains: a running request finishes in full, then it exits 0.
"""

import os
import shutil
import signal
import stat
import subprocess
import tempfile
import unittest

import grpc

from rollout.worker.v1 import worker_pb2
from rollout.worker.v1 import worker_pb2_grpc
from tests.e2e import e2e_util as u

WORKER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "worker", "rollout-worker")


def tcp_listen_inodes():
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "0A":  # LISTEN
                        inodes.add(fields[9])
        except OSError:
            pass
    return inodes


def socket_inodes(pid):
    out = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(target[len("socket:["):-1])
    return out


class WorkerProcessTest(unittest.TestCase):
    def setUp(self):
        # Unix socket paths are short (107 bytes): not under TEST_TMPDIR.
        self.dir = tempfile.mkdtemp(prefix="worker-test-", dir="/tmp")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.socket = os.path.join(self.dir, "w.sock")
        self.stderr = open(os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "worker.stderr"),
                           "w+")
        self.process = subprocess.Popen(
            [WORKER, "--socket=" + self.socket, "--model=" + u.MODEL_DIR, "--device=cpu",
             "--index=3", "--threads=1", "--max_num_seqs=8"],
            stdout=self.stderr, stderr=self.stderr)
        self.addCleanup(self.cleanup)
        self.channel = grpc.insecure_channel("unix:" + self.socket)
        self.stub = worker_pb2_grpc.WorkerStub(self.channel)
        self.info = self.stub.GetInfo(worker_pb2.GetInfoRequest(), timeout=60,
                                      wait_for_ready=True)

    def cleanup(self):
        self.channel.close()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()

    def test_info(self):
        self.assertEqual(self.info.index, 3)
        self.assertEqual(self.info.device, "cpu")
        self.assertEqual(self.info.backend, "cpu")
        self.assertEqual(self.info.pid, self.process.pid)
        self.assertEqual(self.info.model.vocab_size, u.VOCAB)
        self.assertEqual(self.info.max_n, 8)
        self.assertGreater(len(self.info.model.layer_types), 0)

    def test_owner_only_socket_and_no_tcp_listener(self):
        mode = os.stat(self.socket).st_mode
        self.assertTrue(stat.S_ISSOCK(mode))
        self.assertEqual(mode & 0o077, 0, oct(mode))
        self.assertEqual(socket_inodes(self.process.pid) & tcp_listen_inodes(), set())

    def test_sigterm_drains_then_exits_zero(self):
        request = worker_pb2.GenerateRequest()
        request.request.CopyFrom(u.generate_request([1, 2, 3], n=2, max_tokens=200, seed=4,
                                                    temperature=1.0, ignore_eos=True))
        request.request.request_id = "drain-me"
        for field in ("top_p", "min_p"):
            setattr(request.request.sampling, field, 1.0 if field == "top_p" else 0.0)
        request.request.sampling.top_k = 0
        events = self.stub.Generate(request, timeout=120)
        first = next(events)
        self.assertTrue(first.accepted)
        self.process.send_signal(signal.SIGTERM)
        tokens = {0: 0, 1: 0}
        ends, done = [], None
        for event in events:
            for d in event.deltas:
                tokens[d.index] += len(d.token_ids)
            ends.extend(event.ends)
            if event.HasField("done"):
                done = event.done
        self.assertEqual(tokens, {0: 200, 1: 200})
        self.assertEqual(len(ends), 2)
        self.assertIsNotNone(done)
        self.assertEqual(done.code, 0)
        self.assertEqual(self.process.wait(timeout=30), 0)
        self.assertFalse(os.path.exists(self.socket))
        self.stderr.seek(0)
        self.assertIn("draining", self.stderr.read())


if __name__ == "__main__":
    unittest.main()
