"""In-process fake rolloutd servers for the client tests (grpc.server + the generated servicers).

A :class:`FakeServer` serves Rollout, Admin and grpc.health.v1 on 127.0.0.1:<free port>. Each RPC
follows a *plan*: a queue of behaviours consumed one per call, after which the default behaviour
(a deterministic, well-formed answer) applies:

    with FakeServer() as server:
        server.plan("Generate", Fail(grpc.StatusCode.RESOURCE_EXHAUSTED, "queue full"), OK)
        ...
        assert len(server.calls["Generate"]) == 2

Behaviours: :data:`OK`, :class:`Fail` (status code, message, trailing metadata),
:class:`Sleep` (then answer; used for deadlines and load), :class:`Hold` (wait for an event),
or any callable ``(request, context) -> response``.
"""
from __future__ import annotations

import collections
import threading
import time
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import grpc

from rollout_client import _health
from rollout_client.proto import admin_pb2, admin_pb2_grpc, rollout_pb2, rollout_pb2_grpc

VOCAB = 1031


@dataclass
class Fail:
    code: grpc.StatusCode
    message: str = "fake failure"
    trailing: Tuple[Tuple[str, Any], ...] = ()


@dataclass
class Sleep:
    seconds: float


@dataclass
class Hold:
    """Blocks the call until ``event`` is set (or the call is cancelled)."""
    event: threading.Event


class _Ok:
    def __repr__(self) -> str:
        return "OK"


OK = _Ok()


@dataclass
class Call:
    """One received call: the request, its metadata (lower-case keys) and how it ended."""
    request: Any
    metadata: Dict[str, str]
    cancelled: threading.Event = field(default_factory=threading.Event)
    deadline: Optional[float] = None  # seconds left when the call arrived


def make_generate_response(request: rollout_pb2.GenerateRequest, *, weight_version: int = 1,
                           worker: str = "0", tokens: Optional[int] = None
                           ) -> rollout_pb2.GenerateResponse:
    """A deterministic, well-formed answer: completion i is (last prompt id + i + j) % VOCAB."""
    max_tokens = tokens if tokens is not None else (
        request.sampling.max_tokens if request.sampling.HasField("max_tokens") else 4)
    k = request.logprobs.top_k
    completions = []
    for i in range(request.n):
        base = (request.prompt_token_ids[-1] if request.prompt_token_ids else 0) + i
        ids = [(base + j) % VOCAB for j in range(max_tokens)]
        c = rollout_pb2.Completion(
            index=i, token_ids=ids, finish_reason=rollout_pb2.FINISH_REASON_LENGTH,
            weight_version_start=weight_version, weight_version_end=weight_version,
            replay_ssm_applied=request.replay_ssm == rollout_pb2.REPLAY_SSM_MODE_ON,
        )
        if request.logprobs.sampled:
            c.logprobs.extend(-0.5 - 0.01 * j for j in range(max_tokens))
        for j in range(max_tokens):
            c.top_logprob_token_ids.extend((ids[j] + a) % VOCAB for a in range(k))
            c.top_logprobs.extend(-0.5 - 0.01 * j - a for a in range(k))
        completions.append(c)
    return rollout_pb2.GenerateResponse(
        request_id=request.request_id or "rolloutd-fake",
        completions=completions,
        seed=request.sampling.seed if request.sampling.HasField("seed") else 12345,
        replay_ssm_mode=request.replay_ssm or rollout_pb2.REPLAY_SSM_MODE_AUTO,
        usage=rollout_pb2.Usage(prompt_tokens=len(request.prompt_token_ids),
                                prompt_tokens_computed=len(request.prompt_token_ids),
                                completion_tokens=request.n * max_tokens),
        timing=rollout_pb2.Timing(queue_seconds=0.001, time_to_first_token_seconds=0.01,
                                  total_seconds=0.02),
        worker=worker,
    )


