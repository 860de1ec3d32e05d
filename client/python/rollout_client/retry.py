"""Retry policy: exponential back-off with jitter, only for UNAVAILABLE and RESOURCE_EXHAUSTED.

rolloutd's status codes (rollout.proto) say which failures are worth another try:
RESOURCE_EXHAUSTED (admission queue full) and UNAVAILABLE (no worker serving, draining, connection
lost). Everything else (INVALID_ARGUMENT, FAILED_PRECONDITION, DEADLINE_EXCEEDED, INTERNAL, ...)
is returned at once: retrying cannot change the answer, or the deadline is spent.

Back-off before retry k (k = 1, 2, ...): with
``b = min(max_backoff, initial_backoff * multiplier ** (k - 1))`` the delay is drawn uniformly
from ``[b * (1 - jitter), b]`` (``jitter=1`` is gRPC's "full jitter"). When the server sends a
retry hint, the delay is the hint (plus up to 10 %) instead, capped at ``max_server_hint``.
Hints understood, in this order:

- ``grpc-retry-pushback-ms`` trailing metadata (gRPC's own; a negative value means "do not retry");
- ``google.rpc.RetryInfo`` in ``grpc-status-details-bin`` (the richer-error model);
- ``retry-after`` trailing metadata, seconds (as in HTTP);
- a status message containing "retry after <number> s|ms".

rolloutd sends ``grpc-retry-pushback-ms`` with every admission rejection (RESOURCE_EXHAUSTED:
queue full, per-client cap); its other retryable failures (UNAVAILABLE) carry no hint, so the
exponential back-off applies to them.

Attempts are bounded by ``max_attempts`` and time by the call's deadline (``timeout``) and
``max_total_seconds``: a retry whose back-off would end after either is not made.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any, FrozenSet, Iterable, Optional, Sequence, Tuple

import grpc

RETRYABLE_CODES: FrozenSet[grpc.StatusCode] = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED})

_MESSAGE_HINT = re.compile(
    r"retry (?:after|in)\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec|seconds?)\b", re.IGNORECASE)
_RETRY_INFO_TYPE = "google.rpc.RetryInfo"


@dataclass(frozen=True)
class RetryPolicy:
    """How a call is retried. The default suits a GRPO trainer talking to a busy server."""

    #: Total tries, the first included (1 disables retries).
    max_attempts: int = 6
    #: First back-off, seconds.
    initial_backoff: float = 0.25
    #: Largest back-off, seconds.
    max_backoff: float = 8.0
    multiplier: float = 2.0
    #: Fraction of the back-off that is randomised, in [0, 1].
    jitter: float = 0.5
    #: Bound on the whole call (tries and waits), seconds; None: only the call's own deadline.
    max_total_seconds: Optional[float] = 300.0
    #: Use a retry hint sent by the server instead of the computed back-off.
    honor_server_hint: bool = True
    #: Longest hinted delay honoured, seconds.
    max_server_hint: float = 60.0
    retryable_codes: FrozenSet[grpc.StatusCode] = RETRYABLE_CODES

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts: must be >= 1, got {self.max_attempts}")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError(f"jitter: must be in [0, 1], got {self.jitter}")
        if self.initial_backoff < 0 or self.max_backoff < 0 or self.multiplier < 1:
            raise ValueError("backoff: initial_backoff and max_backoff must be >= 0 and "
                             "multiplier >= 1")

    def backoff(self, retry: int, rng: Optional[random.Random] = None) -> float:
        """Delay before retry number ``retry`` (1 for the first retry), without a server hint."""
        base = min(self.max_backoff, self.initial_backoff * self.multiplier ** max(0, retry - 1))
        r = (rng or random).random()
        return base * (1.0 - self.jitter * r)

    def next_delay(self, attempt: int, code: grpc.StatusCode, hint: Optional[float], *,
                   elapsed: float, remaining: Optional[float],
                   rng: Optional[random.Random] = None, message: str = "") -> Optional[float]:
        """Seconds to wait before the next try, or None to give up.

        Args:
            attempt: tries made so far (>= 1).
            code: the last try's status code.
            hint: the server's retry hint in seconds (see :func:`retry_hint_seconds`); a negative
                hint forbids retrying.
            elapsed: seconds since the call started.
            remaining: seconds left before the call's deadline (None: no deadline).
            message: the status message; a RESOURCE_EXHAUSTED raised by the client's own channel
                for a message over its size limit is not retried (it would fail again).
        """
        if code not in self.retryable_codes or attempt >= self.max_attempts:
            return None
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED and is_message_size_error(message):
            return None
        if hint is not None and self.honor_server_hint:
            if hint < 0:
                return None
            delay = min(hint, self.max_server_hint) * (1.0 + 0.1 * (rng or random).random())
        else:
            delay = self.backoff(attempt, rng)
        if remaining is not None and delay >= remaining:
            return None
        if self.max_total_seconds is not None and elapsed + delay >= self.max_total_seconds:
            return None
        return delay


#: No retries at all (health checks, or callers that retry themselves).
NO_RETRY = RetryPolicy(max_attempts=1)


def is_message_size_error(message: str) -> bool:
    """True for gRPC's own "message larger than max" RESOURCE_EXHAUSTED (raise the limit in
    ChannelConfig, lower n / top_logprobs, or use GenerateStream)."""
    text = (message or "").lower()
    return "larger than max" in text or "message too large" in text


# ---------------------------------------------------------------------------------------------
# Server retry hints
# ---------------------------------------------------------------------------------------------


def retry_hint_seconds(trailing_metadata: Optional[Iterable[Tuple[str, Any]]],
                       message: str = "") -> Optional[float]:
    """The server's retry hint in seconds, or None when it sent none (see the module doc)."""
    metadata = list(trailing_metadata or ())
    for key, value in metadata:
        if key.lower() == "grpc-retry-pushback-ms":
            try:
                ms = int(_text(value).strip())
            except ValueError:
                return -1.0  # gRPC A6: an unparseable pushback means "do not retry"
            return ms / 1000.0 if ms >= 0 else -1.0
    for key, value in metadata:
        if key.lower() == "grpc-status-details-bin" and isinstance(value, (bytes, bytearray)):
            delay = _retry_info_delay(bytes(value))
            if delay is not None:
                return delay
    for key, value in metadata:
        if key.lower() == "retry-after":
            try:
                return max(0.0, float(_text(value).strip()))
            except ValueError:
                pass
    match = _MESSAGE_HINT.search(message or "")
    if match:
        number = float(match.group(1))
        return number / 1000.0 if match.group(2).lower().startswith("m") else number
    return None


