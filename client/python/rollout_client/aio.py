"""The asyncio client (grpc.aio): the same API as :class:`RolloutClient`, with ``await``.

    async with AsyncRolloutClient(["10.0.0.1:50051", "10.0.0.2:50051"]) as client:
        groups = await asyncio.gather(*(client.generate(p, n=8, timeout=300) for p in prompts))
        async with client.generate_stream(prompt, n=4) as stream:
            async for chunk in stream:
                ...

Channels are opened on first use inside the running event loop; use one client per loop.
"""
from __future__ import annotations

import asyncio
import time
from typing import (Any, AsyncIterator, Callable, Dict, Iterable, List, Optional, Sequence, Tuple,
                    Union)

import grpc
import grpc.aio

from rollout_client._base import (DEFAULT, M_ABORT, M_GENERATE, M_GENERATE_STREAM, M_HEALTH,
                                  M_INFO, M_PAUSE, M_RELOAD, M_RESUME, M_SCORE,
                                  M_UPDATE_WEIGHTS, PAUSE_TIMEOUT, ROLLOUT_SERVICE,
                                  UPDATE_WEIGHTS_TIMEOUT, Attempts, ClientBase, abort_partial,
                                  finish_fan_out, health_status_from_error,
                                  next_weight_version)
from rollout_client.endpoints import open_aio_channel
from rollout_client.errors import RolloutError
from rollout_client.params import (SamplingLike, build_abort_request, build_generate_request,
                                   build_score_request)
from rollout_client._health import check_callable
from rollout_client.proto import (admin_pb2, admin_pb2_grpc, config_pb2, rollout_pb2,
                                  rollout_pb2_grpc)
from rollout_client.results import (AbortResult, GenerateResult, HealthStatus, PauseMode,
                                    PauseResult, ReloadResult, ReplaySsmMode, ResumeResult,
                                    ScoreResult, ServerInfo, StreamAccumulator, StreamChunk,
                                    UpdateWeightsResult)
from rollout_client.retry import NO_RETRY, RetryPolicy

#: Per endpoint: Rollout stub, Admin stub, health Check callable.
_Stubs = Tuple[rollout_pb2_grpc.RolloutStub, admin_pb2_grpc.AdminStub, Any]


