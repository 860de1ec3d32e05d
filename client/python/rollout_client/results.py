"""Typed results: plain dataclasses built from the rollout.v1 response messages.

Every list is a Python list (token ids are ``int``, log-probabilities ``float``); the top-k
alternatives, flat and row-major on the wire, are reshaped to one row per sampled token. Enum
values become :class:`enum.Enum` members named like the proto values without their prefix
(``FINISH_REASON_STOP`` -> ``FinishReason.STOP``); a value this client does not know (a newer
server) becomes ``UNKNOWN`` instead of failing.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Type, TypeVar

from rollout_client.proto import admin_pb2, rollout_pb2

E = TypeVar("E", bound="_ProtoEnum")


class _ProtoEnum(str, enum.Enum):
    """An enum mirroring a proto enum; members are also their names as strings."""

    @classmethod
    def _prefix(cls) -> str:
        raise NotImplementedError

    @classmethod
    def from_proto(cls: Type[E], value: int, proto_enum: Any) -> E:
        """The member for a proto enum number (``UNKNOWN`` for numbers this client lacks)."""
        try:
            name = proto_enum.Name(value)
        except ValueError:
            return cls["UNKNOWN"]
        prefix = cls._prefix()
        short = name[len(prefix):] if prefix and name.startswith(prefix) else name
        return cls.__members__.get(short, cls["UNKNOWN"])

    def proto_name(self) -> str:
        """The proto enum value name, e.g. ``"REPLAY_SSM_MODE_ON"``."""
        return self._prefix() + self.value

    def __str__(self) -> str:  # "STOP", not "FinishReason.STOP"
        return self.value


class FinishReason(_ProtoEnum):
    """Why a completion ended (rollout.v1.FinishReason)."""

    UNSPECIFIED = "UNSPECIFIED"  #: not finished yet (stream deltas)
    STOP = "STOP"  #: an EOS id or one of stop_token_ids was sampled (kept as the last token)
    LENGTH = "LENGTH"  #: max_tokens or the model's context length was reached
    ABORTED = "ABORTED"  #: Abort or Pause(ABORT) ended it; the tokens so far are returned
    UNKNOWN = "UNKNOWN"

    @classmethod
    def _prefix(cls) -> str:
        return "FINISH_REASON_"


class ReplaySsmMode(_ProtoEnum):
    """ReplaySSM decode mode of the GDN layers (rollout.v1.ReplaySsmMode)."""

    DEFAULT = "DEFAULT"  #: the server's configured default
    ON = "ON"
    OFF = "OFF"
    AUTO = "AUTO"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def _prefix(cls) -> str:
        return "REPLAY_SSM_MODE_"

    @classmethod
    def parse(cls, value: "ReplaySsmMode | str | int | None") -> "ReplaySsmMode":
        """Accepts a member, ``"on"``/``"ON"``/``"REPLAY_SSM_MODE_ON"``, a proto number or None."""
        if value is None:
            return cls.DEFAULT
        if isinstance(value, cls):
            return value
        if isinstance(value, int):
            return cls.from_proto(value, rollout_pb2.ReplaySsmMode)
        text = str(value).strip().upper()
        if text.startswith(cls._prefix()):
            text = text[len(cls._prefix()):]
        if text in cls.__members__ and text != "UNKNOWN":
            return cls[text]
        raise ValueError(f"replay_ssm: must be one of default, on, off, auto; got {value!r}")

    def to_proto(self) -> int:
        if self is ReplaySsmMode.UNKNOWN:
            raise ValueError("replay_ssm: UNKNOWN cannot be sent")
        return rollout_pb2.ReplaySsmMode.Value(self.proto_name())


class ReplaySsmFallbackReason(_ProtoEnum):
    """Why a completion asking ReplaySSM ON decoded plainly (rollout.v1.ReplaySsmFallbackReason)."""

    NONE = "NONE"
    NO_GDN_LAYERS = "NO_GDN_LAYERS"
    RING_POOL_EXHAUSTED = "RING_POOL_EXHAUSTED"
    BACKEND_UNSUPPORTED = "BACKEND_UNSUPPORTED"
    DISABLED_BY_CONFIG = "DISABLED_BY_CONFIG"
    PREFILL_ONLY = "PREFILL_ONLY"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def _prefix(cls) -> str:
        return "REPLAY_SSM_FALLBACK_REASON_"


class PauseMode(_ProtoEnum):
    """What Admin.Pause does with requests in flight (rollout.v1.PauseMode)."""

    UNSPECIFIED = "UNSPECIFIED"  #: same as WAIT
    ABORT = "ABORT"  #: end them now; they return OK with ABORTED and their partial tokens
    WAIT = "WAIT"  #: let them finish; Pause returns when none is left
    KEEP = "KEEP"  #: freeze them in place; they continue after Resume
    UNKNOWN = "UNKNOWN"

    @classmethod
    def _prefix(cls) -> str:
        return "PAUSE_MODE_"

    @classmethod
    def parse(cls, value: "PauseMode | str | None") -> "PauseMode":
        if value is None:
            return cls.WAIT
        if isinstance(value, cls):
            return value
        text = str(value).strip().upper()
        if text.startswith(cls._prefix()):
            text = text[len(cls._prefix()):]
        if text in ("ABORT", "WAIT", "KEEP"):
            return cls[text]
        raise ValueError(f"pause mode: must be one of abort, wait, keep; got {value!r}")

    def to_proto(self) -> int:
        return admin_pb2.PauseMode.Value(self.proto_name())


class WorkerState(_ProtoEnum):
    """State of one rollout-worker process (rollout.v1.WorkerState)."""

    UNSPECIFIED = "UNSPECIFIED"
    STARTING = "STARTING"
    READY = "READY"
    RESTARTING = "RESTARTING"
    STOPPED = "STOPPED"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def _prefix(cls) -> str:
        return "WORKER_STATE_"


class ConfigChangeOutcome(_ProtoEnum):
    """What a reload did with one changed config field (ConfigFieldChange.Outcome)."""

    UNSPECIFIED = "UNSPECIFIED"
    APPLIED = "APPLIED"
    WOULD_APPLY = "WOULD_APPLY"
    NEEDS_RESTART = "NEEDS_RESTART"
    REJECTED = "REJECTED"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def _prefix(cls) -> str:
        return "OUTCOME_"


class HealthStatus(_ProtoEnum):
    """grpc.health.v1 serving status; SERVICE_UNKNOWN also when Check answers NOT_FOUND."""

    UNKNOWN = "UNKNOWN"
    SERVING = "SERVING"
    NOT_SERVING = "NOT_SERVING"
    SERVICE_UNKNOWN = "SERVICE_UNKNOWN"

    @classmethod
    def _prefix(cls) -> str:
        return ""

    @classmethod
    def from_health(cls, value: int) -> "HealthStatus":
        """From the HealthCheckResponse.ServingStatus number."""
        names = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}
        return cls[names.get(value, "UNKNOWN")]


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _rows(flat: Sequence[Any], num_rows: int, what: str) -> List[List[Any]]:
    """Reshapes a row-major [num_rows, k] list into num_rows lists of k."""
    if not flat:
        return []
    if num_rows <= 0 or len(flat) % num_rows:
        raise ValueError(f"malformed response: {what} has {len(flat)} entries, not a multiple of "
                         f"the {num_rows} tokens")
    k = len(flat) // num_rows
    return [list(flat[i * k:(i + 1) * k]) for i in range(num_rows)]


@dataclass
class Usage:
    """Token counts of one request."""

    prompt_tokens: int = 0
    #: Prompt tokens the engine ran (once per group; more after a recomputing preemption).
    prompt_tokens_computed: int = 0
    #: Tokens sampled over all completions.
    completion_tokens: int = 0

    @classmethod
    def from_proto(cls, msg: rollout_pb2.Usage) -> "Usage":
        return cls(msg.prompt_tokens, msg.prompt_tokens_computed, msg.completion_tokens)


@dataclass
class Timing:
    """Server-side timing in seconds, from the request's arrival at rolloutd."""

    queue_seconds: float = 0.0
    time_to_first_token_seconds: float = 0.0
    total_seconds: float = 0.0

    @classmethod
    def from_proto(cls, msg: rollout_pb2.Timing) -> "Timing":
        return cls(msg.queue_seconds, msg.time_to_first_token_seconds, msg.total_seconds)


