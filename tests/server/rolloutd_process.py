"""Starts the real rolloutd binary for a test and gives typed stubs for it.

    with RolloutdProcess(config_text='admission { max_n: 8 }') as server:
        info = server.rollout.GetServerInfo(rollout_pb2.GetServerInfoRequest())

rolloutd runs with --listen/--metrics_listen on 127.0.0.1:0; the bound addresses are read from the
lines it prints ("listening on ...", "metrics on ...", and "health on ..." with health_listen). Its stderr goes to a file in the test's
temporary directory and is printed if start-up fails.
"""

import os
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request

import grpc

import health_pb2  # noqa: F401  (re-exported for tests)
import health_pb2_grpc
import reflection_pb2  # noqa: F401
import reflection_pb2_grpc
from rollout.v1 import admin_pb2_grpc
from rollout.v1 import rollout_pb2_grpc

ROLLOUTD = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "server", "rolloutd")
START_TIMEOUT_S = 60


def temp_dir():
    return os.environ.get("TEST_TMPDIR") or tempfile.gettempdir()


def write_temp(name, text):
    path = os.path.join(tempfile.mkdtemp(dir=temp_dir()), name)
    with open(path, "w") as f:
        f.write(text)
    return path


def read_start_lines(process, want, timeout=START_TIMEOUT_S):
    """The first `want` stdout lines rolloutd prints ("listening on ...", "metrics on ...", ...),
    stripped; fewer if it exits or `timeout` passes first."""
    lines = []

    def read_lines():
        for _ in range(want):
            line = process.stdout.readline()
            if not line:
                return
            lines.append(line.strip())

    reader = threading.Thread(target=read_lines, daemon=True)
    reader.start()
    reader.join(timeout)
    return list(lines)


class RolloutdProcess:
    def __init__(self, config_text=None, extra_args=(), secure_channel_credentials=None,
                 health_line=False):
        """health_line: the config sets health_listen, so a third line "health on" follows."""
        self.health_line = health_line
        self.health_address = None
        self.config_path = write_temp("rolloutd.textproto", config_text) if config_text is not None else None
        self.extra_args = list(extra_args)
        self.credentials = secure_channel_credentials
        self.process = None
        self.address = None
        self.metrics_address = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        args = [ROLLOUTD, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0"] + self.extra_args
        if self.config_path:
            args.append("--config=" + self.config_path)
        self.stderr_path = os.path.join(tempfile.mkdtemp(dir=temp_dir()), "rolloutd.stderr")
        self.stderr = open(self.stderr_path, "w")
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        want = 3 if self.health_line else 2
        lines = read_start_lines(self.process, want)
        if len(lines) != want or not lines[0].startswith("listening on ") or \
                not lines[1].startswith("metrics on ") or \
                (self.health_line and not lines[2].startswith("health on ")):
            self.process.kill()
            self.process.wait()
            raise RuntimeError("rolloutd did not start; stdout %r, stderr:\n%s" %
                               (lines, open(self.stderr_path).read()))
        self.address = lines[0][len("listening on "):]
        self.metrics_address = lines[1][len("metrics on "):]
        if self.health_line:
            self.health_address = lines[2][len("health on "):]
        if self.credentials is None:
            self.channel = grpc.insecure_channel(self.address)
        else:
            self.channel = grpc.secure_channel(self.address, self.credentials)
        self.rollout = rollout_pb2_grpc.RolloutStub(self.channel)
        self.admin = admin_pb2_grpc.AdminStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)
        self.reflection = reflection_pb2_grpc.ServerReflectionStub(self.channel)

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Sends `sig` and returns rolloutd's exit status."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        self.channel.close()
        self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        finally:
            self.stderr.close()

    def metrics_text(self):
        with urllib.request.urlopen("http://%s/metrics" % self.metrics_address, timeout=10) as r:
            return r.read().decode()

    def stderr_text(self):
        if not self.stderr.closed:
            self.stderr.flush()
        with open(self.stderr_path) as f:
            return f.read()


def metric_value(text, name, labels=None):
    """The value of one sample in Prometheus text `text` (None if absent)."""
    want = "{%s}" % ",".join('%s="%s"' % kv for kv in sorted((labels or {}).items())) if labels else ""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        series, _, value = line.rpartition(" ")
        if series == name + want:
            return float(value)
    return None


def wait_for(predicate, timeout=10.0, interval=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
