"""End-to-end: the client and the example GRPO loop against rolloutd with its rollout-worker
(both from the runfiles), serving the embedded tiny model (tests/data/tiny_qwen3_5) on the CPU:
a group of n with logprobs, seeded reproducibility and exact ReplaySSM, streaming, Score, Abort,
UpdateWeights with min_weight_version, and examples/grpo_loop.py for two iterations with one
weight update.
"""
import json
import os
import subprocess
import sys
import threading

import grpc
import pytest

import rollout_client
from rollout_client import (NO_RETRY, FinishReason, HealthStatus, ReplaySsmMode, RetryPolicy,
                            RolloutClient, RolloutError)
from rolloutd import Rolloutd, checkpoint

TOKEN = "e2e-token"
CONFIG = "shutdown_grace_seconds: 5\n"
HERE = os.path.dirname(os.path.abspath(__file__))


def _example(name):
    from rolloutd import runfile
    return runfile(f"client/python/examples/{name}") or os.path.join(HERE, "..", "examples",
                                                                      name)


@pytest.fixture(scope="module")
def server():
    with Rolloutd(CONFIG, admin_token=TOKEN) as s:
        with RolloutClient(s.endpoint) as c:
            c.wait_ready(300)  # a worker loaded the model
        yield s


@pytest.fixture
def client(server):
    with RolloutClient(server.endpoint, admin_token=TOKEN, timeout=300,
                       retry=RetryPolicy(max_attempts=4, initial_backoff=0.2)) as c:
        yield c


def test_server_is_ready(client):
    assert client.health("rollout.v1.Rollout") is HealthStatus.SERVING
    info = client.server_info()
    assert info.ready_workers >= 1 and info.workers[0].state.value == "READY"


def test_generate_a_group_of_n(client):
    vocab = client.server_info().model.vocab_size
    r = client.generate([11, 12, 13, 14], n=4, sampling={"max_tokens": 8, "seed": 1},
                        logprobs=True, top_logprobs=3)
    assert r.n == 4 and [c.index for c in r.completions] == [0, 1, 2, 3]
    assert r.seed == 1 and r.worker
    assert r.usage.prompt_tokens == 4 and r.usage.completion_tokens == r.completion_tokens
    for c in r.completions:
        assert 1 <= len(c.token_ids) <= 8
        assert all(0 <= t < vocab for t in c.token_ids)
        assert c.finish_reason in (FinishReason.STOP, FinishReason.LENGTH)
        if c.finish_reason is FinishReason.LENGTH:
            assert len(c.token_ids) == 8
        assert len(c.logprobs) == len(c.token_ids) and all(lp <= 0 for lp in c.logprobs)
        assert len(c.top_logprobs) == len(c.token_ids)
        assert all(len(row) == 3 for row in c.top_logprob_token_ids)
        for lp, row in zip(c.logprobs, c.top_logprobs):
            assert row == sorted(row, reverse=True) and lp <= row[0] + 1e-5
        assert c.weight_version_start == c.weight_version_end
    assert r.timing.total_seconds >= r.timing.time_to_first_token_seconds >= 0


def test_seeded_groups_are_reproducible_and_replay_ssm_is_exact(client):
    kwargs = dict(n=3, sampling={"max_tokens": 12, "seed": 42, "ignore_eos": True},
                  logprobs=True)
    a = client.generate([5, 6, 7], replay_ssm="off", **kwargs)
    b = client.generate([5, 6, 7], replay_ssm="off", **kwargs)
    on = client.generate([5, 6, 7], replay_ssm="on", **kwargs)
    assert [c.token_ids for c in a.completions] == [c.token_ids for c in b.completions]
    assert on.replay_ssm_mode is ReplaySsmMode.ON
    # fp32 ReplaySSM is exact: same tokens as plain decode for the same seed.
    assert [c.token_ids for c in on.completions] == [c.token_ids for c in a.completions]
    for x, y in zip(on.completions, a.completions):
        assert x.logprobs == pytest.approx(y.logprobs, abs=1e-4)
        assert x.replay_ssm_applied or x.replay_ssm_fallback_reason.value != "NONE"


def test_batch_of_groups(client):
    groups = client.generate_batch([[1, 2], [3, 4], [5, 6]], n=2,
                                   sampling={"max_tokens": 4, "seed": 3})
    assert [g.prompt_token_ids for g in groups] == [[1, 2], [3, 4], [5, 6]]
    assert all(g.n == 2 for g in groups)