class AsyncRolloutClient(ClientBase):
    """asyncio client of one or several rolloutd endpoints; arguments as :class:`RolloutClient`."""

    def __init__(self, endpoints: Union[str, Iterable[str], None] = None, **kwargs: Any) -> None:
        super().__init__(endpoints, **kwargs)
        self._channels: Dict[str, grpc.aio.Channel] = {}
        self._stubs: Dict[str, _Stubs] = {}

    def _stubs_for(self, endpoint: str) -> _Stubs:
        stubs = self._stubs.get(endpoint)
        if stubs is None:
            ch = open_aio_channel(endpoint, self._channel_config)
            self._channels[endpoint] = ch
            stubs = (rollout_pb2_grpc.RolloutStub(ch), admin_pb2_grpc.AdminStub(ch),
                     check_callable(ch))
            self._stubs[endpoint] = stubs
        return stubs

    async def close(self) -> None:
        """Closes every channel (calls in flight are cancelled)."""
        channels, self._channels, self._stubs = self._channels, {}, {}
        for ch in channels.values():
            await ch.close()

    async def __aenter__(self) -> "AsyncRolloutClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # -- the attempt loop ---------------------------------------------------------------------

    async def _unary(self, method: str, pick: Callable[[_Stubs], Callable[..., Any]],
                     request: Any, *, timeout: Optional[float], retry: RetryPolicy,
                     endpoint: Optional[str] = None, admin: bool = False,
                     request_id: Optional[str] = None) -> Tuple[Any, str, int, float]:
        att = Attempts(method, retry, timeout, self._rng)
        metadata = self._call_metadata(admin)
        while True:
            remaining = att.remaining()
            att.attempt += 1
            ep = (self._picker.hold(endpoint) if endpoint is not None
                  else self._picker.acquire(avoid=att.failed))
            if request_id:
                self._track(request_id, ep)
            try:
                response = await pick(self._stubs_for(ep))(request, timeout=remaining,
                                                           metadata=metadata)
                return response, ep, att.attempt, att.elapsed()
            except grpc.RpcError as e:
                error: grpc.RpcError = e
            finally:
                self._picker.release(ep)
                if request_id:
                    self._untrack(request_id)
            await asyncio.sleep(att.after_failure(error, ep))

    async def _fan_out(self, method: str, pick: Callable[[_Stubs], Callable[..., Any]],
                       request: Any, convert: Callable[[Any, str], Any], *,
                       endpoints: Optional[Iterable[str]], timeout: Optional[float],
                       retry: RetryPolicy, admin: bool) -> Dict[str, Any]:
        targets = self._targets(endpoints)

        async def one(ep: str) -> Any:
            message = (await request(ep)) if callable(request) else request
            response, _, _, _ = await self._unary(method, pick, message, timeout=timeout,
                                                  retry=retry, endpoint=ep, admin=admin)
            return convert(response, ep)

        outcomes = await asyncio.gather(*(one(ep) for ep in targets), return_exceptions=True)
        results: Dict[str, Any] = {}
        errors: Dict[str, RolloutError] = {}
        for ep, outcome in zip(targets, outcomes):
            if isinstance(outcome, RolloutError):
                errors[ep] = outcome
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                results[ep] = outcome
        return finish_fan_out(method, results, errors)

    # -- Rollout ------------------------------------------------------------------------------

    async def generate(self, prompt_token_ids: Sequence[int], n: int = 1, *,
                       sampling: SamplingLike = None, logprobs: bool = False,
                       top_logprobs: int = 0,
                       replay_ssm: Union[ReplaySsmMode, str, None] = None,
                       request_id: Optional[str] = None, min_weight_version: int = 0,
                       timeout: Any = DEFAULT, retry: Optional[RetryPolicy] = None,
                       endpoint: Optional[str] = None) -> GenerateResult:
        """One GRPO group (see :meth:`RolloutClient.generate`)."""
        request = build_generate_request(
            prompt_token_ids, n, sampling=sampling, logprobs=logprobs,
            top_logprobs=top_logprobs, replay_ssm=replay_ssm, request_id=request_id,
            min_weight_version=min_weight_version)
        return await self.generate_request(request, timeout=timeout, retry=retry,
                                           endpoint=endpoint)

    async def generate_request(self, request: rollout_pb2.GenerateRequest, *,
                               timeout: Any = DEFAULT, retry: Optional[RetryPolicy] = None,
                               endpoint: Optional[str] = None) -> GenerateResult:
        """Rollout.Generate with a ready-made GenerateRequest message."""
        response, ep, attempts, seconds = await self._unary(
            M_GENERATE, lambda s: s[0].Generate, request, timeout=self._data_timeout(timeout),
            retry=self._policy(retry), endpoint=self._check_endpoint(endpoint),
            request_id=request.request_id or None)
        return GenerateResult.from_proto(response, prompt_token_ids=request.prompt_token_ids,
                                         endpoint=ep, attempts=attempts, client_seconds=seconds)

    async def generate_batch(self, prompts: Sequence[Sequence[int]], n: int = 1, *,
                             max_concurrency: int = 64, **kwargs: Any) -> List[GenerateResult]:
        """One group per prompt, at most ``max_concurrency`` in flight, in prompt order. On the
        first failure the other calls are cancelled and the failure is raised."""
        prefix = kwargs.pop("request_id", None)
        gate = asyncio.Semaphore(max(1, max_concurrency))

        async def one(i: int, prompt: Sequence[int]) -> GenerateResult:
            async with gate:
                return await self.generate(prompt, n,
                                           request_id=f"{prefix}-{i}" if prefix else None,
                                           **kwargs)

        tasks = [asyncio.ensure_future(one(i, p)) for i, p in enumerate(prompts)]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    def generate_stream(self, prompt_token_ids: Sequence[int], n: int = 1, *,
                        sampling: SamplingLike = None, logprobs: bool = False,
                        top_logprobs: int = 0,
                        replay_ssm: Union[ReplaySsmMode, str, None] = None,
                        request_id: Optional[str] = None, min_weight_version: int = 0,
                        timeout: Any = DEFAULT, retry: Optional[RetryPolicy] = None,
                        endpoint: Optional[str] = None) -> "AsyncGenerateStream":
        """Rollout.GenerateStream as an async iterator of :class:`StreamChunk` (see
        :meth:`RolloutClient.generate_stream`); not a coroutine: ``async for`` over it."""
        request = build_generate_request(
            prompt_token_ids, n, sampling=sampling, logprobs=logprobs,
            top_logprobs=top_logprobs, replay_ssm=replay_ssm, request_id=request_id,
            min_weight_version=min_weight_version)
        return AsyncGenerateStream(self, request, timeout=self._data_timeout(timeout),
                                   retry=self._policy(retry),
                                   endpoint=self._check_endpoint(endpoint))

    async def score(self, prompt_token_ids: Sequence[int],
                    completions: Sequence[Sequence[int]], *, top_logprobs: int = 0,
                    request_id: Optional[str] = None, min_weight_version: int = 0,
                    timeout: Any = DEFAULT, retry: Optional[RetryPolicy] = None,
                    endpoint: Optional[str] = None) -> ScoreResult:
        """Rollout.Score (see :meth:`RolloutClient.score`)."""
        request = build_score_request(prompt_token_ids, completions, top_logprobs=top_logprobs,
                                      request_id=request_id,
                                      min_weight_version=min_weight_version)
        response, ep, attempts, _ = await self._unary(
            M_SCORE, lambda s: s[0].Score, request, timeout=self._data_timeout(timeout),
            retry=self._policy(retry), endpoint=self._check_endpoint(endpoint),
            request_id=request.request_id)
        return ScoreResult.from_proto(response, endpoint=ep, attempts=attempts)

    async def abort(self, request_id: Optional[str] = None, *, all: bool = False,  # noqa: A002
                    timeout: Any = DEFAULT,
                    endpoints: Optional[Iterable[str]] = None) -> AbortResult:
        """Rollout.Abort (see :meth:`RolloutClient.abort`)."""
        request = build_abort_request(request_id, all=all)
        targets = endpoints
        if targets is None and request_id is not None:
            known = self._endpoint_of(request_id)
            targets = [known] if known else None
        try:
            per = await self._fan_out(M_ABORT, lambda s: s[0].Abort, request,
                                      lambda r, ep: AbortResult.from_proto(r, endpoint=ep),
                                      endpoints=targets, timeout=self._ctl_timeout(timeout),
                                      retry=NO_RETRY, admin=False)
        except RolloutError as e:
            per = abort_partial(e, request_id)
        return AbortResult.merge(per.values())

    async def server_info(self, endpoint: Optional[str] = None, *, timeout: Any = DEFAULT,
                          retry: Optional[RetryPolicy] = None) -> ServerInfo:
        """Rollout.GetServerInfo of one endpoint (default: the first)."""
        ep = self._check_endpoint(endpoint) or self._endpoints[0]
        response, ep, _, _ = await self._unary(M_INFO, lambda s: s[0].GetServerInfo,
                                               rollout_pb2.GetServerInfoRequest(),
                                               timeout=self._ctl_timeout(timeout),
                                               retry=self._policy(retry), endpoint=ep)
        return ServerInfo.from_proto(response, endpoint=ep)

    async def server_infos(self, *, timeout: Any = DEFAULT,
                           retry: Optional[RetryPolicy] = None) -> Dict[str, ServerInfo]:
        """GetServerInfo of every endpoint, by endpoint."""
        return await self._fan_out(M_INFO, lambda s: s[0].GetServerInfo,
                                   rollout_pb2.GetServerInfoRequest(),
                                   lambda r, ep: ServerInfo.from_proto(r, endpoint=ep),
                                   endpoints=None, timeout=self._ctl_timeout(timeout),
                                   retry=self._policy(retry), admin=False)

    # -- health -------------------------------------------------------------------------------

    async def health(self, service: str = "", endpoint: Optional[str] = None, *,
                     timeout: Any = DEFAULT) -> HealthStatus:
        """grpc.health.v1 Check (see :meth:`RolloutClient.health`)."""
        ep = self._check_endpoint(endpoint) or self._endpoints[0]
        try:
            status, _, _, _ = await self._unary(
                M_HEALTH, lambda s: s[2], service,
                timeout=self._ctl_timeout(timeout), retry=NO_RETRY, endpoint=ep)
        except RolloutError as e:
            unknown = health_status_from_error(e)
            if unknown is None:
                raise
            return unknown
        return HealthStatus.from_health(status)

    async def wait_ready(self, timeout: float = 120.0, *, service: str = ROLLOUT_SERVICE,
                         poll_interval: float = 0.5) -> None:
        """Waits until ``service`` is SERVING on every endpoint (see
        :meth:`RolloutClient.wait_ready`)."""
        deadline = time.monotonic() + timeout
        pending = list(self._endpoints)
        last: Dict[str, str] = {}
        while True:
            for ep in list(pending):
                try:
                    status = await self.health(service, ep, timeout=min(5.0, max(0.1, timeout)))
                    last[ep] = status.value
                    if status is HealthStatus.SERVING:
                        pending.remove(ep)
                except RolloutError as e:
                    last[ep] = f"{e.code.name}: {e.message}"
            if not pending:
                return
            if time.monotonic() >= deadline:
                raise RolloutError(grpc.StatusCode.DEADLINE_EXCEEDED,
                                   f"{service or 'server'} not SERVING within {timeout:g} s: " +
                                   ", ".join(f"{ep}: {last.get(ep)}" for ep in pending),
                                   method=M_HEALTH, endpoint=pending[0])
            await asyncio.sleep(poll_interval)

    # -- Admin --------------------------------------------------------------------------------

    async def reload_config(self, config: Optional[config_pb2.ServerConfig] = None, *,
                            dry_run: bool = False, endpoints: Optional[Iterable[str]] = None,
                            timeout: Any = DEFAULT) -> Dict[str, ReloadResult]:
        """Admin.ReloadConfig on every endpoint (see :meth:`RolloutClient.reload_config`)."""
        request = admin_pb2.ReloadConfigRequest(dry_run=dry_run)
        if config is not None:
            request.config.CopyFrom(config)
        return await self._fan_out(M_RELOAD, lambda s: s[1].ReloadConfig, request,
                                   lambda r, ep: ReloadResult.from_proto(r, endpoint=ep),
                                   endpoints=endpoints, timeout=self._ctl_timeout(timeout),
                                   retry=self._retry, admin=True)

    async def update_weights(self, path: str, version: int = 0, *,
                             endpoints: Optional[Iterable[str]] = None, timeout: Any = DEFAULT,
                             retry: Optional[RetryPolicy] = None
                             ) -> Dict[str, UpdateWeightsResult]:
        """Admin.UpdateWeights on every endpoint (see :meth:`RolloutClient.update_weights`:
        retried only with an explicit version, read from GetServerInfo when ``version`` is 0)."""
        policy = self._policy(retry)
        request: Any = admin_pb2.UpdateWeightsRequest(path=str(path), version=int(version))
        if not version and policy.max_attempts > 1:
            async def request(ep: str) -> admin_pb2.UpdateWeightsRequest:
                info, _, _, _ = await self._unary(M_INFO, lambda s: s[0].GetServerInfo,
                                                  rollout_pb2.GetServerInfoRequest(),
                                                  timeout=self._ctl_timeout(DEFAULT),
                                                  retry=policy, endpoint=ep)
                return admin_pb2.UpdateWeightsRequest(path=str(path),
                                                      version=next_weight_version(info))
        return await self._fan_out(M_UPDATE_WEIGHTS, lambda s: s[1].UpdateWeights, request,
                                   lambda r, ep: UpdateWeightsResult.from_proto(r, endpoint=ep),
                                   endpoints=endpoints,
                                   timeout=self._ctl_timeout(timeout, UPDATE_WEIGHTS_TIMEOUT),
                                   retry=policy, admin=True)

    async def pause(self, mode: Union[PauseMode, str, None] = PauseMode.WAIT, *,
                    endpoints: Optional[Iterable[str]] = None,
                    timeout: Any = DEFAULT) -> Dict[str, PauseResult]:
        """Admin.Pause on every endpoint (see :meth:`RolloutClient.pause`)."""
        request = admin_pb2.PauseRequest(mode=PauseMode.parse(mode).to_proto())
        return await self._fan_out(M_PAUSE, lambda s: s[1].Pause, request,
                                   lambda r, ep: PauseResult.from_proto(r, endpoint=ep),
                                   endpoints=endpoints,
                                   timeout=self._ctl_timeout(timeout, PAUSE_TIMEOUT),
                                   retry=self._retry, admin=True)

    async def resume(self, *, endpoints: Optional[Iterable[str]] = None,
                     timeout: Any = DEFAULT) -> Dict[str, ResumeResult]:
        """Admin.Resume on every endpoint."""
        return await self._fan_out(M_RESUME, lambda s: s[1].Resume, admin_pb2.ResumeRequest(),
                                   lambda r, ep: ResumeResult.from_proto(r, endpoint=ep),
                                   endpoints=endpoints, timeout=self._ctl_timeout(timeout),
                                   retry=self._retry, admin=True)