# ---------------------------------------------------------------------------------------------
# Generate
# ---------------------------------------------------------------------------------------------


@dataclass
class Completion:
    """One completion of a GRPO group.

    ``logprobs[i]`` is log p(token_ids[i]) under the raw model distribution (fp32 log-softmax of
    the logits, before temperature/top-k/top-p/min-p); empty unless sampled logprobs were asked.
    ``top_logprob_token_ids[i]`` / ``top_logprobs[i]`` hold the k most likely tokens at position i
    (most likely first); empty unless ``top_logprobs > 0`` was asked.
    """

    index: int
    token_ids: List[int]
    logprobs: List[float] = field(default_factory=list)
    top_logprob_token_ids: List[List[int]] = field(default_factory=list)
    top_logprobs: List[List[float]] = field(default_factory=list)
    finish_reason: FinishReason = FinishReason.UNSPECIFIED
    #: Weight versions that produced the first and the last token (differ only when weights were
    #: updated while this completion ran).
    weight_version_start: int = 0
    weight_version_end: int = 0
    #: At least one decode step ran on the ReplaySSM ring.
    replay_ssm_applied: bool = False
    #: Set when ReplaySSM ON was resolved and the ring could not be used.
    replay_ssm_fallback_reason: ReplaySsmFallbackReason = ReplaySsmFallbackReason.NONE
    num_preemptions: int = 0

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def sum_logprobs(self) -> float:
        """Sum of the sampled tokens' log-probabilities (0.0 when none were returned)."""
        return float(sum(self.logprobs))

    @classmethod
    def from_proto(cls, msg: rollout_pb2.Completion) -> "Completion":
        tokens = list(msg.token_ids)
        return cls(
            index=msg.index,
            token_ids=tokens,
            logprobs=list(msg.logprobs),
            top_logprob_token_ids=_rows(msg.top_logprob_token_ids, len(tokens),
                                        "top_logprob_token_ids"),
            top_logprobs=_rows(msg.top_logprobs, len(tokens), "top_logprobs"),
            finish_reason=FinishReason.from_proto(msg.finish_reason, rollout_pb2.FinishReason),
            weight_version_start=msg.weight_version_start,
            weight_version_end=msg.weight_version_end,
            replay_ssm_applied=msg.replay_ssm_applied,
            replay_ssm_fallback_reason=ReplaySsmFallbackReason.from_proto(
                msg.replay_ssm_fallback_reason, rollout_pb2.ReplaySsmFallbackReason),
            num_preemptions=msg.num_preemptions,
        )