def stream_chunks(response: rollout_pb2.GenerateResponse,
                  per_chunk: int = 2) -> List[rollout_pb2.GenerateStreamChunk]:
    """Splits a GenerateResponse into GenerateStream chunks (as rolloutd would send them)."""
    chunks = [rollout_pb2.GenerateStreamChunk(request_id=response.request_id, seed=response.seed,
                                              replay_ssm_mode=response.replay_ssm_mode)]
    longest = max((len(c.token_ids) for c in response.completions), default=0)
    for start in range(0, longest, per_chunk):
        chunk = rollout_pb2.GenerateStreamChunk(request_id=response.request_id)
        for c in response.completions:
            ids = list(c.token_ids[start:start + per_chunk])
            if not ids:
                continue
            k = len(c.top_logprob_token_ids) // max(1, len(c.token_ids))
            d = chunk.deltas.add(index=c.index, offset=start, token_ids=ids,
                                 weight_version=c.weight_version_end)
            d.logprobs.extend(c.logprobs[start:start + per_chunk])
            span = slice(start * k, (start + len(ids)) * k)
            d.top_logprob_token_ids.extend(c.top_logprob_token_ids[span])
            d.top_logprobs.extend(c.top_logprobs[span])
            if start + per_chunk >= len(c.token_ids):
                d.finish_reason = c.finish_reason
                d.replay_ssm_applied = c.replay_ssm_applied
                d.replay_ssm_fallback_reason = c.replay_ssm_fallback_reason
                d.num_preemptions = c.num_preemptions
        chunks.append(chunk)
    chunks.append(rollout_pb2.GenerateStreamChunk(request_id=response.request_id, done=True,
                                                  usage=response.usage, timing=response.timing,
                                                  worker=response.worker))
    return chunks


class FakeServer:
    """A fake rolloutd: Rollout + Admin + health on 127.0.0.1:<free port>."""

    def __init__(self, *, admin_token: Optional[str] = None, weight_version: int = 1,
                 name: str = "fake", max_workers: int = 16,
                 options: Sequence[Tuple[str, Any]] = ()) -> None:
        self.admin_token = admin_token
        self.weight_version = weight_version
        self.weights_path = ""  # path of the last UpdateWeights that loaded something
        self.name = name
        self.health_status: Dict[str, int] = {
            "": _health.SERVING,
            "rollout.v1.Rollout": _health.SERVING,
        }
        self.stream_delay = 0.0  # seconds between stream chunks
        self.stream_forever = False  # keep streaming until cancelled
        self.stream_drop_done = False  # end the stream without its last (done) chunk
        self.calls: Dict[str, List[Call]] = collections.defaultdict(list)
        self._plans: Dict[str, collections.deque] = collections.defaultdict(collections.deque)
        self._lock = threading.Lock()
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers),
                                   options=[("grpc.max_send_message_length", 512 << 20),
                                            ("grpc.max_receive_message_length", 64 << 20),
                                            *options])
        rollout_pb2_grpc.add_RolloutServicer_to_server(_Rollout(self), self._server)
        admin_pb2_grpc.add_AdminServicer_to_server(_Admin(self), self._server)
        self._server.add_generic_rpc_handlers((_health.servicer_handler(_Health(self).Check),))
        port = self._server.add_insecure_port("127.0.0.1:0")
        self.endpoint = f"127.0.0.1:{port}"
        self._server.start()

    # -- test API -----------------------------------------------------------------------------

    def plan(self, method: str, *behaviours: Any) -> "FakeServer":
        """Queues behaviours for the next calls of ``method`` (e.g. "Generate")."""
        with self._lock:
            self._plans[method].extend(behaviours)
        return self

    def apply_weights(self, request: admin_pb2.UpdateWeightsRequest) -> None:
        """What a successful UpdateWeights changes (also for behaviours that then fail)."""
        with self._lock:
            self.weight_version = request.version or self.weight_version + 1
            self.weights_path = request.path

    def stop(self) -> None:
        self._server.stop(grace=None)

    def __enter__(self) -> "FakeServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- servicer plumbing --------------------------------------------------------------------

    def _enter(self, method: str, request: Any, context: grpc.ServicerContext) -> Tuple[Call, Any]:
        md = {k.lower(): v for k, v in context.invocation_metadata()}
        call = Call(request=request, metadata=md, deadline=context.time_remaining())
        context.add_callback(call.cancelled.set)
        with self._lock:
            self.calls[method].append(call)
            behaviour = self._plans[method].popleft() if self._plans[method] else OK
        return call, behaviour

    def _run(self, method: str, request: Any, context: grpc.ServicerContext,
             default: Callable[[], Any]) -> Any:
        call, behaviour = self._enter(method, request, context)
        return self._apply(behaviour, request, context, default)

    def _apply(self, behaviour: Any, request: Any, context: grpc.ServicerContext,
               default: Callable[[], Any]) -> Any:
        if isinstance(behaviour, Fail):
            if behaviour.trailing:
                context.set_trailing_metadata(behaviour.trailing)
            context.abort(behaviour.code, behaviour.message)
        if isinstance(behaviour, Sleep):
            end = time.monotonic() + behaviour.seconds
            while time.monotonic() < end and context.is_active():
                time.sleep(0.01)
        if isinstance(behaviour, Hold):
            while not behaviour.event.wait(0.01):
                if not context.is_active():
                    break
        if callable(behaviour) and not isinstance(behaviour, (Fail, Sleep, Hold, _Ok)):
            return behaviour(request, context)
        return default()

    def check_token(self, context: grpc.ServicerContext) -> None:
        """As rolloutd's CheckAdminToken: "authorization: Bearer <token>" (scheme any case)."""
        if not self.admin_token:
            return
        md = {k.lower(): v for k, v in context.invocation_metadata()}
        value = md.get("authorization")
        if value is None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED,
                          'admin RPCs need the metadata "authorization: Bearer <token>"')
        if not value.lower().startswith("bearer "):
            context.abort(grpc.StatusCode.UNAUTHENTICATED,
                          'the authorization metadata must be "Bearer <token>"')
        if value[len("bearer "):].strip() != self.admin_token:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid admin token")


