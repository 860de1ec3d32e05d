"""The asyncio client against in-process fake servers (same behaviours as client_test)."""
import asyncio
import sys
import time

import grpc
import pytest

from fakes import OK, Fail, FakeServer, Sleep
from rollout_client import (AsyncRolloutClient, FanOutError, HealthStatus, RetryPolicy,
                            RolloutError)

RE = grpc.StatusCode.RESOURCE_EXHAUSTED
UNAVAILABLE = grpc.StatusCode.UNAVAILABLE
FAST = RetryPolicy(initial_backoff=0.02, max_backoff=0.1, jitter=0.0)


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def server():
    with FakeServer() as s:
        yield s


def client_for(*servers, **kwargs):
    kwargs.setdefault("retry", FAST)
    return AsyncRolloutClient([s.endpoint for s in servers], **kwargs)


def test_generate_and_typed_result(server):
    async def main():
        async with client_for(server) as client:
            return await client.generate([4, 5], n=2, sampling={"max_tokens": 3},
                                         logprobs=True, top_logprobs=1)
    r = run(main())
    assert r.n == 2 and r.completions[1].token_ids == [6, 7, 8]
    assert len(r.completions[0].logprobs) == 3 and r.completions[0].top_logprobs[0]


def test_resource_exhausted_then_ok(server):
    server.plan("Generate", Fail(RE), Fail(UNAVAILABLE), OK)

    async def main():
        async with client_for(server) as client:
            return await client.generate([1])
    assert run(main()).attempts == 3
    assert len(server.calls["Generate"]) == 3


def test_invalid_argument_is_not_retried(server):
    server.plan("Generate", Fail(grpc.StatusCode.INVALID_ARGUMENT, "sampling.top_p: bad"), OK)

    async def main():
        async with client_for(server) as client:
            await client.generate([1], sampling={"top_p": 2.0})
    with pytest.raises(RolloutError) as err:
        run(main())
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT and err.value.attempts == 1
    assert len(server.calls["Generate"]) == 1


def test_deadline(server):
    server.plan("Generate", Sleep(10))

    async def main():
        async with client_for(server) as client:
            await client.generate([1], timeout=0.3)
    start = time.monotonic()
    with pytest.raises(RolloutError) as err:
        run(main())
    assert err.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - start < 2.0
    assert server.calls["Generate"][0].cancelled.wait(2.0)


def test_task_cancellation_cancels_the_rpc(server):
    server.plan("Generate", Sleep(10))

    async def main():
        async with client_for(server) as client:
            task = asyncio.ensure_future(client.generate([1]))
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert client.outstanding() == {server.endpoint: 0}
    run(main())
    assert server.calls["Generate"][0].cancelled.wait(2.0)


def test_stream_iterates_and_assembles(server):
    async def main():
        async with client_for(server) as client:
            unary = await client.generate([3], n=2, sampling={"max_tokens": 5, "seed": 1},
                                          logprobs=True, request_id="r")
            chunks = []
            async with client.generate_stream([3], n=2, sampling={"max_tokens": 5, "seed": 1},
                                              logprobs=True, request_id="r") as stream:
                async for chunk in stream:
                    chunks.append(chunk)
            return unary, chunks, await stream.result()
    unary, chunks, assembled = run(main())
    assert chunks[-1].done and assembled.completions == unary.completions


def test_stream_early_exit_cancels_on_the_server(server):
    server.stream_forever = True
    server.stream_delay = 0.02

    async def main():
        async with client_for(server) as client:
            async with client.generate_stream([1]) as stream:
                n = 0
                async for _ in stream:
                    n += 1
                    if n == 3:
                        break
            return stream
    stream = run(main())
    assert not stream.done
    assert server.calls["GenerateStream"][0].cancelled.wait(2.0)


def test_stream_retry_before_first_chunk(server):
    server.plan("GenerateStream", Fail(UNAVAILABLE), OK)

    async def main():
        async with client_for(server) as client:
            stream = client.generate_stream([1], n=3)
            return stream, await stream.result()
    stream, result = run(main())
    assert stream.attempts == 2 and result.n == 3


def test_update_weights_retry_after_a_lost_answer_does_not_bump_twice(server):
    def lost_answer(request, context):
        server.apply_weights(request)
        context.abort(grpc.StatusCode.UNAVAILABLE, "connection reset after the update")
    server.plan("UpdateWeights", lost_answer)

    async def main():
        async with client_for(server) as client:
            return await client.update_weights("/models/step-2")
    assert run(main())[server.endpoint].weight_version == 2
    assert [c.request.version for c in server.calls["UpdateWeights"]] == [2, 2]
    assert server.weight_version == 2


def test_admin_token():
    with FakeServer(admin_token="tok") as server:
        async def main(token):
            async with client_for(server, admin_token=token) as client:
                return await client.update_weights("/m", version=4)
        assert run(main("tok"))[server.endpoint].weight_version == 4
        with pytest.raises(RolloutError) as err:
            run(main(None))
    assert err.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert server.calls["UpdateWeights"][0].metadata["authorization"] == "Bearer tok"
    assert "authorization" not in server.calls["UpdateWeights"][1].metadata


def test_batch_and_fan_out_over_two_endpoints():
    with FakeServer(name="a") as a, FakeServer(name="b") as b:
        b.plan("Resume", Fail(grpc.StatusCode.INTERNAL, "boom"))

        async def main():
            async with client_for(a, b) as client:
                results = await client.generate_batch([[i] for i in range(8)], n=2,
                                                      max_concurrency=8)
                pauses = await client.pause("wait")
                with pytest.raises(FanOutError) as err:
                    await client.resume()
                health = await client.health(endpoint=b.endpoint)
                return results, pauses, err.value, health
        results, pauses, err, health = run(main())
    assert [r.prompt_token_ids for r in results] == [[i] for i in range(8)]
    assert a.calls["Generate"] and b.calls["Generate"]
    assert set(pauses) == {a.endpoint, b.endpoint}
    assert set(err.errors) == {b.endpoint}
    assert health is HealthStatus.SERVING


def test_abort_all_and_server_infos():
    with FakeServer(name="a") as a, FakeServer(name="b") as b:
        async def main():
            async with client_for(a, b) as client:
                return await client.abort(all=True), await client.server_infos()
        aborted, infos = run(main())
    assert aborted.request_ids == [] and len(a.calls["Abort"]) == len(b.calls["Abort"]) == 1
    assert set(infos) == {a.endpoint, b.endpoint}


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