@dataclass
class GenerateResult:
    """A GRPO group: n completions of one prompt (Rollout.Generate)."""

    request_id: str
    #: The prompt sent (kept by the client; the response does not repeat it).
    prompt_token_ids: List[int]
    completions: List[Completion]
    #: The seed used (the request's or the one the server picked): rerunning with it reproduces
    #: the group.
    seed: int = 0
    #: The mode the group ran with after the server resolved DEFAULT.
    replay_ssm_mode: ReplaySsmMode = ReplaySsmMode.DEFAULT
    usage: Usage = field(default_factory=Usage)
    timing: Timing = field(default_factory=Timing)
    #: Worker that produced the result ("0", "1", ...).
    worker: str = ""
    #: Endpoint (rolloutd address) that answered, and how many attempts the call took.
    endpoint: str = ""
    attempts: int = 1
    #: Wall time seen by the client, retries and back-off included.
    client_seconds: float = 0.0

    @property
    def n(self) -> int:
        return len(self.completions)

    @property
    def weight_versions(self) -> List[int]:
        """Sorted distinct weight versions over every completion's start and end."""
        versions = {c.weight_version_start for c in self.completions}
        versions |= {c.weight_version_end for c in self.completions}
        return sorted(versions)

    @property
    def completion_tokens(self) -> int:
        return sum(len(c.token_ids) for c in self.completions)

    @classmethod
    def from_proto(cls, msg: rollout_pb2.GenerateResponse, *,
                   prompt_token_ids: Sequence[int] = (), endpoint: str = "", attempts: int = 1,
                   client_seconds: float = 0.0) -> "GenerateResult":
        return cls(
            request_id=msg.request_id,
            prompt_token_ids=list(prompt_token_ids),
            completions=[Completion.from_proto(c) for c in msg.completions],
            seed=msg.seed,
            replay_ssm_mode=ReplaySsmMode.from_proto(msg.replay_ssm_mode,
                                                     rollout_pb2.ReplaySsmMode),
            usage=Usage.from_proto(msg.usage),
            timing=Timing.from_proto(msg.timing),
            worker=msg.worker,
            endpoint=endpoint,
            attempts=attempts,
            client_seconds=client_seconds,
        )