class _Rollout(rollout_pb2_grpc.RolloutServicer):
    def __init__(self, server: FakeServer) -> None:
        self.s = server

    def Generate(self, request, context):
        return self.s._run("Generate", request, context, lambda: make_generate_response(
            request, weight_version=self.s.weight_version, worker=self.s.name))

    def GenerateStream(self, request, context):
        s = self.s
        call, behaviour = s._enter("GenerateStream", request, context)
        if isinstance(behaviour, Fail) and behaviour.message.startswith("after-first:"):
            first = stream_chunks(make_generate_response(request))[0]
            yield first
            context.abort(behaviour.code, behaviour.message)
        response = s._apply(behaviour, request, context, lambda: make_generate_response(
            request, weight_version=s.weight_version, worker=s.name))
        chunks = stream_chunks(response)
        if s.stream_drop_done:
            chunks = chunks[:-1]
        i = 0
        while True:
            if i < len(chunks) - (1 if s.stream_forever else 0):
                chunk = chunks[i]
                i += 1
            elif s.stream_forever:
                chunk = rollout_pb2.GenerateStreamChunk(request_id=response.request_id)
            else:
                return
            if not context.is_active():
                return
            yield chunk
            if s.stream_delay:
                time.sleep(s.stream_delay)

    def Score(self, request, context):
        def default():
            out = rollout_pb2.ScoreResponse(request_id=request.request_id,
                                            weight_version=self.s.weight_version,
                                            worker=self.s.name)
            for i, seq in enumerate(request.completions):
                c = out.completions.add(index=i)
                c.logprobs.extend(-1.0 - 0.1 * j for j in range(len(seq.token_ids)))
                for j, t in enumerate(seq.token_ids):
                    c.top_logprob_token_ids.extend((t + a) % VOCAB
                                                   for a in range(request.top_logprobs))
                    c.top_logprobs.extend(-1.0 - a for a in range(request.top_logprobs))
            return out
        return self.s._run("Score", request, context, default)

    def Abort(self, request, context):
        def default():
            if request.WhichOneof("target") == "request_id":
                running = [c for c in self.s.calls["Generate"] + self.s.calls["GenerateStream"]
                           if c.request.request_id == request.request_id
                           and not c.cancelled.is_set()]
                if not running:
                    context.abort(grpc.StatusCode.NOT_FOUND,
                                  f'no running request has id "{request.request_id}"')
                return rollout_pb2.AbortResponse(request_ids=[request.request_id])
            return rollout_pb2.AbortResponse()
        return self.s._run("Abort", request, context, default)

    def GetServerInfo(self, request, context):
        def default():
            info = rollout_pb2.ServerInfo(version="0.1.0-fake", commit="abc",
                                          config_generation=1,
                                          weight_version=self.s.weight_version, ready_workers=1)
            info.model.model_type = "qwen3_5"
            info.model.name = "tiny_qwen3_5"
            info.model.vocab_size = VOCAB
            info.model.num_layers = 2
            info.model.layer_types.extend([rollout_pb2.LAYER_TYPE_GATED_DELTANET,
                                           rollout_pb2.LAYER_TYPE_FULL_ATTENTION])
            info.model.eos_token_ids.append(3)
            info.limits.max_n = 64
            info.limits.max_send_message_bytes = 512 << 20
            info.default_sampling.temperature = 1.0
            info.default_sampling.max_tokens = 1024
            info.replay_ssm.default_mode = rollout_pb2.REPLAY_SSM_MODE_AUTO
            info.replay_ssm.supported_modes.extend([1, 2, 3])
            w = info.workers.add(index=0, device="cpu", backend="cpu",
                                 state=rollout_pb2.WORKER_STATE_READY,
                                 weight_version=self.s.weight_version)
            del w
            return info
        return self.s._run("GetServerInfo", request, context, default)


