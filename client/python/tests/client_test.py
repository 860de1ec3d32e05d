"""The sync client against in-process fake servers: retries, deadlines, streaming, admin token,
endpoint choice, fan-out, abort routing, message sizes, typed results over the wire."""
import sys
import threading
import time

import grpc
import pytest

from fakes import OK, Fail, FakeServer, Hold, Sleep, retry_info_status
from rollout_client import (NO_RETRY, ChannelConfig, FanOutError, FinishReason, HealthStatus,
                            ReplaySsmMode, RetryPolicy, RolloutClient, RolloutError)

RE = grpc.StatusCode.RESOURCE_EXHAUSTED
UNAVAILABLE = grpc.StatusCode.UNAVAILABLE
FAST = RetryPolicy(initial_backoff=0.02, max_backoff=0.1, jitter=0.0, max_attempts=5)


@pytest.fixture
def server():
    with FakeServer() as s:
        yield s


@pytest.fixture
def two_servers():
    with FakeServer(name="a") as a, FakeServer(name="b") as b:
        yield a, b


def client_for(*servers, **kwargs):
    kwargs.setdefault("retry", FAST)
    return RolloutClient([s.endpoint for s in servers], **kwargs)


# -- typed results over the wire ------------------------------------------------------------

def test_generate_typed_result(server):
    with client_for(server) as client:
        r = client.generate([7, 8, 9], n=3, sampling={"max_tokens": 4, "seed": 11},
                            logprobs=True, top_logprobs=2, replay_ssm="on", timeout=10)
    assert r.n == 3 and r.seed == 11 and r.replay_ssm_mode is ReplaySsmMode.ON
    assert r.endpoint == server.endpoint and r.attempts == 1 and r.worker == "fake"
    assert r.request_id.startswith("rc-")
    assert r.prompt_token_ids == [7, 8, 9]
    for i, c in enumerate(r.completions):
        assert c.index == i and c.token_ids == [9 + i + j for j in range(4)]
        assert all(isinstance(t, int) for t in c.token_ids)
        assert len(c.logprobs) == 4 and all(isinstance(x, float) for x in c.logprobs)
        assert [len(row) for row in c.top_logprob_token_ids] == [2, 2, 2, 2]
        assert c.finish_reason is FinishReason.LENGTH
        assert c.weight_version_start == c.weight_version_end == 1
        assert c.replay_ssm_applied
    sent = server.calls["Generate"][0].request
    assert sent.n == 3 and sent.sampling.max_tokens == 4 and sent.logprobs.top_k == 2
    assert sent.request_id == r.request_id
    assert server.calls["Generate"][0].deadline is not None  # a deadline was sent


def test_score_and_server_info(server):
    with client_for(server) as client:
        s = client.score([1, 2], [[3, 4, 5], [6]], top_logprobs=2)
        info = client.server_info()
    assert [len(c.logprobs) for c in s.completions] == [3, 1]
    assert s.completions[0].top_logprob_token_ids[0] == [3, 4]
    assert s.weight_version == 1
    assert info.model.vocab_size == 1031 and info.endpoint == server.endpoint
    assert info.workers[0].state.value == "READY"


# -- retries --------------------------------------------------------------------------------

def test_resource_exhausted_then_ok_is_retried(server):
    server.plan("Generate", Fail(RE, "admission queue full; retry later"), Fail(RE), OK)
    with client_for(server) as client:
        start = time.monotonic()
        r = client.generate([1], n=2, request_id="grpo-1")
        took = time.monotonic() - start
    assert r.attempts == 3 and r.n == 2
    calls = server.calls["Generate"]
    assert len(calls) == 3
    assert {c.request.request_id for c in calls} == {"grpo-1"}  # same request each time
    assert took >= 0.02 + 0.04 - 0.005  # back-off 0.02, then 0.04 (no jitter)


def test_unavailable_then_ok_is_retried(server):
    server.plan("Generate", Fail(UNAVAILABLE, "no worker is serving"), OK)
    with client_for(server) as client:
        assert client.generate([1]).attempts == 2


@pytest.mark.parametrize("code", [grpc.StatusCode.INVALID_ARGUMENT,
                                  grpc.StatusCode.FAILED_PRECONDITION,
                                  grpc.StatusCode.INTERNAL, grpc.StatusCode.NOT_FOUND,
                                  grpc.StatusCode.PERMISSION_DENIED])