@dataclass
class CompletionDelta:
    """New tokens of one completion in a GenerateStream chunk."""

    index: int
    #: Position of token_ids[0] within the completion.
    offset: int
    token_ids: List[int]
    logprobs: List[float] = field(default_factory=list)
    top_logprob_token_ids: List[List[int]] = field(default_factory=list)
    top_logprobs: List[List[float]] = field(default_factory=list)
    #: Weight version that produced these tokens.
    weight_version: int = 0
    #: Set (not UNSPECIFIED) in the delta that ends the completion, as are the fields below.
    finish_reason: FinishReason = FinishReason.UNSPECIFIED
    replay_ssm_applied: bool = False
    replay_ssm_fallback_reason: ReplaySsmFallbackReason = ReplaySsmFallbackReason.NONE
    num_preemptions: int = 0

    @property
    def finished(self) -> bool:
        return self.finish_reason is not FinishReason.UNSPECIFIED

    @classmethod
    def from_proto(cls, msg: rollout_pb2.CompletionDelta) -> "CompletionDelta":
        tokens = list(msg.token_ids)
        return cls(
            index=msg.index,
            offset=msg.offset,
            token_ids=tokens,
            logprobs=list(msg.logprobs),
            top_logprob_token_ids=_rows(msg.top_logprob_token_ids, len(tokens),
                                        "top_logprob_token_ids"),
            top_logprobs=_rows(msg.top_logprobs, len(tokens), "top_logprobs"),
            weight_version=msg.weight_version,
            finish_reason=FinishReason.from_proto(msg.finish_reason, rollout_pb2.FinishReason),
            replay_ssm_applied=msg.replay_ssm_applied,
            replay_ssm_fallback_reason=ReplaySsmFallbackReason.from_proto(
                msg.replay_ssm_fallback_reason, rollout_pb2.ReplaySsmFallbackReason),
            num_preemptions=msg.num_preemptions,
        )


@dataclass
class StreamChunk:
    """One GenerateStream message. ``seed``/``replay_ssm_mode`` come in the first chunk;
    ``usage``/``timing``/``worker`` in the last one (``done``)."""

    request_id: str
    deltas: List[CompletionDelta]
    done: bool = False
    seed: Optional[int] = None
    replay_ssm_mode: Optional[ReplaySsmMode] = None
    usage: Optional[Usage] = None
    timing: Optional[Timing] = None
    worker: str = ""

    @classmethod
    def from_proto(cls, msg: rollout_pb2.GenerateStreamChunk) -> "StreamChunk":
        has_mode = msg.replay_ssm_mode != rollout_pb2.REPLAY_SSM_MODE_DEFAULT
        return cls(
            request_id=msg.request_id,
            deltas=[CompletionDelta.from_proto(d) for d in msg.deltas],
            done=msg.done,
            seed=msg.seed if (msg.seed or has_mode) else None,
            replay_ssm_mode=(ReplaySsmMode.from_proto(msg.replay_ssm_mode,
                                                      rollout_pb2.ReplaySsmMode)
                             if has_mode else None),
            usage=Usage.from_proto(msg.usage) if msg.HasField("usage") else None,
            timing=Timing.from_proto(msg.timing) if msg.HasField("timing") else None,
            worker=msg.worker,
        )


