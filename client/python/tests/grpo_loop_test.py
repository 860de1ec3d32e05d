"""The example GRPO loop (examples/grpo_loop.py): its reward and advantages, and two iterations
with one weight update against a fake server (the run against the real rolloutd and the embedded
model is in e2e_workers_test.py)."""
import json
import math
import os
import sys

import pytest

from fakes import FakeServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import grpo_loop  # noqa: E402
from rollout_client import Completion, FinishReason  # noqa: E402


def test_group_advantages():
    adv = grpo_loop.group_advantages([1.0, 2.0, 3.0, 6.0])
    assert sum(adv) == pytest.approx(0.0, abs=1e-9)
    assert math.sqrt(sum(a * a for a in adv) / 4) == pytest.approx(1.0, rel=1e-5)
    assert adv[3] > adv[2] > adv[1] > adv[0]
    assert grpo_loop.group_advantages([0.5] * 4) == [0.0] * 4  # no signal
    assert grpo_loop.group_advantages([1.0, 3.0], normalize_std=False) == [-1.0, 1.0]
    assert grpo_loop.group_advantages([]) == []


def test_reward():
    c = Completion(index=0, token_ids=[7, 14, 1, 2], finish_reason=FinishReason.LENGTH)
    assert grpo_loop.reward(c, max_tokens=4) == pytest.approx(0.5 - 0.1)
    c.finish_reason = FinishReason.STOP
    assert grpo_loop.reward(c, max_tokens=8, stop_bonus=0.5) == pytest.approx(0.5 - 0.05 + 0.5)
    assert grpo_loop.reward(Completion(index=0, token_ids=[]), max_tokens=4) == 0.0


def test_two_iterations_with_one_weight_update(tmp_path):
    summary = tmp_path / "summary.json"
    checkpoint = tmp_path / "step-1"
    checkpoint.mkdir()
    with FakeServer(admin_token="tok") as server:
        rc = grpo_loop.main(["--endpoint", server.endpoint, "--admin-token", "tok",
                             "--iterations", "2", "--batch-size", "3", "--group-size", "4",
                             "--max-tokens", "6", "--checkpoint", str(checkpoint),
                             "--json-summary", str(summary), "--run-id", "t"])
        assert rc == 0
    stats = json.loads(summary.read_text())
    assert [s["iteration"] for s in stats] == [0, 1]
    assert all(s["completions"] == 12 and s["generated_tokens"] == 72 for s in stats)
    assert all(s["tokens_per_second"] > 0 for s in stats)
    assert stats[0]["weight_versions"] == [1] and stats[0]["update_version"] == 2
    assert stats[1]["weight_versions"] == [2] and stats[1]["update_version"] is None
    # One update, between the iterations, inside Pause/Resume, with the token.
    assert [(c.request.path, c.request.version) for c in server.calls["UpdateWeights"]] == [
        (str(checkpoint), 2)]
    assert len(server.calls["Pause"]) == len(server.calls["Resume"]) == 1
    assert server.calls["UpdateWeights"][0].metadata["authorization"] == "Bearer tok"
    generates = server.calls["Generate"]
    assert len(generates) == 6
    assert [g.request.min_weight_version for g in generates] == [1, 1, 1, 2, 2, 2]
    assert all(g.request.logprobs.sampled and g.request.n == 4 for g in generates)
    assert len({g.request.sampling.seed for g in generates}) == 6  # a seed per group
    assert {g.request.request_id for g in generates} == {
        f"grpo-t-it{i}-g{j}" for i in range(2) for j in range(3)}


def test_replicas_get_the_same_explicit_version(tmp_path):
    summary = tmp_path / "summary.json"
    with FakeServer(weight_version=1) as a, FakeServer(weight_version=3) as b:
        assert grpo_loop.main(["--endpoint", a.endpoint, "--endpoint", b.endpoint,
                               "--iterations", "2", "--checkpoint", str(tmp_path),
                               "--json-summary", str(summary)]) == 0
        versions = [c.request.version for c in a.calls["UpdateWeights"] + b.calls["UpdateWeights"]]
        generates = a.calls["Generate"] + b.calls["Generate"]
    assert versions == [4, 4]
    stats = json.loads(summary.read_text())
    assert stats[0]["update_version"] == 4 and stats[1]["weight_versions"] == [4]
    assert sorted({g.request.min_weight_version for g in generates}) == [1, 4]


def test_without_checkpoint_weights_stay(tmp_path):
    summary = tmp_path / "summary.json"
    with FakeServer() as server:
        assert grpo_loop.main(["--endpoint", server.endpoint, "--iterations", "2",
                               "--json-summary", str(summary)]) == 0
        assert not server.calls["UpdateWeights"]
    assert [s["weight_versions"] for s in json.loads(summary.read_text())] == [[1], [1]]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