def test_other_codes_are_not_retried(server, code):
    server.plan("Generate", Fail(code, "n: must be in [1, 64], got 0"), OK)
    with client_for(server) as client:
        with pytest.raises(RolloutError) as err:
            client.generate([1], n=0)
    assert err.value.code == code and err.value.attempts == 1
    assert err.value.message == "n: must be in [1, 64], got 0"
    assert err.value.endpoint == server.endpoint
    assert err.value.method == "rollout.v1.Rollout/Generate"
    assert code.name in str(err.value)
    assert len(server.calls["Generate"]) == 1


def test_attempts_are_bounded(server):
    server.plan("Generate", *[Fail(UNAVAILABLE, "draining")] * 10)
    with client_for(server, retry=RetryPolicy(max_attempts=3, initial_backoff=0.01)) as client:
        with pytest.raises(RolloutError) as err:
            client.generate([1])
    assert err.value.code == UNAVAILABLE and err.value.attempts == 3
    assert "after 3 attempts" in str(err.value)
    assert len(server.calls["Generate"]) == 3


def test_total_retry_time_is_bounded(server):
    server.plan("Generate", *[Fail(RE)] * 50)
    policy = RetryPolicy(max_attempts=50, initial_backoff=0.1, multiplier=1.0, jitter=0.0,
                         max_total_seconds=0.35)
    with client_for(server, retry=policy) as client:
        start = time.monotonic()
        with pytest.raises(RolloutError) as err:
            client.generate([1])
    assert time.monotonic() - start < 1.5
    assert err.value.code == RE and 2 <= err.value.attempts <= 4


def test_no_retry_policy(server):
    server.plan("Generate", Fail(RE), OK)
    with client_for(server, retry=NO_RETRY) as client:
        with pytest.raises(RolloutError):
            client.generate([1])
    assert len(server.calls["Generate"]) == 1


def test_pushback_metadata_is_honoured(server):
    server.plan("Generate", Fail(RE, trailing=(("grpc-retry-pushback-ms", "300"),)), OK)
    with client_for(server, retry=RetryPolicy(initial_backoff=0.001)) as client:
        start = time.monotonic()
        assert client.generate([1]).attempts == 2
    assert time.monotonic() - start >= 0.3


def test_negative_pushback_stops_retries(server):
    server.plan("Generate", Fail(UNAVAILABLE, trailing=(("grpc-retry-pushback-ms", "-1"),)), OK)
    with client_for(server) as client:
        with pytest.raises(RolloutError) as err:
            client.generate([1])
    assert err.value.attempts == 1


def test_retry_info_status_details_are_honoured(server):
    details = retry_info_status(0, 250_000_000)
    server.plan("Generate", Fail(RE, trailing=(("grpc-status-details-bin", details),)), OK)
    with client_for(server, retry=RetryPolicy(initial_backoff=0.001)) as client:
        start = time.monotonic()
        assert client.generate([1]).attempts == 2
    assert time.monotonic() - start >= 0.25


# -- deadlines ------------------------------------------------------------------------------

def test_deadline_exceeded_and_server_sees_the_cancel(server):
    server.plan("Generate", Sleep(10))
    with client_for(server) as client:
        start = time.monotonic()
        with pytest.raises(RolloutError) as err:
            client.generate([1], timeout=0.3)
    assert err.value.code == grpc.StatusCode.DEADLINE_EXCEEDED and err.value.attempts == 1
    assert time.monotonic() - start < 2.0
    assert server.calls["Generate"][0].deadline <= 0.3
    assert server.calls["Generate"][0].cancelled.wait(2.0)  # the server side stopped too


def test_deadline_spans_retries(server):
    server.plan("Generate", *[Fail(UNAVAILABLE)] * 50)
    policy = RetryPolicy(max_attempts=50, initial_backoff=0.1, multiplier=1.0, jitter=0.0,
                         max_total_seconds=None)
    with client_for(server, retry=policy) as client:
        start = time.monotonic()
        with pytest.raises(RolloutError) as err:
            client.generate([1], timeout=0.45)
    assert time.monotonic() - start < 2.0
    assert err.value.attempts >= 2
    # Each try got only what was left of the call's deadline.
    deadlines = [c.deadline for c in server.calls["Generate"]]
    # (+5 ms: gRPC encodes the timeout rounded up, and the server measures from its own clock.)
    assert deadlines == sorted(deadlines, reverse=True) and deadlines[0] <= 0.455


def test_client_default_timeout(server):
    server.plan("Generate", Sleep(10))
    with client_for(server, timeout=0.2) as client:
        with pytest.raises(RolloutError) as err:
            client.generate([1])
    assert err.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


# -- streaming ------------------------------------------------------------------------------