class _Admin(admin_pb2_grpc.AdminServicer):
    def __init__(self, server: FakeServer) -> None:
        self.s = server

    def _admin(self, method, request, context, default):
        call, behaviour = self.s._enter(method, request, context)
        self.s.check_token(context)
        return self.s._apply(behaviour, request, context, default)

    def ReloadConfig(self, request, context):
        return self._admin("ReloadConfig", request, context, lambda: admin_pb2.ReloadConfigResponse(
            applied=not request.dry_run, dry_run=request.dry_run, generation=2,
            source="inline" if request.HasField("config") else "/etc/rolloutd.textproto",
            changes=[admin_pb2.ConfigFieldChange(
                field="admission.max_n", old_value="64", new_value="8",
                outcome=(admin_pb2.ConfigFieldChange.OUTCOME_WOULD_APPLY if request.dry_run
                         else admin_pb2.ConfigFieldChange.OUTCOME_APPLIED))]))

    def UpdateWeights(self, request, context):
        def default():
            # rolloutd's rule (admin.proto): 0 = current + 1; an explicit version must be
            # greater, except that repeating the last update (same version, same path) is an OK
            # no-op, so that a retry after a lost answer does not fail or bump twice.
            if request.version and request.version == self.s.weight_version and \
                    request.path == self.s.weights_path:
                return admin_pb2.UpdateWeightsResponse(weight_version=self.s.weight_version)
            if request.version and request.version <= self.s.weight_version:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                              f"version: must be greater than the current weight version "
                              f"{self.s.weight_version}, got {request.version}")
            self.s.apply_weights(request)
            return admin_pb2.UpdateWeightsResponse(weight_version=self.s.weight_version,
                                                   seconds=0.01)
        return self._admin("UpdateWeights", request, context, default)

    def Pause(self, request, context):
        return self._admin("Pause", request, context, lambda: admin_pb2.PauseResponse(
            requests_aborted=1 if request.mode == admin_pb2.PAUSE_MODE_ABORT else 0))

    def Resume(self, request, context):
        return self._admin("Resume", request, context, lambda: admin_pb2.ResumeResponse())


class _Health:
    def __init__(self, server: FakeServer) -> None:
        self.s = server

    def Check(self, request, context):
        def default():
            status = self.s.health_status.get(request)
            if status is None:
                context.abort(grpc.StatusCode.NOT_FOUND, "unknown service")
            return status
        return self.s._run("Check", request, context, default)


def retry_info_status(delay_seconds: int, delay_nanos: int = 0,
                      code: int = 8, message: str = "queue full") -> bytes:
    """A serialized google.rpc.Status carrying a google.rpc.RetryInfo (hand-encoded)."""
    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            b = n & 0x7F
            n >>= 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def ld(number: int, payload: bytes) -> bytes:
        return varint(number << 3 | 2) + varint(len(payload)) + payload

    duration = varint(1 << 3) + varint(delay_seconds) + varint(2 << 3) + varint(delay_nanos)
    retry_info = ld(1, duration)
    any_msg = ld(1, b"type.googleapis.com/google.rpc.RetryInfo") + ld(2, retry_info)
    return varint(1 << 3) + varint(code) + ld(2, message.encode()) + ld(3, any_msg)
