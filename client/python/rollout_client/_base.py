"""What the sync and asyncio clients share: configuration, endpoint bookkeeping, attempt logic."""
from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import grpc

from rollout_client.endpoints import (LEAST_LOADED, ChannelConfig, EndpointPicker,
                                      normalize_endpoints)
from rollout_client.errors import FanOutError, RolloutError
from rollout_client.retry import RetryPolicy, retry_hint_seconds

#: gRPC service name whose health means "can generate" (a worker is ready, no stall).
ROLLOUT_SERVICE = "rollout.v1.Rollout"


class _Default:
    """Marker for "use the client's default" (None already means "no deadline")."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()

#: Default deadlines, seconds, by kind of call (override per client or per call).
CONTROL_TIMEOUT = 30.0
UPDATE_WEIGHTS_TIMEOUT = 900.0
PAUSE_TIMEOUT = 900.0

M_GENERATE = "rollout.v1.Rollout/Generate"
M_GENERATE_STREAM = "rollout.v1.Rollout/GenerateStream"
M_SCORE = "rollout.v1.Rollout/Score"
M_ABORT = "rollout.v1.Rollout/Abort"
M_INFO = "rollout.v1.Rollout/GetServerInfo"
M_RELOAD = "rollout.v1.Admin/ReloadConfig"
M_UPDATE_WEIGHTS = "rollout.v1.Admin/UpdateWeights"
M_PAUSE = "rollout.v1.Admin/Pause"
M_RESUME = "rollout.v1.Admin/Resume"
M_HEALTH = "grpc.health.v1.Health/Check"


class Attempts:
    """Bookkeeping of one logical call: deadline, tries, endpoints that failed, back-off."""

    def __init__(self, method: str, policy: RetryPolicy, timeout: Optional[float],
                 rng: random.Random) -> None:
        self.method = method
        self.policy = policy
        self.timeout = timeout
        self.start = time.monotonic()
        self.deadline = None if timeout is None else self.start + timeout
        self.attempt = 0
        self.failed: List[str] = []
        self.rng = rng

    def remaining(self) -> Optional[float]:
        """Seconds left for the next try (None: no deadline); raises when none is left."""
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise RolloutError(grpc.StatusCode.DEADLINE_EXCEEDED,
                               f"deadline of {self.timeout:g} s exceeded before attempt "
                               f"{self.attempt + 1}", method=self.method,
                               endpoint=self.failed[-1] if self.failed else None,
                               attempts=self.attempt)
        return left

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def after_failure(self, error: grpc.RpcError, endpoint: str) -> float:
        """The back-off before the next try, or raises the :class:`RolloutError` to report."""
        wrapped = RolloutError.from_rpc_error(error, method=self.method, endpoint=endpoint,
                                              attempts=self.attempt)
        self.failed.append(endpoint)
        hint = retry_hint_seconds(wrapped.trailing_metadata, wrapped.message)
        remaining = None if self.deadline is None else self.deadline - time.monotonic()
        delay = self.policy.next_delay(self.attempt, wrapped.code, hint, elapsed=self.elapsed(),
                                       remaining=remaining, rng=self.rng,
                                       message=wrapped.message)
        if delay is None:
            raise wrapped
        return delay


#: Request metadata naming the client for rolloutd's per-client cap.
CLIENT_ID_METADATA = "x-client-id"
MAX_CLIENT_ID_LENGTH = 256


class ClientBase:
    """Configuration and state shared by :class:`RolloutClient` and :class:`AsyncRolloutClient`."""

    def __init__(self, endpoints: Union[str, Iterable[str], None] = None, *,
                 admin_token: Optional[str] = None,
                 admin_token_file: Union[str, Path, None] = None,
                 balancing: str = LEAST_LOADED,
                 retry: Optional[RetryPolicy] = None,
                 timeout: Optional[float] = None,
                 control_timeout: Optional[float] = CONTROL_TIMEOUT,
                 channel: Optional[ChannelConfig] = None,
                 metadata: Sequence[Tuple[str, str]] = (),
                 client_id: Optional[str] = None,
                 seed: Optional[int] = None) -> None:
        if admin_token is not None and admin_token_file is not None:
            raise ValueError("give admin_token or admin_token_file, not both")
        if client_id is not None and not (
                0 < len(client_id) <= MAX_CLIENT_ID_LENGTH
                and all(" " <= ch <= "~" for ch in client_id)):
            raise ValueError(f"client_id: 1 to {MAX_CLIENT_ID_LENGTH} printable ASCII characters, "
                             f"got {client_id!r}")
        self._endpoints = normalize_endpoints(endpoints)
        self._picker = EndpointPicker(self._endpoints, balancing)
        self._retry = retry if retry is not None else RetryPolicy()
        self._timeout = timeout
        self._control_timeout = control_timeout
        self._channel_config = channel if channel is not None else ChannelConfig()
        self._metadata = tuple((str(k).lower(), v) for k, v in metadata)
        if client_id is not None:
            # rolloutd's admission.max_requests_per_client counts calls per x-client-id (else
            # per peer host).
            self._metadata += ((CLIENT_ID_METADATA, client_id),)
        self._admin_token = admin_token
        self._admin_token_file = Path(admin_token_file) if admin_token_file else None
        self._inflight: Dict[str, str] = {}
        self._inflight_lock = threading.Lock()
        self._rng = random.Random(seed)

    # -- configuration ------------------------------------------------------------------------

    @property
    def endpoints(self) -> List[str]:
        """The endpoints this client talks to."""
        return list(self._endpoints)

    @property
    def balancing(self) -> str:
        return self._picker.strategy

    def outstanding(self) -> Dict[str, int]:
        """Requests this client has outstanding per endpoint (what least-loaded balances)."""
        return self._picker.outstanding()

    def _data_timeout(self, timeout: Any) -> Optional[float]:
        return self._timeout if timeout is DEFAULT else timeout

    def _ctl_timeout(self, timeout: Any, default: Optional[float] = None) -> Optional[float]:
        if timeout is not DEFAULT:
            return timeout
        return default if default is not None else self._control_timeout

    def _policy(self, retry: Optional[RetryPolicy]) -> RetryPolicy:
        return retry if retry is not None else self._retry

    def _check_endpoint(self, endpoint: Optional[str]) -> Optional[str]:
        if endpoint is not None and endpoint not in self._endpoints:
            raise ValueError(f"endpoint {endpoint!r} is not one of this client's endpoints "
                             f"{self._endpoints}")
        return endpoint

    def _targets(self, endpoints: Optional[Iterable[str]]) -> List[str]:
        if endpoints is None:
            return list(self._endpoints)
        targets = [self._check_endpoint(e) for e in endpoints]
        if not targets:
            raise ValueError("endpoints: empty")
        return targets  # type: ignore[return-value]

    def _call_metadata(self, admin: bool) -> Tuple[Tuple[str, str], ...]:
        md = self._metadata
        if admin:
            token = self._token()
            if token:
                md = md + (("authorization", f"Bearer {token}"),)
        return md

    def _token(self) -> Optional[str]:
        if self._admin_token is not None:
            return self._admin_token.strip()
        if self._admin_token_file is not None:
            try:  # re-read on every admin call, so a rotated secret is picked up
                return self._admin_token_file.read_text().strip()
            except OSError as e:
                raise RolloutError(grpc.StatusCode.UNAUTHENTICATED,
                                   f"cannot read admin_token_file {self._admin_token_file}: {e}")
        return None

    # -- request ids -> endpoint (for Abort) ---------------------------------------------------

    def _track(self, request_id: str, endpoint: str) -> None:
        with self._inflight_lock:
            self._inflight[request_id] = endpoint

    def _untrack(self, request_id: str) -> None:
        with self._inflight_lock:
            self._inflight.pop(request_id, None)

    def _endpoint_of(self, request_id: str) -> Optional[str]:
        with self._inflight_lock:
            return self._inflight.get(request_id)


def next_weight_version(info: Any) -> int:
    """The version a version-0 UpdateWeights would get on the server that sent ``info`` (a
    rollout.v1.ServerInfo): one more than the highest version any of its workers serves."""
    return max([info.weight_version] + [w.weight_version for w in info.workers]) + 1


def finish_fan_out(method: str, results: Mapping[str, Any],
                   errors: Mapping[str, RolloutError]) -> Dict[str, Any]:
    """Results by endpoint, or raises: the endpoint's own :class:`RolloutError` when the call
    went to one endpoint, a :class:`FanOutError` when it went to several and any failed."""
    if len(errors) == 1 and not results:
        raise next(iter(errors.values()))
    if errors:
        raise FanOutError(method, errors, results)
    return dict(results)


def health_status_from_error(error: RolloutError) -> Optional[Any]:
    """Health Check answers NOT_FOUND for a service it does not know: that is a status."""
    from rollout_client.results import HealthStatus
    if error.code == grpc.StatusCode.NOT_FOUND:
        return HealthStatus.SERVICE_UNKNOWN
    return None


def abort_partial(error: RolloutError, request_id: Optional[str]) -> Dict[str, Any]:
    """Abort of one id sent to several endpoints: NOT_FOUND where it is not running is fine, as
    long as one endpoint found it. Returns the results of those that did, or re-raises."""
    if request_id is None or not isinstance(error, FanOutError):
        raise error
    real = {ep: e for ep, e in error.errors.items() if e.code != grpc.StatusCode.NOT_FOUND}
    if real or not error.results:
        raise error
    return dict(error.results)