class StreamAccumulator:
    """Assembles GenerateStream chunks into the :class:`GenerateResult` Generate would return.

        acc = StreamAccumulator(n=4, prompt_token_ids=prompt)
        for chunk in client.generate_stream(prompt, n=4):
            acc.add(chunk)
        result = acc.result()
    """

    def __init__(self, n: int = 0, prompt_token_ids: Sequence[int] = ()) -> None:
        self._prompt = list(prompt_token_ids)
        self._completions: Dict[int, Completion] = {
            i: Completion(index=i, token_ids=[]) for i in range(n)}
        self._seen_version: Dict[int, bool] = {}
        self.request_id = ""
        self.seed = 0
        self.replay_ssm_mode = ReplaySsmMode.DEFAULT
        self.usage = Usage()
        self.timing = Timing()
        self.worker = ""
        self.done = False

    def add(self, chunk: StreamChunk) -> None:
        """Merges one chunk; raises ValueError on a delta that does not continue its completion."""
        self.request_id = chunk.request_id or self.request_id
        if chunk.seed is not None:
            self.seed = chunk.seed
        if chunk.replay_ssm_mode is not None:
            self.replay_ssm_mode = chunk.replay_ssm_mode
        for d in chunk.deltas:
            c = self._completions.setdefault(d.index, Completion(index=d.index, token_ids=[]))
            if d.offset != len(c.token_ids):
                raise ValueError(f"stream delta for completion {d.index} starts at offset "
                                 f"{d.offset}, but {len(c.token_ids)} tokens were received")
            c.token_ids.extend(d.token_ids)
            c.logprobs.extend(d.logprobs)
            c.top_logprob_token_ids.extend(d.top_logprob_token_ids)
            c.top_logprobs.extend(d.top_logprobs)
            # Versions come from deltas that carry tokens (a final empty delta may not set one).
            if d.token_ids or (not self._seen_version.get(d.index) and d.weight_version):
                if not self._seen_version.get(d.index):
                    c.weight_version_start = d.weight_version
                    self._seen_version[d.index] = True
                c.weight_version_end = d.weight_version
            if d.finished:
                c.finish_reason = d.finish_reason
                c.replay_ssm_applied = d.replay_ssm_applied
                c.replay_ssm_fallback_reason = d.replay_ssm_fallback_reason
                c.num_preemptions = d.num_preemptions
        if chunk.done:
            self.done = True
            self.usage = chunk.usage or self.usage
            self.timing = chunk.timing or self.timing
            self.worker = chunk.worker or self.worker

    def result(self, *, endpoint: str = "", attempts: int = 1,
               client_seconds: float = 0.0) -> GenerateResult:
        """The group so far (complete once ``done``); completions in index order."""
        return GenerateResult(
            request_id=self.request_id,
            prompt_token_ids=list(self._prompt),
            completions=[self._completions[i] for i in sorted(self._completions)],
            seed=self.seed,
            replay_ssm_mode=self.replay_ssm_mode,
            usage=self.usage,
            timing=self.timing,
            worker=self.worker,
            endpoint=endpoint,
            attempts=attempts,
            client_seconds=client_seconds,
        )


# ---------------------------------------------------------------------------------------------
# Score, Abort
# ---------------------------------------------------------------------------------------------


@dataclass
class ScoredCompletion:
    """Teacher-forced log-probabilities of one given continuation."""

    index: int
    #: logprobs[i] = log p(token_ids[i] | prompt, token_ids[:i]), raw model distribution.
    logprobs: List[float]
    top_logprob_token_ids: List[List[int]] = field(default_factory=list)
    top_logprobs: List[List[float]] = field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: rollout_pb2.ScoredCompletion) -> "ScoredCompletion":
        logprobs = list(msg.logprobs)
        return cls(
            index=msg.index,
            logprobs=logprobs,
            top_logprob_token_ids=_rows(msg.top_logprob_token_ids, len(logprobs),
                                        "top_logprob_token_ids"),
            top_logprobs=_rows(msg.top_logprobs, len(logprobs), "top_logprobs"),
        )


@dataclass
class ScoreResult:
    """Rollout.Score: one :class:`ScoredCompletion` per given continuation, in order."""

    request_id: str
    completions: List[ScoredCompletion]
    weight_version: int = 0
    usage: Usage = field(default_factory=Usage)
    timing: Timing = field(default_factory=Timing)
    worker: str = ""
    endpoint: str = ""
    attempts: int = 1

    @classmethod
    def from_proto(cls, msg: rollout_pb2.ScoreResponse, *, endpoint: str = "",
                   attempts: int = 1) -> "ScoreResult":
        return cls(
            request_id=msg.request_id,
            completions=[ScoredCompletion.from_proto(c) for c in msg.completions],
            weight_version=msg.weight_version,
            usage=Usage.from_proto(msg.usage),
            timing=Timing.from_proto(msg.timing),
            worker=msg.worker,
            endpoint=endpoint,
            attempts=attempts,
        )