class AsyncGenerateStream:
    """Async iterator over the :class:`StreamChunk` of one GenerateStream call."""

    def __init__(self, client: AsyncRolloutClient, request: rollout_pb2.GenerateRequest, *,
                 timeout: Optional[float], retry: RetryPolicy, endpoint: Optional[str]) -> None:
        self._client = client
        self.request = request
        self._timeout = timeout
        self._retry = retry
        self._endpoint = endpoint
        self._call: Any = None
        self._cancelled = False
        self._accumulator = StreamAccumulator(request.n, request.prompt_token_ids)
        self._iterator: Optional[AsyncIterator[StreamChunk]] = None
        self.endpoint: Optional[str] = None
        self.attempts = 0
        self._start = time.monotonic()

    @property
    def request_id(self) -> str:
        return self.request.request_id

    @property
    def done(self) -> bool:
        return self._accumulator.done

    def __aiter__(self) -> AsyncIterator[StreamChunk]:
        if self._iterator is None:
            self._iterator = self._run()
        return self._iterator

    async def __anext__(self) -> StreamChunk:
        return await self.__aiter__().__anext__()

    async def _run(self) -> AsyncIterator[StreamChunk]:
        client = self._client
        att = Attempts(M_GENERATE_STREAM, self._retry, self._timeout, client._rng)
        metadata = client._call_metadata(False)
        while True:
            remaining = att.remaining()
            att.attempt += 1
            self.attempts = att.attempt
            ep = (client._picker.hold(self._endpoint) if self._endpoint is not None
                  else client._picker.acquire(avoid=att.failed))
            self.endpoint = ep
            client._track(self.request_id, ep)
            received = False
            try:
                self._call = client._stubs_for(ep)[0].GenerateStream(
                    self.request, timeout=remaining, metadata=metadata)
                if self._cancelled:
                    self._call.cancel()
                async for message in self._call:
                    received = True
                    chunk = StreamChunk.from_proto(message)
                    self._accumulator.add(chunk)
                    yield chunk
                if not self._accumulator.done:
                    raise RolloutError(grpc.StatusCode.DATA_LOSS,
                                       "GenerateStream ended without its last chunk (done)",
                                       method=M_GENERATE_STREAM, endpoint=ep,
                                       attempts=att.attempt)
                return
            except (grpc.RpcError, asyncio.CancelledError) as e:
                if self._cancelled:
                    raise RolloutError(grpc.StatusCode.CANCELLED, "stream cancelled by the client",
                                       method=M_GENERATE_STREAM, endpoint=ep,
                                       attempts=att.attempt) from None
                if isinstance(e, asyncio.CancelledError):
                    raise
                if received:
                    raise RolloutError.from_rpc_error(e, method=M_GENERATE_STREAM, endpoint=ep,
                                                      attempts=att.attempt) from None
                error: grpc.RpcError = e
            finally:
                if self._call is not None and not self._accumulator.done:
                    self._call.cancel()
                client._picker.release(ep)
                client._untrack(self.request_id)
            await asyncio.sleep(att.after_failure(error, ep))

    def cancel(self) -> None:
        """Cancels the call (the server aborts the request and frees its memory)."""
        self._cancelled = True
        if self._call is not None:
            self._call.cancel()

    async def result(self) -> GenerateResult:
        """Consumes the remaining chunks and returns the assembled group."""
        async for _ in self:
            pass
        return self.partial_result()

    def partial_result(self) -> GenerateResult:
        return self._accumulator.result(endpoint=self.endpoint or "", attempts=self.attempts,
                                        client_seconds=time.monotonic() - self._start)

    async def __aenter__(self) -> "AsyncGenerateStream":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if not self.done:
            self.cancel()
        if self._iterator is not None:
            await self._iterator.aclose()  # type: ignore[attr-defined]
