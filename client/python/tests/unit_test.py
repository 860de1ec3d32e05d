"""Pure unit tests: typed result mapping, request building, retry policy, hints, endpoints."""
import random
import sys

import grpc
import pytest

from fakes import make_generate_response, retry_info_status, stream_chunks
from rollout_client import (Completion, EndpointPicker, FinishReason, GenerateResult, HealthStatus,
                            PauseMode, ReplaySsmFallbackReason, ReplaySsmMode, RetryPolicy,
                            SamplingParams, ServerInfo, StreamAccumulator, StreamChunk,
                            build_abort_request, build_generate_request, build_score_request)
from rollout_client.cli import to_jsonable
from rollout_client.endpoints import ChannelConfig, normalize_endpoints
from rollout_client.errors import RolloutError
from rollout_client.proto import admin_pb2, rollout_pb2
from rollout_client.results import ReloadResult
from rollout_client.retry import is_message_size_error, retry_hint_seconds

RE = grpc.StatusCode.RESOURCE_EXHAUSTED
UNAVAILABLE = grpc.StatusCode.UNAVAILABLE


# -- typed results --------------------------------------------------------------------------

def test_completion_mapping_reshapes_top_logprobs():
    msg = rollout_pb2.Completion(
        index=2, token_ids=[5, 6, 7], logprobs=[-0.1, -0.2, -0.3],
        top_logprob_token_ids=[5, 1, 6, 2, 7, 3], top_logprobs=[-0.1, -2, -0.2, -3, -0.3, -4],
        finish_reason=rollout_pb2.FINISH_REASON_STOP, weight_version_start=3,
        weight_version_end=4, replay_ssm_applied=True,
        replay_ssm_fallback_reason=rollout_pb2.REPLAY_SSM_FALLBACK_REASON_RING_POOL_EXHAUSTED,
        num_preemptions=1)
    c = Completion.from_proto(msg)
    assert c.index == 2 and c.token_ids == [5, 6, 7] and c.num_tokens == 3
    assert c.logprobs == pytest.approx([-0.1, -0.2, -0.3])
    assert c.sum_logprobs == pytest.approx(-0.6)
    assert c.top_logprob_token_ids == [[5, 1], [6, 2], [7, 3]]
    flat = [x for row in c.top_logprobs for x in row]
    assert flat == pytest.approx([-0.1, -2, -0.2, -3, -0.3, -4])
    assert c.finish_reason is FinishReason.STOP and c.finish_reason == "STOP"
    assert (c.weight_version_start, c.weight_version_end) == (3, 4)
    assert c.replay_ssm_applied is True
    assert c.replay_ssm_fallback_reason is ReplaySsmFallbackReason.RING_POOL_EXHAUSTED
    assert c.num_preemptions == 1


def test_malformed_top_logprobs_rejected():
    msg = rollout_pb2.Completion(token_ids=[1, 2], top_logprob_token_ids=[1, 2, 3])
    with pytest.raises(ValueError, match="not a multiple"):
        Completion.from_proto(msg)


def test_unknown_enum_values_become_unknown():
    msg = rollout_pb2.Completion(token_ids=[1])
    msg.finish_reason = 42  # a value from a newer server (open enum)
    msg.replay_ssm_fallback_reason = 99
    c = Completion.from_proto(msg)
    assert c.finish_reason is FinishReason.UNKNOWN
    assert c.replay_ssm_fallback_reason is ReplaySsmFallbackReason.UNKNOWN


def test_generate_result_mapping():
    request = build_generate_request([1, 2, 3], 3, sampling={"max_tokens": 5, "seed": 7},
                                     logprobs=True, top_logprobs=2, replay_ssm="on")
    r = GenerateResult.from_proto(make_generate_response(request, weight_version=9),
                                  prompt_token_ids=request.prompt_token_ids, endpoint="x:1",
                                  attempts=2, client_seconds=0.5)
    assert r.request_id == request.request_id and r.n == 3
    assert r.prompt_token_ids == [1, 2, 3]
    assert r.seed == 7 and r.replay_ssm_mode is ReplaySsmMode.ON
    assert r.usage.prompt_tokens == 3 and r.usage.completion_tokens == 15
    assert r.timing.total_seconds == pytest.approx(0.02)
    assert r.weight_versions == [9] and r.completion_tokens == 15
    assert (r.endpoint, r.attempts, r.client_seconds) == ("x:1", 2, 0.5)
    for c in r.completions:
        assert len(c.logprobs) == 5 and len(c.top_logprobs) == 5
        assert all(len(row) == 2 for row in c.top_logprob_token_ids)
        assert c.replay_ssm_applied