@dataclass
class AbortResult:
    """Rollout.Abort: the partial results of aborted Generate calls and every aborted id
    (merged over endpoints when sent to several)."""

    aborted: List[GenerateResult] = field(default_factory=list)
    request_ids: List[str] = field(default_factory=list)

    @classmethod
    def from_proto(cls, msg: rollout_pb2.AbortResponse, *, endpoint: str = "") -> "AbortResult":
        return cls(
            aborted=[GenerateResult.from_proto(g, endpoint=endpoint) for g in msg.aborted],
            request_ids=list(msg.request_ids),
        )

    @classmethod
    def merge(cls, results: Iterable["AbortResult"]) -> "AbortResult":
        merged = cls()
        for r in results:
            merged.aborted.extend(r.aborted)
            merged.request_ids.extend(r.request_ids)
        return merged


# ---------------------------------------------------------------------------------------------
# GetServerInfo
# ---------------------------------------------------------------------------------------------


@dataclass
class ModelInfo:
    """The served model (from its config.json)."""

    model_type: str
    name: str
    vocab_size: int
    num_layers: int
    #: "GATED_DELTANET" / "FULL_ATTENTION" per decoder layer.
    layer_types: List[str]
    num_gdn_layers: int
    num_attention_layers: int
    max_position_embeddings: int
    eos_token_ids: List[int]

    @classmethod
    def from_proto(cls, msg: rollout_pb2.ModelInfo) -> "ModelInfo":
        def layer(v: int) -> str:
            name = rollout_pb2.LayerType.Name(v) if v in rollout_pb2.LayerType.values() else ""
            return name[len("LAYER_TYPE_"):] if name else "UNKNOWN"
        return cls(msg.model_type, msg.name, msg.vocab_size, msg.num_layers,
                   [layer(v) for v in msg.layer_types], msg.num_gdn_layers,
                   msg.num_attention_layers, msg.max_position_embeddings,
                   list(msg.eos_token_ids))


@dataclass
class Limits:
    """Request and transport limits in force."""

    max_n: int = 0
    max_prompt_tokens: int = 0
    max_tokens: int = 0
    max_top_logprobs: int = 0
    max_stop_token_ids: int = 0
    max_response_bytes: int = 0
    max_receive_message_bytes: int = 0
    max_send_message_bytes: int = 0
    max_queued_requests: int = 0
    max_queued_tokens: int = 0
    max_requests_per_client: int = 0  # 0 = no per-client cap

    @classmethod
    def from_proto(cls, msg: rollout_pb2.Limits) -> "Limits":
        return cls(**{f: getattr(msg, f) for f in cls.__dataclass_fields__})