def test_stream_iterates_chunks_and_assembles_the_group(server):
    with client_for(server) as client:
        unary = client.generate([5], n=3, sampling={"max_tokens": 5, "seed": 3}, logprobs=True,
                                top_logprobs=2, request_id="same")
        with client.generate_stream([5], n=3, sampling={"max_tokens": 5, "seed": 3},
                                    logprobs=True, top_logprobs=2, request_id="same") as stream:
            chunks = list(stream)
            assembled = stream.result()
    assert chunks[0].seed == 3 and chunks[-1].done and chunks[-1].usage is not None
    assert sum(len(d.token_ids) for c in chunks for d in c.deltas) == 15
    finished = [d for c in chunks for d in c.deltas if d.finished]
    assert sorted(d.index for d in finished) == [0, 1, 2]
    assert assembled.completions == unary.completions
    assert assembled.usage == unary.usage and assembled.seed == unary.seed
    assert stream.done and stream.attempts == 1


def test_stream_cancel_reaches_the_server(server):
    server.stream_forever = True
    server.stream_delay = 0.02
    with client_for(server) as client:
        with client.generate_stream([1], n=2) as stream:
            for i, _ in enumerate(stream):
                if i == 3:
                    break
        partial = stream.partial_result()
    assert not stream.done
    assert server.calls["GenerateStream"][0].cancelled.wait(2.0)
    assert partial.completions[0].token_ids  # what was received is kept


def test_stream_cancel_from_another_thread(server):
    server.stream_forever = True
    server.stream_delay = 0.02
    with client_for(server) as client:
        stream = client.generate_stream([1])
        threading.Timer(0.2, stream.cancel).start()
        with pytest.raises(RolloutError) as err:
            for _ in stream:
                pass
    assert err.value.code == grpc.StatusCode.CANCELLED
    assert server.calls["GenerateStream"][0].cancelled.wait(2.0)


def test_stream_retries_before_the_first_chunk(server):
    server.plan("GenerateStream", Fail(RE), OK)
    with client_for(server) as client:
        stream = client.generate_stream([1], n=2)
        result = stream.result()
    assert stream.attempts == 2 and result.n == 2 and stream.done


def test_stream_failure_after_a_chunk_is_not_retried(server):
    server.plan("GenerateStream", Fail(UNAVAILABLE, "after-first: worker died"))
    with client_for(server) as client:
        got = []
        with pytest.raises(RolloutError) as err:
            for chunk in client.generate_stream([1]):
                got.append(chunk)
    assert len(got) == 1 and err.value.code == UNAVAILABLE and err.value.attempts == 1
    assert len(server.calls["GenerateStream"]) == 1


def test_stream_without_its_last_chunk_is_an_error(server):
    server.stream_drop_done = True
    with client_for(server) as client:
        stream = client.generate_stream([1], n=2)
        with pytest.raises(RolloutError) as err:
            stream.result()
    assert err.value.code == grpc.StatusCode.DATA_LOSS and not stream.done
    assert stream.partial_result().completions[0].token_ids  # what came is kept


def test_stream_deadline(server):
    server.stream_forever = True
    server.stream_delay = 0.05
    with client_for(server) as client:
        with pytest.raises(RolloutError) as err:
            for _ in client.generate_stream([1], timeout=0.3):
                pass
    assert err.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


# -- admin token ----------------------------------------------------------------------------

def test_admin_token_is_sent_as_bearer():
    with FakeServer(admin_token="s3cret") as server:
        with client_for(server, admin_token="s3cret") as client:
            reload = client.reload_config(dry_run=True)[server.endpoint]
            client.pause("keep")
            client.resume()
            update = client.update_weights("/models/step-2")[server.endpoint]
            client.generate([1])
    assert reload.dry_run and reload.changes[0].outcome.value == "WOULD_APPLY"
    assert update.weight_version == 2
    for method in ("ReloadConfig", "Pause", "Resume", "UpdateWeights"):
        assert server.calls[method][0].metadata["authorization"] == "Bearer s3cret", method
    assert server.calls["Pause"][0].request.mode == 3  # KEEP
    # The token never goes to the data plane.
    assert "authorization" not in server.calls["Generate"][0].metadata


def test_client_id_is_sent_as_metadata_on_every_call():
    with FakeServer() as server:
        with client_for(server, client_id="trainer-3") as client:
            client.generate([1])
            client.server_info()
        with client_for(server) as client:
            client.generate([2])
    assert server.calls["Generate"][0].metadata["x-client-id"] == "trainer-3"
    assert server.calls["GetServerInfo"][0].metadata["x-client-id"] == "trainer-3"
    assert "x-client-id" not in server.calls["Generate"][1].metadata
    for bad in ("", "x" * 257, "tab\there"):
        with pytest.raises(ValueError, match="client_id"):
            RolloutClient(server.endpoint, client_id=bad)


