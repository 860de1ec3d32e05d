"""The synchronous client (thread-safe: share one instance between threads)."""
from __future__ import annotations

import concurrent.futures
import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import grpc

from rollout_client._base import (DEFAULT, M_ABORT, M_GENERATE, M_GENERATE_STREAM, M_HEALTH,
                                  M_INFO, M_PAUSE, M_RELOAD, M_RESUME, M_SCORE,
                                  M_UPDATE_WEIGHTS, PAUSE_TIMEOUT, ROLLOUT_SERVICE,
                                  UPDATE_WEIGHTS_TIMEOUT, Attempts, ClientBase, abort_partial,
                                  finish_fan_out, health_status_from_error,
                                  next_weight_version)
from rollout_client.endpoints import open_channel
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


class RolloutClient(ClientBase):
    """Synchronous client of one or several rolloutd endpoints.

        with RolloutClient("127.0.0.1:50051") as client:
            group = client.generate([1, 2, 3], n=8, sampling={"max_tokens": 64, "seed": 1},
                                    logprobs=True, timeout=120)
            for c in group.completions:
                print(c.token_ids, c.logprobs, c.finish_reason)

    Args:
        endpoints: one gRPC target, a comma-separated string, or a list (None: $ROLLOUT_ENDPOINTS,
            else 127.0.0.1:50051).
        admin_token / admin_token_file: bearer token for Admin calls, sent as
            "authorization: Bearer <token>" on Admin calls only (the file is re-read each call).
        balancing: "least_loaded" (fewest outstanding requests of this client) or "round_robin".
        retry: :class:`RetryPolicy` (default: back-off on UNAVAILABLE / RESOURCE_EXHAUSTED only).
        timeout: default deadline of Generate/GenerateStream/Score calls in seconds, retries
            included (None: none; set one per call for long rollouts).
        control_timeout: default deadline of info/health/abort/reload/resume calls.
        channel: :class:`ChannelConfig` (message-size limits, keepalive, TLS).
        metadata: extra metadata sent with every call.
        client_id: sent as "x-client-id" metadata with every call: the identity rolloutd's
            admission.max_requests_per_client counts (else the peer's host). At most 256
            printable ASCII characters.
        seed: seed of the back-off jitter (tests).
    """

    def __init__(self, endpoints: Union[str, Iterable[str], None] = None, **kwargs: Any) -> None:
        super().__init__(endpoints, **kwargs)
        self._channels: Dict[str, grpc.Channel] = {}
        self._stubs: Dict[str, _Stubs] = {}
        for e in self._endpoints:
            ch = open_channel(e, self._channel_config)
            self._channels[e] = ch
            self._stubs[e] = (rollout_pb2_grpc.RolloutStub(ch), admin_pb2_grpc.AdminStub(ch),
                              check_callable(ch))
        self._closed = False

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Closes every channel (calls in flight are cancelled)."""
        if not self._closed:
            self._closed = True
            for ch in self._channels.values():
                ch.close()

    def __enter__(self) -> "RolloutClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the attempt loop ---------------------------------------------------------------------

    def _unary(self, method: str, pick: Callable[[_Stubs], Callable[..., Any]], request: Any, *,
               timeout: Optional[float], retry: RetryPolicy, endpoint: Optional[str] = None,
               admin: bool = False, request_id: Optional[str] = None
               ) -> Tuple[Any, str, int, float]:
        """Runs one RPC with retries; returns (response, endpoint, attempts, seconds)."""
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
                response = pick(self._stubs[ep])(request, timeout=remaining, metadata=metadata)
                return response, ep, att.attempt, att.elapsed()
            except grpc.RpcError as e:
                error: grpc.RpcError = e
            finally:
                self._picker.release(ep)
                if request_id:
                    self._untrack(request_id)
            time.sleep(att.after_failure(error, ep))

    def _fan_out(self, method: str, pick: Callable[[_Stubs], Callable[..., Any]], request: Any,
                 convert: Callable[[Any, str], Any], *, endpoints: Optional[Iterable[str]],
                 timeout: Optional[float], retry: RetryPolicy, admin: bool) -> Dict[str, Any]:
        """The same RPC on several endpoints at once; results by endpoint. ``request`` is the
        message, or a function of the endpoint that makes it (called on the endpoint's thread)."""
        targets = self._targets(endpoints)

        def one(ep: str) -> Any:
            message = request(ep) if callable(request) else request
            response, _, _, _ = self._unary(method, pick, message, timeout=timeout, retry=retry,
                                            endpoint=ep, admin=admin)
            return convert(response, ep)

        results: Dict[str, Any] = {}
        errors: Dict[str, RolloutError] = {}
        if len(targets) == 1:
            try:
                results[targets[0]] = one(targets[0])
            except RolloutError as e:
                errors[targets[0]] = e
        else:
            with concurrent.futures.ThreadPoolExecutor(len(targets)) as pool:
                futures = {ep: pool.submit(one, ep) for ep in targets}
                for ep, f in futures.items():
                    try:
                        results[ep] = f.result()
                    except RolloutError as e:
                        errors[ep] = e
        return finish_fan_out(method, results, errors)

    # -- Rollout ------------------------------------------------------------------------------

    def generate(self, prompt_token_ids: Sequence[int], n: int = 1, *,
                 sampling: SamplingLike = None, logprobs: bool = False, top_logprobs: int = 0,
                 replay_ssm: Union[ReplaySsmMode, str, None] = None,
                 request_id: Optional[str] = None, min_weight_version: int = 0,
                 timeout: Any = DEFAULT, retry: Optional[RetryPolicy] = None,
                 endpoint: Optional[str] = None) -> GenerateResult:
        """One GRPO group: ``n`` completions of the prompt (Rollout.Generate).

        See :func:`rollout_client.params.build_generate_request` for the arguments; ``timeout``
        is the deadline of the whole call in seconds (retries included), ``endpoint`` pins the
        call to one endpoint. Raises :class:`RolloutError` on failure.
        """
        request = build_generate_request(
            prompt_token_ids, n, sampling=sampling, logprobs=logprobs,
            top_logprobs=top_logprobs, replay_ssm=replay_ssm, request_id=request_id,
            min_weight_version=min_weight_version)
        return self.generate_request(request, timeout=timeout, retry=retry, endpoint=endpoint)

    def generate_request(self, request: rollout_pb2.GenerateRequest, *, timeout: Any = DEFAULT,
                         retry: Optional[RetryPolicy] = None,
                         endpoint: Optional[str] = None) -> GenerateResult:
        """Rollout.Generate with a ready-made GenerateRequest message."""
        response, ep, attempts, seconds = self._unary(
            M_GENERATE, lambda s: s[0].Generate, request, timeout=self._data_timeout(timeout),
            retry=self._policy(retry), endpoint=self._check_endpoint(endpoint),
            request_id=request.request_id or None)
        return GenerateResult.from_proto(response, prompt_token_ids=request.prompt_token_ids,
                                         endpoint=ep, attempts=attempts, client_seconds=seconds)

    def generate_batch(self, prompts: Sequence[Sequence[int]], n: int = 1, *,
                       max_concurrency: int = 64, **kwargs: Any) -> List[GenerateResult]:
        """One group per prompt, run concurrently (at most ``max_concurrency`` in flight), in
        prompt order. Keyword arguments are those of :meth:`generate` (a ``request_id`` is used
        as a prefix: "<id>-<i>"). The first failure is raised once every call has ended."""
        prefix = kwargs.pop("request_id", None)
        if not prompts:
            return []
        workers = max(1, min(max_concurrency, len(prompts)))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            futures = [pool.submit(self.generate, p, n,
                                   request_id=f"{prefix}-{i}" if prefix else None, **kwargs)
                       for i, p in enumerate(prompts)]
            return [f.result() for f in futures]

    def generate_stream(self, prompt_token_ids: Sequence[int], n: int = 1, *,
                        sampling: SamplingLike = None, logprobs: bool = False,
                        top_logprobs: int = 0,
                        replay_ssm: Union[ReplaySsmMode, str, None] = None,
                        request_id: Optional[str] = None, min_weight_version: int = 0,
                        timeout: Any = DEFAULT, retry: Optional[RetryPolicy] = None,
                        endpoint: Optional[str] = None) -> "GenerateStream":
        """Rollout.GenerateStream: an iterator of :class:`StreamChunk` (tokens as produced).

            with client.generate_stream(prompt, n=4, sampling={"max_tokens": 4096}) as stream:
                for chunk in stream:
                    for delta in chunk.deltas: ...
            group = stream.result()   # the assembled GenerateResult

        The call starts on first iteration. Leaving the ``with`` block (or ``stream.cancel()``)
        before the end cancels the request on the server, which frees its memory. A failure before
        the first chunk is retried like Generate; after it, it is raised.
        """
        request = build_generate_request(
            prompt_token_ids, n, sampling=sampling, logprobs=logprobs,
            top_logprobs=top_logprobs, replay_ssm=replay_ssm, request_id=request_id,
            min_weight_version=min_weight_version)
        return GenerateStream(self, request, timeout=self._data_timeout(timeout),
                              retry=self._policy(retry), endpoint=self._check_endpoint(endpoint))

    def score(self, prompt_token_ids: Sequence[int], completions: Sequence[Sequence[int]], *,
              top_logprobs: int = 0, request_id: Optional[str] = None,
              min_weight_version: int = 0, timeout: Any = DEFAULT,
              retry: Optional[RetryPolicy] = None,
              endpoint: Optional[str] = None) -> ScoreResult:
        """Rollout.Score: teacher-forced log-probabilities of each completion after the prompt."""
        request = build_score_request(prompt_token_ids, completions, top_logprobs=top_logprobs,
                                      request_id=request_id,
                                      min_weight_version=min_weight_version)
        response, ep, attempts, _ = self._unary(
            M_SCORE, lambda s: s[0].Score, request, timeout=self._data_timeout(timeout),
            retry=self._policy(retry), endpoint=self._check_endpoint(endpoint),
            request_id=request.request_id)
        return ScoreResult.from_proto(response, endpoint=ep, attempts=attempts)

    def abort(self, request_id: Optional[str] = None, *, all: bool = False,  # noqa: A002
              timeout: Any = DEFAULT, endpoints: Optional[Iterable[str]] = None) -> AbortResult:
        """Rollout.Abort of one request (sent to the endpoint running it when this client sent
        it, else to every endpoint) or of every request on every endpoint (``all=True``).
        Aborted Generate calls return OK with finish_reason ABORTED and their partial tokens.
        Raises NOT_FOUND when no endpoint runs ``request_id``."""
        request = build_abort_request(request_id, all=all)
        timeout = self._ctl_timeout(timeout)
        targets = endpoints
        if targets is None and request_id is not None:
            known = self._endpoint_of(request_id)
            targets = [known] if known else None
        try:
            per = self._fan_out(M_ABORT, lambda s: s[0].Abort, request,
                                lambda r, ep: AbortResult.from_proto(r, endpoint=ep),
                                endpoints=targets, timeout=timeout, retry=NO_RETRY, admin=False)
        except RolloutError as e:
            per = abort_partial(e, request_id)
        return AbortResult.merge(per.values())

    def server_info(self, endpoint: Optional[str] = None, *,
                    timeout: Any = DEFAULT, retry: Optional[RetryPolicy] = None) -> ServerInfo:
        """Rollout.GetServerInfo of one endpoint (default: the first)."""
        ep = self._check_endpoint(endpoint) or self._endpoints[0]
        response, ep, _, _ = self._unary(M_INFO, lambda s: s[0].GetServerInfo,
                                         rollout_pb2.GetServerInfoRequest(),
                                         timeout=self._ctl_timeout(timeout),
                                         retry=self._policy(retry), endpoint=ep)
        return ServerInfo.from_proto(response, endpoint=ep)

    def server_infos(self, *, timeout: Any = DEFAULT,
                     retry: Optional[RetryPolicy] = None) -> Dict[str, ServerInfo]:
        """GetServerInfo of every endpoint, by endpoint."""
        return self._fan_out(M_INFO, lambda s: s[0].GetServerInfo,
                             rollout_pb2.GetServerInfoRequest(),
                             lambda r, ep: ServerInfo.from_proto(r, endpoint=ep), endpoints=None,
                             timeout=self._ctl_timeout(timeout), retry=self._policy(retry),
                             admin=False)

    # -- health -------------------------------------------------------------------------------

    def health(self, service: str = "", endpoint: Optional[str] = None, *,
               timeout: Any = DEFAULT) -> HealthStatus:
        """grpc.health.v1 Check of ``service`` on one endpoint (default: the first). ""
        is the process; "rollout.v1.Rollout" is "can generate" (a ready worker, no stall).
        Not retried: a health check reports what it sees."""
        ep = self._check_endpoint(endpoint) or self._endpoints[0]
        try:
            status, _, _, _ = self._unary(M_HEALTH, lambda s: s[2], service,
                                          timeout=self._ctl_timeout(timeout), retry=NO_RETRY,
                                          endpoint=ep)
        except RolloutError as e:
            unknown = health_status_from_error(e)
            if unknown is None:
                raise
            return unknown
        return HealthStatus.from_health(status)

    def wait_ready(self, timeout: float = 120.0, *, service: str = ROLLOUT_SERVICE,
                   poll_interval: float = 0.5) -> None:
        """Waits until ``service`` is SERVING on every endpoint; raises :class:`RolloutError`
        (DEADLINE_EXCEEDED, with the last status seen) when ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        pending = list(self._endpoints)
        last: Dict[str, str] = {}
        while True:
            for ep in list(pending):
                try:
                    status = self.health(service, ep, timeout=min(5.0, max(0.1, timeout)))
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
            time.sleep(poll_interval)

    # -- Admin (sent to every endpoint unless ``endpoints`` is given) -------------------------

    def reload_config(self, config: Optional[config_pb2.ServerConfig] = None, *,
                      dry_run: bool = False, endpoints: Optional[Iterable[str]] = None,
                      timeout: Any = DEFAULT) -> Dict[str, ReloadResult]:
        """Admin.ReloadConfig: re-read the server's config file, or apply ``config`` (a complete
        ServerConfig) inline. A rejected reload raises INVALID_ARGUMENT naming the fields."""
        request = admin_pb2.ReloadConfigRequest(dry_run=dry_run)
        if config is not None:
            request.config.CopyFrom(config)
        return self._fan_out(M_RELOAD, lambda s: s[1].ReloadConfig, request,
                             lambda r, ep: ReloadResult.from_proto(r, endpoint=ep),
                             endpoints=endpoints, timeout=self._ctl_timeout(timeout),
                             retry=self._retry, admin=True)

    def update_weights(self, path: str, version: int = 0, *,
                       endpoints: Optional[Iterable[str]] = None, timeout: Any = DEFAULT,
                       retry: Optional[RetryPolicy] = None) -> Dict[str, UpdateWeightsResult]:
        """Admin.UpdateWeights: every endpoint loads the checkpoint directory ``path`` (on the
        servers' file system, inside their model roots). ``version`` 0 means current + 1.

        Retried (UNAVAILABLE, RESOURCE_EXHAUSTED; ``retry``, default the client's policy) always
        with an explicit version: for ``version`` 0 the client first reads each endpoint's
        serving version (GetServerInfo) and asks for that + 1. rolloutd answers a repeat of the
        update that set its version (same version, same path) with OK and that version, so a
        retry after a lost answer neither fails nor bumps the version twice. With
        ``retry=NO_RETRY`` a version 0 request is sent as it is, once."""
        policy = self._policy(retry)
        request: Any = admin_pb2.UpdateWeightsRequest(path=str(path), version=int(version))
        if not version and policy.max_attempts > 1:
            def request(ep: str) -> admin_pb2.UpdateWeightsRequest:
                info, _, _, _ = self._unary(M_INFO, lambda s: s[0].GetServerInfo,
                                            rollout_pb2.GetServerInfoRequest(),
                                            timeout=self._ctl_timeout(DEFAULT), retry=policy,
                                            endpoint=ep)
                return admin_pb2.UpdateWeightsRequest(path=str(path),
                                                      version=next_weight_version(info))
        return self._fan_out(M_UPDATE_WEIGHTS, lambda s: s[1].UpdateWeights, request,
                             lambda r, ep: UpdateWeightsResult.from_proto(r, endpoint=ep),
                             endpoints=endpoints,
                             timeout=self._ctl_timeout(timeout, UPDATE_WEIGHTS_TIMEOUT),
                             retry=policy, admin=True)

    def pause(self, mode: Union[PauseMode, str, None] = PauseMode.WAIT, *,
              endpoints: Optional[Iterable[str]] = None,
              timeout: Any = DEFAULT) -> Dict[str, PauseResult]:
        """Admin.Pause ("abort", "wait" or "keep"); new Generate/Score calls then answer
        FAILED_PRECONDITION until :meth:`resume`."""
        request = admin_pb2.PauseRequest(mode=PauseMode.parse(mode).to_proto())
        return self._fan_out(M_PAUSE, lambda s: s[1].Pause, request,
                             lambda r, ep: PauseResult.from_proto(r, endpoint=ep),
                             endpoints=endpoints,
                             timeout=self._ctl_timeout(timeout, PAUSE_TIMEOUT),
                             retry=self._retry, admin=True)

    def resume(self, *, endpoints: Optional[Iterable[str]] = None,
               timeout: Any = DEFAULT) -> Dict[str, ResumeResult]:
        """Admin.Resume: kept requests continue, new ones are admitted again."""
        return self._fan_out(M_RESUME, lambda s: s[1].Resume, admin_pb2.ResumeRequest(),
                             lambda r, ep: ResumeResult.from_proto(r, endpoint=ep),
                             endpoints=endpoints, timeout=self._ctl_timeout(timeout),
                             retry=self._retry, admin=True)


class GenerateStream:
    """Iterator over the :class:`StreamChunk` of one GenerateStream call (see
    :meth:`RolloutClient.generate_stream`)."""

    def __init__(self, client: RolloutClient, request: rollout_pb2.GenerateRequest, *,
                 timeout: Optional[float], retry: RetryPolicy, endpoint: Optional[str]) -> None:
        self._client = client
        self.request = request
        self._timeout = timeout
        self._retry = retry
        self._endpoint = endpoint
        self._call: Any = None
        self._cancelled = False
        self._accumulator = StreamAccumulator(request.n, request.prompt_token_ids)
        self._iterator: Optional[Iterator[StreamChunk]] = None
        self.endpoint: Optional[str] = None
        self.attempts = 0
        self._start = time.monotonic()

    @property
    def request_id(self) -> str:
        return self.request.request_id

    @property
    def done(self) -> bool:
        """True once the last chunk (``done``) was received."""
        return self._accumulator.done

    def __iter__(self) -> Iterator[StreamChunk]:
        if self._iterator is None:
            self._iterator = self._run()
        return self._iterator

    def __next__(self) -> StreamChunk:
        return next(iter(self))

    def _run(self) -> Iterator[StreamChunk]:
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
                self._call = client._stubs[ep][0].GenerateStream(self.request, timeout=remaining,
                                                                 metadata=metadata)
                if self._cancelled:
                    self._call.cancel()
                for message in self._call:
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
            except grpc.RpcError as e:
                if self._cancelled:
                    raise RolloutError(grpc.StatusCode.CANCELLED, "stream cancelled by the client",
                                       method=M_GENERATE_STREAM, endpoint=ep,
                                       attempts=att.attempt) from None
                if received:
                    raise RolloutError.from_rpc_error(e, method=M_GENERATE_STREAM, endpoint=ep,
                                                      attempts=att.attempt) from None
                error: grpc.RpcError = e
            finally:
                # Runs on normal end, error, and when the consumer stops early (generator close):
                # then the call is cancelled so the server frees the request.
                if self._call is not None and not self._accumulator.done:
                    self._call.cancel()
                client._picker.release(ep)
                client._untrack(self.request_id)
            time.sleep(att.after_failure(error, ep))

    def cancel(self) -> None:
        """Cancels the call (the server aborts the request and frees its memory)."""
        self._cancelled = True
        if self._call is not None:
            self._call.cancel()

    def result(self) -> GenerateResult:
        """Consumes the remaining chunks and returns the assembled group."""
        for _ in self:
            pass
        return self._accumulator.result(endpoint=self.endpoint or "", attempts=self.attempts,
                                        client_seconds=time.monotonic() - self._start)

    def partial_result(self) -> GenerateResult:
        """The group as received so far (e.g. after cancel)."""
        return self._accumulator.result(endpoint=self.endpoint or "", attempts=self.attempts,
                                        client_seconds=time.monotonic() - self._start)

    def __enter__(self) -> "GenerateStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.done:
            self.cancel()
        if self._iterator is not None:
            self._iterator.close()  # type: ignore[attr-defined]