@dataclass
class SamplingDefaults:
    """What an unset SamplingParams field means on this server."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    max_tokens: int = 0

    @classmethod
    def from_proto(cls, msg: rollout_pb2.SamplingDefaults) -> "SamplingDefaults":
        return cls(msg.temperature, msg.top_p, msg.top_k, msg.min_p, msg.max_tokens)


@dataclass
class ReplaySsmInfo:
    enabled: bool = False
    default_mode: ReplaySsmMode = ReplaySsmMode.DEFAULT
    supported_modes: List[ReplaySsmMode] = field(default_factory=list)
    ring_length: int = 0
    auto_min_batch_size: int = 0
    available: bool = False

    @classmethod
    def from_proto(cls, msg: rollout_pb2.ReplaySsmInfo) -> "ReplaySsmInfo":
        mode = rollout_pb2.ReplaySsmMode
        return cls(msg.enabled, ReplaySsmMode.from_proto(msg.default_mode, mode),
                   [ReplaySsmMode.from_proto(m, mode) for m in msg.supported_modes],
                   msg.ring_length, msg.auto_min_batch_size, msg.available)


@dataclass
class WorkerInfo:
    index: int
    device: str
    backend: str
    state: WorkerState
    weight_version: int
    restarts: int
    requests_running: int
    requests_waiting: int

    @classmethod
    def from_proto(cls, msg: rollout_pb2.WorkerInfo) -> "WorkerInfo":
        return cls(msg.index, msg.device, msg.backend,
                   WorkerState.from_proto(msg.state, rollout_pb2.WorkerState),
                   msg.weight_version, msg.restarts, msg.requests_running,
                   msg.requests_waiting)


@dataclass
class ServerInfo:
    """Rollout.GetServerInfo of one endpoint (``raw`` keeps the message itself)."""

    version: str
    commit: str
    config_generation: int
    #: None while no model is known.
    model: Optional[ModelInfo]
    limits: Limits
    default_sampling: SamplingDefaults
    replay_ssm: ReplaySsmInfo
    #: Lowest weight version over ready workers (0 when none is ready).
    weight_version: int
    paused: bool
    ready_workers: int
    workers: List[WorkerInfo]
    endpoint: str = ""
    raw: Optional[rollout_pb2.ServerInfo] = field(default=None, repr=False, compare=False)

    @classmethod
    def from_proto(cls, msg: rollout_pb2.ServerInfo, *, endpoint: str = "") -> "ServerInfo":
        return cls(
            version=msg.version,
            commit=msg.commit,
            config_generation=msg.config_generation,
            model=ModelInfo.from_proto(msg.model) if msg.HasField("model") else None,
            limits=Limits.from_proto(msg.limits),
            default_sampling=SamplingDefaults.from_proto(msg.default_sampling),
            replay_ssm=ReplaySsmInfo.from_proto(msg.replay_ssm),
            weight_version=msg.weight_version,
            paused=msg.paused,
            ready_workers=msg.ready_workers,
            workers=[WorkerInfo.from_proto(w) for w in msg.workers],
            endpoint=endpoint,
            raw=msg,
        )


# ---------------------------------------------------------------------------------------------
# Admin
# ---------------------------------------------------------------------------------------------


@dataclass
class ConfigFieldChange:
    """One config field a reload changed (or would change, or refused)."""

    field: str
    old_value: str
    new_value: str
    outcome: ConfigChangeOutcome
    message: str = ""

    @classmethod
    def from_proto(cls, msg: admin_pb2.ConfigFieldChange) -> "ConfigFieldChange":
        return cls(msg.field, msg.old_value, msg.new_value,
                   ConfigChangeOutcome.from_proto(msg.outcome,
                                                  admin_pb2.ConfigFieldChange.Outcome),
                   msg.message)


@dataclass
class ReloadResult:
    """Admin.ReloadConfig on one endpoint."""

    applied: bool
    dry_run: bool
    generation: int
    changes: List[ConfigFieldChange]
    source: str
    endpoint: str = ""

    @classmethod
    def from_proto(cls, msg: admin_pb2.ReloadConfigResponse, *,
                   endpoint: str = "") -> "ReloadResult":
        return cls(msg.applied, msg.dry_run, msg.generation,
                   [ConfigFieldChange.from_proto(c) for c in msg.changes], msg.source, endpoint)


@dataclass
class UpdateWeightsResult:
    """Admin.UpdateWeights on one endpoint: the version now serving and the update's wall time."""

    weight_version: int
    seconds: float
    endpoint: str = ""

    @classmethod
    def from_proto(cls, msg: admin_pb2.UpdateWeightsResponse, *,
                   endpoint: str = "") -> "UpdateWeightsResult":
        return cls(msg.weight_version, msg.seconds, endpoint)


@dataclass
class PauseResult:
    requests_aborted: int
    requests_kept: int
    endpoint: str = ""

    @classmethod
    def from_proto(cls, msg: admin_pb2.PauseResponse, *, endpoint: str = "") -> "PauseResult":
        return cls(msg.requests_aborted, msg.requests_kept, endpoint)


@dataclass
class ResumeResult:
    requests_resumed: int
    endpoint: str = ""

    @classmethod
    def from_proto(cls, msg: admin_pb2.ResumeResponse, *, endpoint: str = "") -> "ResumeResult":
        return cls(msg.requests_resumed, endpoint)