@pytest.mark.parametrize("token", [None, "wrong"])
def test_admin_without_or_with_a_wrong_token_is_unauthenticated(token):
    with FakeServer(admin_token="s3cret") as server:
        with client_for(server, admin_token=token) as client:
            with pytest.raises(RolloutError) as err:
                client.update_weights("/models/x", version=3)
    assert err.value.code == grpc.StatusCode.UNAUTHENTICATED and err.value.attempts == 1
    assert err.value.method == "rollout.v1.Admin/UpdateWeights"


def test_admin_token_file_is_reread(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("first\n")
    with FakeServer(admin_token="first") as server:
        with client_for(server, admin_token_file=token_file) as client:
            client.resume()
            token_file.write_text("second")
            server.admin_token = "second"
            client.resume()
    assert [c.metadata["authorization"] for c in server.calls["Resume"]] == [
        "Bearer first", "Bearer second"]


# -- endpoints ------------------------------------------------------------------------------

def test_round_robin(two_servers):
    a, b = two_servers
    with client_for(a, b, balancing="round_robin") as client:
        endpoints = [client.generate([1]).endpoint for _ in range(4)]
    assert endpoints == [a.endpoint, b.endpoint, a.endpoint, b.endpoint]


def test_least_loaded_avoids_the_busy_endpoint(two_servers):
    a, b = two_servers
    release = threading.Event()
    a.plan("Generate", Hold(release), Hold(release))
    with client_for(a, b) as client:
        busy = [threading.Thread(target=client.generate, args=([1],),
                                 kwargs={"endpoint": a.endpoint}) for _ in range(2)]
        for t in busy:
            t.start()
        deadline = time.monotonic() + 5
        while len(a.calls["Generate"]) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert client.outstanding() == {a.endpoint: 2, b.endpoint: 0}
        chosen = [client.generate([1]).endpoint for _ in range(3)]
        release.set()
        for t in busy:
            t.join()
    assert chosen == [b.endpoint] * 3
    assert client.outstanding() == {a.endpoint: 0, b.endpoint: 0}


def test_retry_goes_to_another_endpoint(two_servers):
    a, b = two_servers
    a.plan("Generate", Fail(UNAVAILABLE, "draining"))
    with client_for(a, b, balancing="round_robin") as client:
        r = client.generate([1])
    assert r.endpoint == b.endpoint and r.attempts == 2
    assert len(a.calls["Generate"]) == 1 and len(b.calls["Generate"]) == 1


def test_generate_batch_spreads_and_keeps_order(two_servers):
    a, b = two_servers
    with client_for(a, b) as client:
        results = client.generate_batch([[i] for i in range(10)], n=2, request_id="step7",
                                        max_concurrency=4)
    assert [r.prompt_token_ids for r in results] == [[i] for i in range(10)]
    assert [r.request_id for r in results] == [f"step7-{i}" for i in range(10)]
    assert len(a.calls["Generate"]) + len(b.calls["Generate"]) == 10
    assert a.calls["Generate"] and b.calls["Generate"]


def test_admin_calls_fan_out_to_every_endpoint(two_servers):
    a, b = two_servers
    with client_for(a, b) as client:
        results = client.update_weights("/models/step-3", version=7)
        infos = client.server_infos()
    assert set(results) == {a.endpoint, b.endpoint}
    assert all(r.weight_version == 7 for r in results.values())
    assert {i.weight_version for i in infos.values()} == {7}


def test_fan_out_partial_failure(two_servers):
    a, b = two_servers
    b.plan("Pause", Fail(grpc.StatusCode.INTERNAL, "device fault"))
    with client_for(a, b) as client:
        with pytest.raises(FanOutError) as err:
            client.pause("abort")
    assert set(err.value.errors) == {b.endpoint} and set(err.value.results) == {a.endpoint}
    assert err.value.code == grpc.StatusCode.INTERNAL
    assert "1 of 2 endpoints" in str(err.value)


def lost_answer(server):
    """An UpdateWeights behaviour: the update happens, then the answer is lost (UNAVAILABLE)."""
    def behaviour(request, context):
        server.apply_weights(request)
        context.abort(UNAVAILABLE, "connection reset after the update")
    return behaviour


def test_update_weights_retry_after_a_lost_answer_does_not_bump_twice(server):
    assert server.weight_version == 1
    server.plan("UpdateWeights", lost_answer(server))
    with client_for(server) as client:
        result = client.update_weights("/models/step-2")[server.endpoint]
    # Version 0 was turned into an explicit current + 1 (read from GetServerInfo), sent on both
    # attempts; the server answered the repeat as the no-op it is.
    assert len(server.calls["GetServerInfo"]) == 1
    assert [c.request.version for c in server.calls["UpdateWeights"]] == [2, 2]
    assert result.weight_version == 2 and result.seconds == 0  # the no-op loaded nothing
    assert server.weight_version == 2


def test_update_weights_explicit_version_is_retried_and_a_stale_one_refused(server):
    server.plan("UpdateWeights", Fail(UNAVAILABLE), Fail(UNAVAILABLE))
    with client_for(server) as client:
        assert client.update_weights("/m", version=5)[server.endpoint].weight_version == 5
        assert len(server.calls["UpdateWeights"]) == 3
        # The same version again with the same path: OK, still 5 (a retry of a success).
        assert client.update_weights("/m", version=5)[server.endpoint].weight_version == 5
        # With another path it is a real conflict, not retried.
        with pytest.raises(RolloutError) as err:
            client.update_weights("/other", version=5)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT and err.value.attempts == 1
    assert server.weight_version == 5 and server.weights_path == "/m"


def test_update_weights_version_zero_without_retries_is_sent_as_is(server):
    server.plan("UpdateWeights", Fail(UNAVAILABLE))
    with client_for(server) as client:
        with pytest.raises(RolloutError):
            client.update_weights("/m", retry=NO_RETRY)
    assert [c.request.version for c in server.calls["UpdateWeights"]] == [0]
    assert not server.calls["GetServerInfo"]


# -- abort ----------------------------------------------------------------------------------

def test_abort_goes_to_the_endpoint_running_the_request(two_servers):
    a, b = two_servers
    release = threading.Event()
    b.plan("Generate", Hold(release))
    with client_for(a, b) as client:
        t = threading.Thread(target=client.generate, args=([1],),
                             kwargs={"request_id": "long-one", "endpoint": b.endpoint})
        t.start()
        deadline = time.monotonic() + 5
        while not b.calls["Generate"] and time.monotonic() < deadline:
            time.sleep(0.01)
        result = client.abort("long-one")
        release.set()
        t.join()
    assert result.request_ids == ["long-one"]
    assert not a.calls["Abort"] and len(b.calls["Abort"]) == 1


def test_abort_of_an_unknown_id_asks_everyone(two_servers):
    a, b = two_servers
    with client_for(a, b) as client:
        with pytest.raises(RolloutError) as err:
            client.abort("nobody")
        everything = client.abort(all=True)
    assert err.value.code == grpc.StatusCode.NOT_FOUND
    assert len(a.calls["Abort"]) == 2 and len(b.calls["Abort"]) == 2
    assert everything.request_ids == []


# -- health ---------------------------------------------------------------------------------

def test_health_and_wait_ready(server):
    server.health_status["rollout.v1.Rollout"] = 2  # NOT_SERVING
    with client_for(server) as client:
        assert client.health() is HealthStatus.SERVING
        assert client.health("rollout.v1.Rollout") is HealthStatus.NOT_SERVING
        assert client.health("no.such.Service") is HealthStatus.SERVICE_UNKNOWN
        with pytest.raises(RolloutError) as err:
            client.wait_ready(0.3, poll_interval=0.05)
        assert "NOT_SERVING" in err.value.message
        threading.Timer(0.2, server.health_status.__setitem__,
                        ("rollout.v1.Rollout", 1)).start()
        client.wait_ready(5, poll_interval=0.05)


def test_health_of_a_dead_endpoint_raises():
    with RolloutClient("127.0.0.1:1") as client:
        with pytest.raises(RolloutError) as err:
            client.health(timeout=2)
    assert err.value.code == UNAVAILABLE and err.value.attempts == 1


# -- message sizes --------------------------------------------------------------------------

def test_large_group_over_4_mib(server):
    # 8 x 8192 tokens x (4 + 4 + 8 x 10) bytes ~ 5.8 MB: over gRPC's default 4 MiB.
    kwargs = dict(sampling={"max_tokens": 8192}, logprobs=True, top_logprobs=10)
    with client_for(server) as client:
        r = client.generate([1], n=8, **kwargs)
        assert r.completion_tokens == 8 * 8192
    small = ChannelConfig(max_receive_message_bytes=4 << 20)
    with client_for(server, channel=small) as client:
        with pytest.raises(RolloutError) as err:
            client.generate([1], n=8, **kwargs)
    assert err.value.code == RE and err.value.attempts == 1  # a local size error: no retry


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
