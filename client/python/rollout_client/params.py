"""Request parameters and the builders that turn them into rollout.v1 request messages."""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from rollout_client.proto import rollout_pb2
from rollout_client.results import ReplaySsmMode


@dataclass
class SamplingParams:
    """Sampling of every completion of a group (rollout.v1.SamplingParams).

    Fields left None take the server's default (``ServerInfo.default_sampling``). Order of
    processing on the server: temperature, top_k, top_p, min_p, then a draw from the Philox
    stream (seed, completion index) — a seeded group is reproducible whatever the batch.
    """

    #: >= 0; 0 is greedy.
    temperature: Optional[float] = None
    #: (0, 1]; 1 disables nucleus sampling.
    top_p: Optional[float] = None
    #: >= 0; 0 disables it.
    top_k: Optional[int] = None
    #: [0, 1]; 0 disables it.
    min_p: Optional[float] = None
    #: [1, limits.max_tokens]; None: the server default, shortened to fit the context.
    max_tokens: Optional[int] = None
    #: Stop tokens are not sampled before this many tokens.
    min_tokens: int = 0
    #: Extra stop tokens (kept as the last token when sampled).
    stop_token_ids: Sequence[int] = field(default_factory=tuple)
    #: Do not stop at the model's EOS ids.
    ignore_eos: bool = False
    #: Seed of the group; None lets the server pick one (reported in the result).
    seed: Optional[int] = None

    def to_proto(self) -> rollout_pb2.SamplingParams:
        msg = rollout_pb2.SamplingParams(
            min_tokens=int(self.min_tokens),
            stop_token_ids=_ids(self.stop_token_ids, "sampling.stop_token_ids"),
            ignore_eos=bool(self.ignore_eos),
        )
        for name, cast in (("temperature", float), ("top_p", float), ("top_k", int),
                           ("min_p", float), ("max_tokens", int), ("seed", int)):
            value = getattr(self, name)
            if value is not None:
                setattr(msg, name, cast(value))
        return msg

    @classmethod
    def coerce(cls, value: "SamplingLike") -> "SamplingParams":
        """None, a SamplingParams, or a dict of its fields."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            unknown = set(value) - set(cls.__dataclass_fields__)
            if unknown:
                raise TypeError(f"sampling: unknown field(s) {sorted(unknown)}; allowed: "
                                f"{sorted(cls.__dataclass_fields__)}")
            return cls(**value)
        raise TypeError(f"sampling: expected SamplingParams, dict or None, got {type(value)!r}")


SamplingLike = Union[SamplingParams, Mapping[str, Any], None]


def new_request_id(prefix: str = "rc") -> str:
    """A fresh request id ("rc-" + 24 hex digits). The client names every request it sends so
    that Abort can reach the server running it and logs on both sides can be correlated."""
    return f"{prefix}-{uuid.uuid4().hex[:24]}"


def _ids(values: Iterable[Any], what: str) -> list:
    """Token ids as Python ints (accepts lists, tuples, numpy arrays)."""
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: expected a sequence of integer token ids ({e})") from None


def build_generate_request(prompt_token_ids: Sequence[int], n: int = 1, *,
                           sampling: SamplingLike = None, logprobs: bool = False,
                           top_logprobs: int = 0,
                           replay_ssm: Union[ReplaySsmMode, str, int, None] = None,
                           request_id: Optional[str] = None,
                           min_weight_version: int = 0) -> rollout_pb2.GenerateRequest:
    """A GenerateRequest for one GRPO group.

    Args:
        prompt_token_ids: the prompt (token ids of the model's vocabulary).
        n: group size.
        sampling: :class:`SamplingParams` or a dict of its fields (None: server defaults).
        logprobs: return the log-probability of every sampled token.
        top_logprobs: also return the k most likely tokens per position (0: none).
        replay_ssm: "on", "off", "auto" or None (server default).
        request_id: None: a fresh id from :func:`new_request_id`.
        min_weight_version: do not start before the weights reach this version (0: any).
    """
    request = rollout_pb2.GenerateRequest(
        request_id=request_id if request_id is not None else new_request_id(),
        prompt_token_ids=_ids(prompt_token_ids, "prompt_token_ids"),
        n=int(n),
        sampling=SamplingParams.coerce(sampling).to_proto(),
        replay_ssm=ReplaySsmMode.parse(replay_ssm).to_proto(),
        min_weight_version=int(min_weight_version),
    )
    if logprobs or top_logprobs:
        request.logprobs.sampled = bool(logprobs)
        request.logprobs.top_k = int(top_logprobs)
    return request


def build_score_request(prompt_token_ids: Sequence[int],
                        completions: Sequence[Sequence[int]], *, top_logprobs: int = 0,
                        request_id: Optional[str] = None,
                        min_weight_version: int = 0) -> rollout_pb2.ScoreRequest:
    """A ScoreRequest: teacher-forced log-probabilities of ``completions`` after the prompt."""
    if isinstance(completions, (str, bytes)) or (completions and not isinstance(
            completions[0], Iterable)):
        raise TypeError("completions: expected a list of token-id lists, e.g. [[5, 6], [7]]")
    return rollout_pb2.ScoreRequest(
        request_id=request_id if request_id is not None else new_request_id(),
        prompt_token_ids=_ids(prompt_token_ids, "prompt_token_ids"),
        completions=[rollout_pb2.TokenSequence(token_ids=_ids(c, f"completions[{i}]"))
                     for i, c in enumerate(completions)],
        top_logprobs=int(top_logprobs),
        min_weight_version=int(min_weight_version),
    )


def build_abort_request(request_id: Optional[str] = None, *,
                        all: bool = False) -> rollout_pb2.AbortRequest:  # noqa: A002
    """An AbortRequest for one request id, or for every request (``all=True``)."""
    if (request_id is None) == (not all):
        raise ValueError("abort: give exactly one of request_id or all=True")
    if all:
        return rollout_pb2.AbortRequest(all=True)
    return rollout_pb2.AbortRequest(request_id=request_id)
