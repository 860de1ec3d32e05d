"""rolloutd and its workers run as an unprivileged user and generate.

As root (CI runs as root), rolloutd, rollout-worker and the tiny model are copied into a fresh
directory under /tmp that user 65534 (nobody) can read (Bazel's runfiles under /root cannot be), and
rolloutd is started through `setpriv --reuid=65534 --regid=65534 --clear-groups` with HOME and TMPDIR
in a directory of that user, from a working directory it cannot write. As another user the test runs
the same way without setpriv. Checked: both processes run under that uid, a group generates, the
workers' socket directory and sockets belong to that uid with owner-only modes, and SIGTERM ends
rolloutd with status 0.
"""

import os
import shutil
import signal
import stat
import subprocess
import tempfile
import unittest

import grpc

from rollout.v1 import rollout_pb2
from rollout.v1 import rollout_pb2_grpc
from tests.e2e import e2e_util as u
from tests.server.rolloutd_process import ROLLOUTD, read_start_lines, wait_for

RUNFILES = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKER = os.path.join(RUNFILES, "worker", "rollout-worker")
NOBODY = 65534


def proc_uid(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Uid:"):
                return int(line.split()[1])  # the real uid
    raise AssertionError("no Uid line for pid %d" % pid)


def worker_socket(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        argv = f.read().decode().split("\0")
    for arg in argv:
        if arg.startswith("--socket="):
            return arg[len("--socket="):]
    raise AssertionError("worker %d has no --socket= argument: %r" % (pid, argv))


class NonRootTest(unittest.TestCase):
    def setUp(self):
        self.as_root = os.geteuid() == 0
        self.uid = NOBODY if self.as_root else os.geteuid()
        self.gid = NOBODY if self.as_root else os.getegid()
        # /tmp: every user can reach it (TEST_TMPDIR lies under /root when root runs Bazel).
        self.base = tempfile.mkdtemp(
            prefix="rollout-nonroot-",
            dir="/tmp" if self.as_root else os.environ.get("TEST_TMPDIR", "/tmp"))
        self.addCleanup(shutil.rmtree, self.base, ignore_errors=True)
        os.chmod(self.base, 0o755)
        self.rolloutd = os.path.join(self.base, "rolloutd")
        self.worker = os.path.join(self.base, "rollout-worker")
        self.model = os.path.join(self.base, "model")
        shutil.copy(ROLLOUTD, self.rolloutd)
        shutil.copy(WORKER, self.worker)
        # The runfiles model is a tree of symlinks into /root: copy the contents.
        shutil.copytree(u.MODEL_DIR, self.model, symlinks=False)
        for root, dirs, files in os.walk(self.base):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
            for name in files:
                os.chmod(os.path.join(root, name), 0o755)
        # HOME and TMPDIR: the only places the user may write.
        self.home = os.path.join(self.base, "home")
        self.tmp = os.path.join(self.home, "tmp")
        os.makedirs(self.tmp)
        for path in (self.home, self.tmp):
            os.chown(path, self.uid, self.gid)
            os.chmod(path, 0o700)
        self.config = os.path.join(self.base, "rolloutd.textproto")
        with open(self.config, "w") as f:
            f.write('model { path: "%s" }\nworkers { count: 1 devices: "cpu" }\n' % self.model)
        os.chmod(self.config, 0o644)
        self.process = None

    def start(self):
        argv = [self.rolloutd, "--config=" + self.config, "--worker_binary=" + self.worker,
                "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0"]
        if self.as_root:
            argv = ["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.gid,
                    "--clear-groups", "--"] + argv
        env = {"PATH": "/usr/bin:/bin", "HOME": self.home, "TMPDIR": self.tmp}
        self.stderr_path = os.path.join(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR")),
                                        "rolloutd.stderr")
        self.stderr = open(self.stderr_path, "w")
        self.addCleanup(self.stderr.close)
        # cwd: the copy's directory, owned by root (or the test user) and not writable by the
        # service user when run as root: rolloutd must not need a writable working directory.
        self.process = subprocess.Popen(argv, cwd=self.base, env=env, stdout=subprocess.PIPE,
                                        stderr=self.stderr, text=True)
        self.addCleanup(self.kill)
        lines = read_start_lines(self.process, 2)
        self.assertEqual(len(lines), 2, "rolloutd did not start: %r\n%s" %
                         (lines, self.stderr_text()))
        self.assertTrue(lines[0].startswith("listening on "), lines)
        self.channel = grpc.insecure_channel(lines[0][len("listening on "):])
        self.addCleanup(self.channel.close)
        self.rollout = rollout_pb2_grpc.RolloutStub(self.channel)

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stderr_text(self):
        self.stderr.flush()
        with open(self.stderr_path) as f:
            return f.read()

    def info(self):
        return self.rollout.GetServerInfo(rollout_pb2.GetServerInfoRequest(), timeout=10)

    def test_serves_as_unprivileged_user(self):
        self.start()
        ready = wait_for(lambda: self.info().ready_workers >= 1, timeout=u.READY_TIMEOUT_S * 2)
        self.assertTrue(ready, "worker not ready:\n" + self.stderr_text())

        # Both processes run as the unprivileged user (setpriv execs rolloutd in place).
        self.assertEqual(proc_uid(self.process.pid), self.uid)
        workers = {}
        self.assertTrue(wait_for(
            lambda: workers.update(u.worker_children(self.process.pid)) or workers, timeout=30))
        for pid in workers:
            self.assertEqual(proc_uid(pid), self.uid)

        response = self.rollout.Generate(
            rollout_pb2.GenerateRequest(prompt_token_ids=[1, 2, 3], n=2,
                                        sampling=rollout_pb2.SamplingParams(max_tokens=8, seed=1,
                                                                            ignore_eos=True)),
            timeout=120)
        self.assertEqual(len(response.completions), 2)
        for completion in response.completions:
            self.assertEqual(len(completion.token_ids), 8)

        # The workers' sockets: in a private directory of the user, owner-only.
        for pid in workers:
            socket = worker_socket(pid)
            directory = os.path.dirname(socket)
            if self.as_root:
                self.assertTrue(directory.startswith(self.tmp + "/"), directory)
            dir_stat = os.stat(directory)
            self.assertEqual(dir_stat.st_uid, self.uid, directory)
            self.assertEqual(stat.S_IMODE(dir_stat.st_mode), 0o700, directory)
            sock_stat = os.stat(socket)
            self.assertTrue(stat.S_ISSOCK(sock_stat.st_mode), socket)
            self.assertEqual(sock_stat.st_uid, self.uid, socket)
            self.assertEqual(stat.S_IMODE(sock_stat.st_mode) & 0o077, 0, oct(sock_stat.st_mode))

        self.process.send_signal(signal.SIGTERM)
        self.assertEqual(self.process.wait(60), 0, self.stderr_text())


if __name__ == "__main__":
    unittest.main()