def test_stream_accumulator_reassembles_the_unary_result():
    request = build_generate_request([10], 3, sampling={"max_tokens": 5}, logprobs=True,
                                     top_logprobs=3)
    response = make_generate_response(request)
    acc = StreamAccumulator(request.n, request.prompt_token_ids)
    chunks = [StreamChunk.from_proto(c) for c in stream_chunks(response, per_chunk=2)]
    assert chunks[0].seed == response.seed and chunks[0].replay_ssm_mode is ReplaySsmMode.AUTO
    assert chunks[-1].done and chunks[-1].usage is not None
    assert all(c.usage is None for c in chunks[:-1])
    for chunk in chunks:
        acc.add(chunk)
    assert acc.done
    expected = GenerateResult.from_proto(response, prompt_token_ids=[10])
    assert acc.result() == expected


def test_stream_accumulator_rejects_gaps():
    acc = StreamAccumulator(1)
    chunk = rollout_pb2.GenerateStreamChunk(request_id="r")
    chunk.deltas.add(index=0, offset=3, token_ids=[1])
    with pytest.raises(ValueError, match="offset 3"):
        acc.add(StreamChunk.from_proto(chunk))


def test_server_info_mapping():
    info = rollout_pb2.ServerInfo(version="1.2.3", weight_version=4, paused=True, ready_workers=2)
    info.model.vocab_size = 1031
    info.model.layer_types.extend([1, 2])
    info.limits.max_n = 64
    info.limits.max_requests_per_client = 4
    info.replay_ssm.supported_modes.extend([1, 2, 3])
    info.workers.add(index=1, state=rollout_pb2.WORKER_STATE_READY, device="cuda:1")
    s = ServerInfo.from_proto(info, endpoint="e:1")
    assert s.model.vocab_size == 1031 and s.model.layer_types == ["GATED_DELTANET",
                                                                  "FULL_ATTENTION"]
    assert s.limits.max_n == 64 and s.paused and s.ready_workers == 2
    assert s.limits.max_requests_per_client == 4
    assert s.replay_ssm.supported_modes == [ReplaySsmMode.ON, ReplaySsmMode.OFF,
                                            ReplaySsmMode.AUTO]
    assert s.workers[0].device == "cuda:1" and s.workers[0].state.value == "READY"
    assert ServerInfo.from_proto(rollout_pb2.ServerInfo()).model is None
    data = to_jsonable(s)
    assert "raw" not in data and data["workers"][0]["state"] == "READY"


def test_reload_result_mapping():
    msg = admin_pb2.ReloadConfigResponse(applied=True, generation=3, source="inline")
    msg.changes.add(field="admission.max_n", old_value="64", new_value="8",
                    outcome=admin_pb2.ConfigFieldChange.OUTCOME_NEEDS_RESTART)
    r = ReloadResult.from_proto(msg)
    assert r.applied and r.generation == 3 and r.changes[0].outcome.value == "NEEDS_RESTART"


def test_enum_parsing():
    assert ReplaySsmMode.parse(None) is ReplaySsmMode.DEFAULT
    assert ReplaySsmMode.parse("on") is ReplaySsmMode.ON
    assert ReplaySsmMode.parse("REPLAY_SSM_MODE_OFF") is ReplaySsmMode.OFF
    assert ReplaySsmMode.parse(3) is ReplaySsmMode.AUTO
    with pytest.raises(ValueError, match="replay_ssm"):
        ReplaySsmMode.parse("sometimes")
    assert PauseMode.parse("keep").to_proto() == admin_pb2.PAUSE_MODE_KEEP
    assert PauseMode.parse(None) is PauseMode.WAIT
    assert HealthStatus.from_health(2) is HealthStatus.NOT_SERVING


# -- request building -----------------------------------------------------------------------

def test_sampling_params_presence():
    msg = SamplingParams(temperature=0.0, max_tokens=8, stop_token_ids=[3, 4]).to_proto()
    assert msg.HasField("temperature") and msg.temperature == 0.0  # greedy is not "unset"
    assert not msg.HasField("top_p") and not msg.HasField("seed")
    assert list(msg.stop_token_ids) == [3, 4]
    with pytest.raises(TypeError, match="unknown field"):
        SamplingParams.coerce({"temprature": 1.0})