def _text(value: Any) -> str:
    return value.decode("ascii", "replace") if isinstance(value, (bytes, bytearray)) else str(value)


# A minimal protobuf wire-format reader, enough for google.rpc.Status -> Any -> RetryInfo ->
# Duration (no dependency on googleapis-common-protos, which Debian does not package for grpc).

def _varint(buf: bytes, pos: int) -> Tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(buf: bytes) -> Sequence[Tuple[int, int, Any]]:
    """(field number, wire type, value) of every field; value is int or bytes."""
    out = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > len(buf):
            raise ValueError("truncated field")
        out.append((number, wire, value))
    return out


def _retry_info_delay(status_bytes: bytes) -> Optional[float]:
    """RetryInfo.retry_delay (seconds) from a serialized google.rpc.Status, if present."""
    try:
        for number, wire, any_bytes in _fields(status_bytes):
            if number != 3 or wire != 2:  # Status.details: repeated Any
                continue
            parts = {n: v for n, w, v in _fields(any_bytes) if w == 2}
            type_url = parts.get(1, b"").decode("utf-8", "replace")
            if not type_url.endswith("/" + _RETRY_INFO_TYPE) and type_url != _RETRY_INFO_TYPE:
                continue
            for n, w, duration in _fields(parts.get(2, b"")):
                if n == 1 and w == 2:  # RetryInfo.retry_delay: Duration
                    seconds = nanos = 0
                    for dn, dw, dv in _fields(duration):
                        if dn == 1 and dw == 0:
                            seconds = dv - (1 << 64) if dv >= 1 << 63 else dv
                        elif dn == 2 and dw == 0:
                            nanos = dv - (1 << 64) if dv >= 1 << 63 else dv
                    return max(0.0, seconds + nanos / 1e9)
            return 0.0
    except ValueError:
        return None
    return None
