"""Helpers for the end-to-end tests: a real rolloutd with real rollout-worker processes.

    server = start_server('workers { count: 2 devices: "cpu" devices: "cpu" }')
    wait_ready(server, workers=2)
    pids = worker_pids(server)          # {index: pid} of the live worker processes

Every wait polls with a deadline (no fixed sleeps as synchronisation).
"""

import json
import os
import struct
import threading
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


def print_server_log(server, lines=80):
    """Prints the end of rolloutd's stderr (its workers' too): kept in the test log, so a failure
    in CI shows what the server saw (kills, restarts, re-runs)."""
    text = server.stderr_text().splitlines()
    print("---- rolloutd stderr (last %d of %d lines) ----" % (min(lines, len(text)), len(text)))
    print("\n".join(text[-lines:]))


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


def worker_children(parent_pid):
    """{pid: argv} of the live (not zombie) rollout-worker children of `parent_pid` (from /proc)."""
    children = {}
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
        if fields[0] == "Z" or int(fields[1]) != parent_pid:
            continue
        if argv and argv[0].endswith("rollout-worker"):
            children[int(entry)] = argv
    return children


def worker_pids(server):
    """{worker index: pid} of rolloutd's live rollout-worker children."""
    pids = {}
    for pid, argv in worker_children(server.process.pid).items():
        for arg in argv:
            if arg.startswith("--index="):
                pids[int(arg[len("--index="):])] = pid
    return pids


def metrics(server):
    return server.metrics_text()


def metric(server, name, labels=None):
    return metric_value(server.metrics_text(), name, labels)


def metric_sum(server, name, labels=None):
    """The sum of every series of `name` whose labels include `labels` (0 if none)."""
    want = ['%s="%s"' % kv for kv in (labels or {}).items()]
    total = 0.0
    for line in metrics(server).splitlines():
        series, _, value = line.rpartition(" ")
        if line.startswith("#") or not (series == name or series.startswith(name + "{")):
            continue
        if all(w in series for w in want):
            total += float(value)
    return total


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


# Per-worker gauges that hold the resources of running work; all are 0 on an idle worker.
IDLE_GAUGES = ("rollout_state_slots_used", "rollout_kv_blocks_used",
               "rollout_replayssm_rings_used", "rollout_requests_running",
               "rollout_requests_waiting")


def busy_gauges(server, workers):
    """{"name{worker}": value} of every IDLE_GAUGES series (and rolloutd's own queue and admission
    budget) not at 0.

    A missing series (a restarted worker before its first stats snapshot) counts as not idle.
    """
    text = metrics(server)
    series = [(name, {"worker": str(w)}) for name in IDLE_GAUGES for w in range(workers)]
    series.append(("rollout_requests_waiting", {"worker": "frontend"}))
    series.append(("rollout_queue_tokens", None))  # admission budget held by unfinished calls
    busy = {}
    for name, labels in series:
        value = metric_value(text, name, labels)
        if value != 0:
            busy["%s%s" % (name, labels or "")] = value
    return busy


def wait_idle(server, workers, timeout=30):
    """Until busy_gauges is empty: every slot, KV block and ReplaySSM ring back, nothing running
    or waiting on any worker or in rolloutd's queue, no admission budget held. Returns the
    seconds it took."""
    start = time.time()
    last = [None]

    def idle():
        last[0] = busy_gauges(server, workers)
        return not last[0]

    if not wait_for(idle, timeout, interval=0.1):
        raise AssertionError("not idle after %ss: %s" % (timeout, last[0]))
    return elapsed(start)


def seeded_requests(count, n=4, max_tokens=48, prompt_seed=0, prefix="load"):
    """`count` seeded groups (ignore_eos, sampled logprobs) with varied prompts.

    ReplaySSM alternates ON / OFF, never AUTO: AUTO picks the ring or the plain path from the
    decode batch size, which a re-run or another load changes; both give the same tokens but
    logprobs may differ in the last bits (fp32 summation order). ON and OFF replay bit for bit.
    """
    requests = []
    for i in range(count):
        k = i + prompt_seed
        mode = rollout_pb2.REPLAY_SSM_MODE_ON if i % 2 == 0 else rollout_pb2.REPLAY_SSM_MODE_OFF
        requests.append(generate_request([(7 * k + j) % 1000 + 1 for j in range(3 + k % 5)], n=n,
                                         max_tokens=max_tokens, seed=1000 + k, ignore_eos=True,
                                         logprobs=True, replay_ssm=mode,
                                         request_id="%s-%d" % (prefix, i)))
    return requests