def test_build_generate_request():
    np = pytest.importorskip("numpy")
    r = build_generate_request(np.array([1, 2, 3], dtype=np.int64), 4,
                               sampling=SamplingParams(seed=5), logprobs=True)
    assert list(r.prompt_token_ids) == [1, 2, 3] and r.n == 4
    assert r.request_id.startswith("rc-") and len(r.request_id) == 27
    assert r.sampling.seed == 5 and r.logprobs.sampled and r.logprobs.top_k == 0
    assert not build_generate_request([1]).HasField("logprobs")
    assert build_generate_request([1], request_id="mine").request_id == "mine"
    with pytest.raises(TypeError, match="prompt_token_ids"):
        build_generate_request(["a"])


def test_build_score_and_abort_requests():
    r = build_score_request([1], [[2, 3], [4]], top_logprobs=2)
    assert [list(c.token_ids) for c in r.completions] == [[2, 3], [4]]
    with pytest.raises(TypeError, match="list of token-id lists"):
        build_score_request([1], [2, 3])
    assert build_abort_request("x").request_id == "x"
    assert build_abort_request(all=True).all
    with pytest.raises(ValueError):
        build_abort_request()
    with pytest.raises(ValueError):
        build_abort_request("x", all=True)


# -- retry policy ---------------------------------------------------------------------------

def test_backoff_grows_and_is_capped_with_bounded_jitter():
    p = RetryPolicy(initial_backoff=0.1, multiplier=2.0, max_backoff=1.0, jitter=0.5)
    rng = random.Random(1)
    for retry, base in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (9, 1.0)]:
        for _ in range(50):
            d = p.backoff(retry, rng)
            assert base * 0.5 - 1e-9 <= d <= base + 1e-9
    assert RetryPolicy(jitter=0.0, initial_backoff=0.3).backoff(1) == pytest.approx(0.3)


def test_only_unavailable_and_resource_exhausted_are_retried():
    p = RetryPolicy()
    for code in grpc.StatusCode:
        delay = p.next_delay(1, code, None, elapsed=0.0, remaining=None)
        assert (delay is not None) == (code in (RE, UNAVAILABLE)), code


def test_attempts_and_time_are_bounded():
    p = RetryPolicy(max_attempts=3, initial_backoff=1.0, jitter=0.0, max_total_seconds=10.0)
    assert p.next_delay(2, RE, None, elapsed=0, remaining=None) == pytest.approx(2.0)
    assert p.next_delay(3, RE, None, elapsed=0, remaining=None) is None  # 3 tries made
    assert p.next_delay(1, RE, None, elapsed=0, remaining=0.5) is None  # deadline first
    assert p.next_delay(1, RE, None, elapsed=9.5, remaining=None) is None  # total budget


def test_server_hint_replaces_backoff():
    p = RetryPolicy(initial_backoff=0.01, max_server_hint=5.0)
    d = p.next_delay(1, RE, 2.0, elapsed=0, remaining=None)
    assert 2.0 <= d <= 2.2
    assert 5.0 <= p.next_delay(1, RE, 100.0, elapsed=0, remaining=None) <= 5.5
    assert p.next_delay(1, RE, -1.0, elapsed=0, remaining=None) is None
    assert RetryPolicy(honor_server_hint=False, initial_backoff=0.01, jitter=0).next_delay(
        1, RE, 2.0, elapsed=0, remaining=None) == pytest.approx(0.01)


def test_local_message_size_error_is_not_retried():
    msg = "Received message larger than max (5000000 vs. 4194304)"
    assert is_message_size_error(msg)
    assert RetryPolicy().next_delay(1, RE, None, elapsed=0, remaining=None, message=msg) is None


def test_message_size_errors_name_the_settings():
    server = RolloutError(RE, "Received message larger than max (4097 vs. 4096)",
                          method="rollout.v1.Rollout/Generate")
    assert "transport.max_receive_message_bytes" in str(server)
    assert "ChannelConfig.max_receive_message_bytes" in str(server)
    local = RolloutError(RE, "Sent message larger than max (70000000 vs. 67108864)")
    assert "ChannelConfig.max_send_message_bytes" in str(local)
    assert "transport." not in str(local)
    # Other errors are left as they are.
    queue = RolloutError(RE, "admission.max_queued_requests: 64 requests queued")
    assert "[limit:" not in str(queue)
    assert "[limit:" not in str(RolloutError(grpc.StatusCode.INVALID_ARGUMENT,
                                            "Received message larger than max (1 vs. 0)"))