def test_stream_matches_unary(client):
    kwargs = dict(n=2, sampling={"max_tokens": 10, "seed": 7}, logprobs=True, top_logprobs=2)
    unary = client.generate([9, 8, 7], **kwargs)
    with client.generate_stream([9, 8, 7], **kwargs) as stream:
        chunks = list(stream)
        streamed = stream.result()
    assert chunks[-1].done and chunks[-1].usage is not None
    assert [c.token_ids for c in streamed.completions] == [c.token_ids
                                                           for c in unary.completions]
    for s, u in zip(streamed.completions, unary.completions):
        assert s.logprobs == pytest.approx(u.logprobs, abs=1e-5)
        assert s.finish_reason is u.finish_reason


def test_score_reproduces_the_sampled_logprobs(client):
    prompt = [21, 22, 23]
    group = client.generate(prompt, n=2, sampling={"max_tokens": 6, "seed": 5}, logprobs=True)
    scored = client.score(prompt, [c.token_ids for c in group.completions])
    for c, s in zip(group.completions, scored.completions):
        assert s.logprobs == pytest.approx(c.logprobs, abs=1e-4)


def test_abort_returns_partial_tokens(client):
    with client.generate_stream([1, 2, 3], n=1,
                                sampling={"max_tokens": 4000, "ignore_eos": True}) as stream:
        chunks = iter(stream)
        next(chunks)
        aborted = client.abort(stream.request_id)
        assert stream.request_id in aborted.request_ids
        result = stream.result()
    assert result.completions[0].finish_reason is FinishReason.ABORTED
    assert len(result.completions[0].token_ids) < 4000


def test_update_weights_and_min_weight_version(server, client):
    before = client.server_info().weight_version
    updated = client.update_weights(checkpoint())[server.endpoint]
    assert updated.weight_version == before + 1 and updated.seconds >= 0
    # Repeating it (a retry whose first answer was lost) with the explicit version: OK, no bump.
    again = client.update_weights(checkpoint(), version=updated.weight_version)[server.endpoint]
    assert again.weight_version == updated.weight_version and again.seconds == 0
    assert client.server_info().weight_version == updated.weight_version
    r = client.generate([1, 2], n=2, sampling={"max_tokens": 4},
                        min_weight_version=updated.weight_version)
    assert r.weight_versions == [updated.weight_version]
    with pytest.raises(RolloutError) as err:
        client.generate([1, 2], min_weight_version=updated.weight_version + 100)
    assert err.value.code == grpc.StatusCode.FAILED_PRECONDITION


def test_a_full_queue_is_retried_until_admitted():
    """rolloutd answers RESOURCE_EXHAUSTED while its admission queue is full; the client backs
    off and retries until the running request ends and the call is admitted."""
    config = CONFIG + "admission { max_queued_requests: 1 }\n"
    with Rolloutd(config) as server, RolloutClient(server.endpoint, timeout=120) as client:
        client.wait_ready(300)
        small = dict(sampling={"max_tokens": 2})
        with client.generate_stream([1, 2, 3], sampling={"max_tokens": 4000,
                                                         "ignore_eos": True}) as running:
            next(iter(running))  # admitted and producing tokens: the queue is full
            with pytest.raises(RolloutError) as err:
                client.generate([4, 5], retry=NO_RETRY, **small)
            assert err.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "admission queue full" in err.value.message
            threading.Timer(0.5, running.cancel).start()  # frees the queue in a while
            patient = RetryPolicy(max_attempts=200, initial_backoff=0.05, max_backoff=0.2,
                                  max_total_seconds=60)
            result = client.generate([4, 5], retry=patient, **small)
        assert result.attempts > 1 and result.n == 1 and result.completions[0].token_ids


def test_grpo_loop_two_iterations_with_one_weight_update(server, tmp_path):
    summary = tmp_path / "summary.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROLLOUT_")}
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(
        rollout_client.__file__)))
    proc = subprocess.run(
        [sys.executable, _example("grpo_loop.py"), "--endpoint", server.endpoint,
         "--admin-token", TOKEN, "--iterations", "2", "--batch-size", "4", "--group-size", "4",
         "--max-tokens", "16", "--checkpoint", checkpoint(), "--json-summary", str(summary)],
        capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stats = json.loads(summary.read_text())
    assert len(stats) == 2
    assert stats[0]["update_version"] is not None and stats[1]["update_version"] is None
    assert stats[1]["weight_versions"] == [stats[0]["update_version"]]
    assert all(s["completions"] == 16 and s["tokens_per_second"] > 0 for s in stats)
    assert "tokens/s" in proc.stderr and "reward mean" in proc.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider", "-rs"]))