class StreamResult:
    """One GenerateStream call, assembled: per completion index its tokens, logprobs, finish
    reason and the weight version of each token."""

    def __init__(self):
        self.tokens, self.logprobs, self.finish, self.versions = {}, {}, {}, {}
        self.last = None

    def add(self, chunk):
        """Adds a chunk; returns how many tokens it carried."""
        count = 0
        for d in chunk.deltas:
            have = self.tokens.setdefault(d.index, [])
            # Never re-sent, never skipped (also across a worker's death and a re-run).
            assert d.offset == len(have), "delta offset %d, have %d" % (d.offset, len(have))
            have.extend(d.token_ids)
            self.logprobs.setdefault(d.index, []).extend(d.logprobs)
            self.versions.setdefault(d.index, []).extend([d.weight_version] * len(d.token_ids))
            if d.finish_reason:
                assert d.index not in self.finish, "completion %d ended twice" % d.index
                self.finish[d.index] = d.finish_reason
            count += len(d.token_ids)
        self.last = chunk
        return count

    def output(self):
        """{index: (tokens, logprobs, finish reason)}: what seeded runs must reproduce."""
        return {i: (self.tokens[i], self.logprobs.get(i, []), self.finish.get(i))
                for i in self.tokens}


class StreamLoad:
    """Runs GenerateStream calls at once, one reader thread each.

        load = StreamLoad(server, seeded_requests(16)).start()
        load.wait_tokens(64)                    # mid-run: streams flowing
        results, errors = load.join()           # {request_id: StreamResult}, {request_id: error}

    on_tokens(total), if given, is called from the readers with the running total of tokens
    received by all streams (for disturbing the run at a chosen point).
    """

    def __init__(self, server, requests, timeout=300, on_tokens=None):
        self.server = server
        self.requests = list(requests)
        self.timeout = timeout
        self.on_tokens = on_tokens
        self.results, self.errors = {}, {}
        self.tokens = 0
        self.cond = threading.Condition()
        self.threads = []
        self.start_time = None
        self.seconds = None

    def start(self):
        self.start_time = time.time()
        self.threads = [threading.Thread(target=self._read, args=(r,), daemon=True)
                        for r in self.requests]
        for t in self.threads:
            t.start()
        return self

    def _read(self, request):
        result = StreamResult()
        try:
            for chunk in self.server.rollout.GenerateStream(request, timeout=self.timeout):
                count = result.add(chunk)
                with self.cond:
                    self.tokens += count
                    total = self.tokens
                    self.cond.notify_all()
                if self.on_tokens is not None and count:
                    self.on_tokens(total)
            assert result.last is not None and result.last.done, "stream ended without done"
            with self.cond:
                self.results[request.request_id] = result
        except Exception as e:  # noqa: BLE001 (reported by join)
            with self.cond:
                self.errors[request.request_id] = e
        finally:
            with self.cond:
                self.cond.notify_all()

    def wait_tokens(self, count, timeout=60):
        """Until the streams together received `count` tokens (AssertionError if they end or
        the time runs out first)."""
        deadline = time.time() + timeout
        with self.cond:
            while self.tokens < count:
                left = deadline - time.time()
                done = len(self.results) + len(self.errors) == len(self.requests)
                if left <= 0 or done:
                    raise AssertionError("%d of %d tokens after %.0fs (streams ended: %s)" %
                                         (self.tokens, count, timeout - left, done))
                self.cond.wait(min(left, 1))

    def join(self, timeout=None):
        """Waits for every stream; returns (results, errors) keyed by request_id."""
        deadline = time.time() + (self.timeout + 30 if timeout is None else timeout)
        for t in self.threads:
            t.join(max(0, deadline - time.time()))
            assert not t.is_alive(), "a stream did not end within its deadline"
        self.seconds = elapsed(self.start_time)
        return self.results, self.errors

    def outputs(self):
        return {rid: r.output() for rid, r in self.results.items()}


def run_streams(server, requests, **kwargs):
    """StreamLoad(...).start().join(): ({request_id: StreamResult}, {request_id: error})."""
    return StreamLoad(server, requests, **kwargs).start().join()


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