def test_retry_hint_parsing():
    assert retry_hint_seconds([("grpc-retry-pushback-ms", "250")]) == pytest.approx(0.25)
    assert retry_hint_seconds([("grpc-retry-pushback-ms", "-1")]) == -1.0
    assert retry_hint_seconds([("grpc-retry-pushback-ms", "soon")]) == -1.0
    assert retry_hint_seconds([("retry-after", "3")]) == pytest.approx(3.0)
    assert retry_hint_seconds([("grpc-status-details-bin", retry_info_status(1, 500_000_000))]
                              ) == pytest.approx(1.5)
    assert retry_hint_seconds([("grpc-status-details-bin", b"\xff\xff")]) is None  # garbage
    assert retry_hint_seconds([], "admission queue full; retry after 1.5 s") == pytest.approx(1.5)
    assert retry_hint_seconds([], "retry in 200ms") == pytest.approx(0.2)
    # What rolloutd sends today: no hint.
    assert retry_hint_seconds([], "admission queue full: 4096 groups admitted "
                                  "(admission.max_queued_requests = 4096); retry later") is None
    assert retry_hint_seconds(None) is None


# -- endpoints ------------------------------------------------------------------------------

def test_normalize_endpoints(monkeypatch):
    assert normalize_endpoints("a:1, b:2,a:1") == ["a:1", "b:2"]
    monkeypatch.setenv("ROLLOUT_ENDPOINTS", "x:1,y:2")
    assert normalize_endpoints(None) == ["x:1", "y:2"]
    monkeypatch.delenv("ROLLOUT_ENDPOINTS")
    assert normalize_endpoints(None) == ["127.0.0.1:50051"]
    with pytest.raises(ValueError):
        normalize_endpoints([" "])


def test_round_robin_picker():
    p = EndpointPicker(["a", "b", "c"], "round_robin")
    picks = [p.acquire() for _ in range(6)]
    assert picks == ["a", "b", "c", "a", "b", "c"]


def test_least_loaded_picker():
    p = EndpointPicker(["a", "b", "c"], "least_loaded")
    assert {p.acquire(), p.acquire(), p.acquire()} == {"a", "b", "c"}  # ties rotate
    p.release("b")
    assert p.acquire() == "b"
    p.release("a")
    p.release("a")  # never below zero
    assert p.outstanding()["a"] == 0
    assert p.acquire(avoid=["a"]) in ("b", "c")  # a is least loaded but just failed
    assert p.acquire(avoid=["a", "b", "c"]) == "a"  # all failed: least loaded again
    with pytest.raises(ValueError, match="balancing"):
        EndpointPicker(["a"], "random")


def test_channel_options():
    opts = dict(ChannelConfig().options())
    assert opts["grpc.max_receive_message_length"] == 512 << 20
    assert opts["grpc.max_send_message_length"] == 64 << 20
    assert opts["grpc.keepalive_time_ms"] == 30000
    assert opts["grpc.keepalive_permit_without_calls"] == 1
    assert opts["grpc.http2.max_pings_without_data"] == 0
    assert "grpc.lb_policy_name" not in opts
    assert dict(ChannelConfig(lb_policy="round_robin").options())["grpc.lb_policy_name"] == \
        "round_robin"


# -- health codec ---------------------------------------------------------------------------

def test_health_codec_round_trip_and_wire_format():
    from rollout_client import _health
    assert _health.encode_request("") == b""
    assert _health.encode_request("rollout.v1.Rollout") == b"\x0a\x12rollout.v1.Rollout"
    assert _health.decode_request(_health.encode_request("x" * 300)) == "x" * 300
    assert _health.decode_response(b"\x08\x01") == _health.SERVING
    assert _health.decode_response(b"") == _health.UNKNOWN
    # Unknown fields are skipped, as protobuf does.
    assert _health.decode_response(b"\x12\x03abc\x08\x02") == _health.NOT_SERVING
    for status in range(4):
        assert _health.decode_response(_health.encode_response(status)) == status
    assert HealthStatus.from_health(7) is HealthStatus.UNKNOWN


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
