"""Helpers for the end-to-end tests: a real rolloutd with real rollout-worker processes.

    server = start_server('workers { count: 2 devices: "cpu" devices: "cpu" }')
    wait_ready(server, workers=2)
    pids = worker_pids(server)          # {index: pid} of the live worker processes

Every wait polls with a deadline (no fixed sleeps as synchronisation).
"""

import json
import os
import struct
import time

import grpc
import numpy as np

import health_pb2
from rollout.v1 import rollout_pb2
from tests.server.rolloutd_process import RolloutdProcess, metric_value, wait_for  # noqa: F401

VOCAB = 1031  # tests/data/tiny_qwen3_5
MODEL_DIR = "tests/data/tiny_qwen3_5"  # relative to the runfiles root (the tests' cwd)
READY_TIMEOUT_S = 60


def start_server(config_text=None, extra_args=()):
    """Starts rolloutd (ports 0) and waits until `workers` workers serve (see wait_ready)."""
    server = RolloutdProcess(config_text=config_text, extra_args=extra_args)
    server.start()
    return server


def info(server):
    return server.rollout.GetServerInfo(rollout_pb2.GetServerInfoRequest(), timeout=10)


def serving(server):
    reply = server.health.Check(health_pb2.HealthCheckRequest(service="rollout.v1.Rollout"),
                                timeout=10)
    return reply.status == health_pb2.HealthCheckResponse.SERVING


def wait_ready(server, workers=1, timeout=READY_TIMEOUT_S):
    """Until `workers` workers are ready and health says SERVING."""
    ok = wait_for(lambda: info(server).ready_workers >= workers and serving(server), timeout)
    if not ok:
        raise AssertionError("workers not ready after %ss: %s\nrolloutd stderr:\n%s" %
                             (timeout, info(server).workers, server.stderr_text()))


def worker_pids(server):
    """{worker index: pid} of rolloutd's live rollout-worker children (from /proc)."""
    pids = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        # Field 4 of /proc/<pid>/stat is the parent pid (after "(comm)", which may hold spaces).
        fields = stat[stat.rfind(")") + 2:].split()
        if fields[0] == "Z" or int(fields[1]) != server.process.pid:
            continue
        if not argv or not argv[0].endswith("rollout-worker"):
            continue
        for arg in argv:
            if arg.startswith("--index="):
                pids[int(arg[len("--index="):])] = int(entry)
    return pids


def metrics(server):
    return server.metrics_text()


def metric(server, name, labels=None):
    return metric_value(server.metrics_text(), name, labels)


def wait_metric(server, name, labels, predicate, timeout=20):
    """Polls /metrics until predicate(value) holds (value None when the series is absent)."""
    last = [None]

    def check():
        last[0] = metric(server, name, labels)
        return last[0] is not None and predicate(last[0])

    if not wait_for(check, timeout, interval=0.1):
        raise AssertionError("%s%s = %s after %ss" % (name, labels or "", last[0], timeout))
    return last[0]


def generate_request(prompt, n=1, max_tokens=16, seed=None, temperature=None, ignore_eos=False,
                     logprobs=False, top_k_logprobs=0, replay_ssm=None, request_id=""):
    r = rollout_pb2.GenerateRequest(prompt_token_ids=list(prompt), n=n, request_id=request_id)
    r.sampling.max_tokens = max_tokens
    r.sampling.ignore_eos = ignore_eos
    if seed is not None:
        r.sampling.seed = seed
    if temperature is not None:
        r.sampling.temperature = temperature
    r.logprobs.sampled = logprobs
    r.logprobs.top_k = top_k_logprobs
    if replay_ssm is not None:
        r.replay_ssm = replay_ssm
    return r


def collect_stream(chunks):
    """Assembles GenerateStream chunks.

    Returns ({index: tokens}, {index: logprobs}, {index: finish reason}, last chunk).
    """
    tokens, logprobs, finish = {}, {}, {}
    last = None
    for chunk in chunks:
        for d in chunk.deltas:
            have = tokens.setdefault(d.index, [])
            assert d.offset == len(have), "delta offset %d, have %d" % (d.offset, len(have))
            have.extend(d.token_ids)
            logprobs.setdefault(d.index, []).extend(d.logprobs)
            if d.finish_reason:
                assert d.index not in finish, "completion %d ended twice" % d.index
                finish[d.index] = d.finish_reason
        last = chunk
    return tokens, logprobs, finish, last


def read_safetensors(path):
    """{name: numpy array} of a .safetensors file (the format is a JSON header + raw data)."""
    dtypes = {"F32": np.float32, "I32": np.int32, "I64": np.int64}
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype=dtypes[t["dtype"]]).reshape(t["shape"])
    return out


def log_softmax(logits):
    m = logits.max(axis=-1, keepdims=True)
    shifted = logits - m
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def elapsed(start):
    return time.time() - start
