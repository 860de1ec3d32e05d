"""Errors raised by the client: every failed RPC becomes a :class:`RolloutError`."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import grpc

from rollout_client.retry import is_message_size_error

#: Trailing metadata key of the per-field report of a rejected ReloadConfig.
RELOAD_REPORT_KEY = "rollout-reload-report-bin"

#: Trailing metadata as gRPC gives it: (key, value) pairs; values of "-bin" keys are bytes.
Metadata = Sequence[Tuple[str, Any]]


class RolloutError(Exception):
    """A call to rolloutd failed.

    Attributes:
        code: the gRPC status code (``grpc.StatusCode``), e.g. ``INVALID_ARGUMENT``.
        message: the server's status message, e.g. ``"sampling.top_p: must be in (0, 1], got 2"``.
        method: the RPC, e.g. ``"rollout.v1.Rollout/Generate"``.
        endpoint: the server that answered last (None if no server was tried).
        attempts: how many times the call was tried (retries included).
        trailing_metadata: the last attempt's trailing metadata.
    """

    def __init__(self, code: grpc.StatusCode, message: str, *, method: str = "",
                 endpoint: Optional[str] = None, attempts: int = 1,
                 trailing_metadata: Metadata = ()) -> None:
        self.code = code
        self.message = message
        self.method = method
        self.endpoint = endpoint
        self.attempts = attempts
        self.trailing_metadata = tuple(trailing_metadata or ())
        super().__init__(self._describe())

    def reload_report(self) -> Optional[Any]:
        """For a rejected Admin.ReloadConfig: the per-field report the server sends in the
        trailing metadata "rollout-reload-report-bin", as a :class:`~rollout_client.results.
        ReloadResult` (None when absent)."""
        from rollout_client.proto import admin_pb2
        from rollout_client.results import ReloadResult
        for key, value in self.trailing_metadata:
            if key == RELOAD_REPORT_KEY and isinstance(value, (bytes, bytearray)):
                msg = admin_pb2.ReloadConfigResponse()
                msg.ParseFromString(bytes(value))
                return ReloadResult.from_proto(msg, endpoint=self.endpoint or "")
        return None

    @property
    def code_name(self) -> str:
        """The status code's name, e.g. ``"UNAVAILABLE"``."""
        return self.code.name

    def _describe(self) -> str:
        where = f"{self.method} on {self.endpoint}" if self.endpoint else (self.method or "call")
        tries = f" (after {self.attempts} attempts)" if self.attempts > 1 else ""
        hint = size_limit_hint(self.code, self.message)
        return f"{where}: {self.code.name}: {self.message}{hint}{tries}"

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError, *, method: str, endpoint: Optional[str],
                       attempts: int) -> "RolloutError":
        """Wraps a ``grpc.RpcError`` (sync or ``grpc.aio.AioRpcError``)."""
        code = _call(error, "code") or grpc.StatusCode.UNKNOWN
        message = _call(error, "details") or str(error)
        trailing = _call(error, "trailing_metadata") or ()
        return cls(code, message, method=method, endpoint=endpoint, attempts=attempts,
                   trailing_metadata=trailing)


def size_limit_hint(code: grpc.StatusCode, message: str) -> str:
    """Names the setting behind gRPC's own message-size refusals, whose text gives only the sizes
    ("Received message larger than max (N vs. LIMIT)"); "" for any other error.

    "Sent ..." comes from this client's channel; "Received ..." from rolloutd's
    ``transport.max_receive_message_bytes`` (``ServerInfo.limits``) when the request was too large,
    or from this client's channel when a response was.
    """
    if code != grpc.StatusCode.RESOURCE_EXHAUSTED or not is_message_size_error(message):
        return ""
    if "sent message" in message.lower():
        return " [limit: this client's ChannelConfig.max_send_message_bytes]"
    return (" [limit: a request over rolloutd's transport.max_receive_message_bytes"
            " (ServerInfo.limits), or a response over this client's"
            " ChannelConfig.max_receive_message_bytes]")


class FanOutError(RolloutError):
    """A call sent to several endpoints (admin calls, abort of all) failed on some of them.

    ``errors`` maps each failed endpoint to its :class:`RolloutError`; ``results`` holds the
    typed results of the endpoints that succeeded. ``code``/``message`` are the first failure's.
    """

    def __init__(self, method: str, errors: Mapping[str, RolloutError],
                 results: Mapping[str, Any]) -> None:
        self.errors: Dict[str, RolloutError] = dict(errors)
        self.results: Dict[str, Any] = dict(results)
        first = next(iter(self.errors.values()))
        super().__init__(first.code, first.message, method=method, endpoint=first.endpoint,
                         attempts=first.attempts, trailing_metadata=first.trailing_metadata)

    def _describe(self) -> str:
        failed = "; ".join(f"{ep}: {e.code.name}: {e.message}" for ep, e in self.errors.items())
        ok = len(self.results)
        return (f"{self.method} failed on {len(self.errors)} of {len(self.errors) + ok} "
                f"endpoints: {failed}")


def _call(obj: Any, name: str) -> Any:
    fn = getattr(obj, name, None)
    if fn is None:
        return None
    try:
        return fn()
    except Exception:  # a half-initialised call object; report what we can
        return None
