"""Endpoints, endpoint choice and gRPC channel options.

An endpoint is any gRPC target: "host:port", "unix:/path/to.sock", or "dns:///name:port" (with
``ChannelConfig(lb_policy="round_robin")`` gRPC itself spreads calls over the addresses of a
Kubernetes headless Service). Listing the replicas explicitly instead lets the client choose per
call and lets admin calls (pause, update weights, reload) reach every replica.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import grpc

from rollout_client._version import __version__

#: Default endpoint (rolloutd's default listen address).
DEFAULT_ENDPOINT = "127.0.0.1:50051"
#: Environment variable with comma-separated endpoints (used when none are given).
ENDPOINTS_ENV = "ROLLOUT_ENDPOINTS"

LEAST_LOADED = "least_loaded"
ROUND_ROBIN = "round_robin"

MiB = 1 << 20


@dataclass(frozen=True)
class ChannelConfig:
    """Options of every channel the client opens.

    Message sizes: gRPC's default 4 MiB receive limit is far too small for a group with logprobs
    (n x max_tokens x (4 + 4 + 8 x top_k) bytes, roughly: 16 x 32k tokens x 20 top logprobs is
    about 90 MB). The defaults match rolloutd's own defaults (it sends up to 512 MiB and receives
    up to 64 MiB; see ``ServerInfo.limits``). For larger groups use ``generate_stream``.

    Keepalive: a ping every 30 s (also during long unary calls that send no data, and on idle
    connections) keeps multi-minute Generate calls alive behind load balancers and NATs, and
    detects a dead server within ``keepalive_timeout_s``; rolloutd accepts pings every >= 10 s.
    """

    max_receive_message_bytes: int = 512 * MiB
    max_send_message_bytes: int = 64 * MiB
    keepalive_time_s: float = 30.0
    keepalive_timeout_s: float = 20.0
    keepalive_permit_without_calls: bool = True
    #: gRPC load-balancing policy inside one channel ("round_robin" for dns:/// targets).
    lb_policy: Optional[str] = None
    #: TLS: set ``tls=True`` (system roots) or give PEM bytes; client cert + key for mTLS.
    tls: bool = False
    root_certificates: Optional[bytes] = None
    certificate_chain: Optional[bytes] = None
    private_key: Optional[bytes] = None
    #: Override of the TLS target name (tests with self-signed certificates).
    tls_server_name: Optional[str] = None
    #: Extra raw channel arguments, e.g. (("grpc.max_reconnect_backoff_ms", 5000),).
    extra_options: Tuple[Tuple[str, Any], ...] = field(default_factory=tuple)

    def options(self) -> List[Tuple[str, Any]]:
        """The channel arguments passed to grpc.*_channel."""
        opts: List[Tuple[str, Any]] = [
            ("grpc.max_receive_message_length", int(self.max_receive_message_bytes)),
            ("grpc.max_send_message_length", int(self.max_send_message_bytes)),
            ("grpc.keepalive_time_ms", int(self.keepalive_time_s * 1000)),
            ("grpc.keepalive_timeout_ms", int(self.keepalive_timeout_s * 1000)),
            ("grpc.keepalive_permit_without_calls", int(self.keepalive_permit_without_calls)),
            # Keep pinging during long unary calls that send no data frames (gRPC stops after
            # 2 data-less pings by default).
            ("grpc.http2.max_pings_without_data", 0),
            ("grpc.primary_user_agent", f"rollout-client-python/{__version__}"),
        ]
        if self.lb_policy:
            opts.append(("grpc.lb_policy_name", self.lb_policy))
        if self.tls_server_name:
            opts.append(("grpc.ssl_target_name_override", self.tls_server_name))
        opts.extend(self.extra_options)
        return opts

    @property
    def secure(self) -> bool:
        return bool(self.tls or self.root_certificates or self.certificate_chain)

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(root_certificates=self.root_certificates,
                                            private_key=self.private_key,
                                            certificate_chain=self.certificate_chain)


def open_channel(endpoint: str, config: ChannelConfig) -> grpc.Channel:
    """A synchronous channel to ``endpoint``."""
    if config.secure:
        return grpc.secure_channel(endpoint, config.credentials(), options=config.options())
    return grpc.insecure_channel(endpoint, options=config.options())


def open_aio_channel(endpoint: str, config: ChannelConfig) -> "grpc.aio.Channel":
    """An asyncio channel to ``endpoint`` (create it inside the event loop that uses it)."""
    if config.secure:
        return grpc.aio.secure_channel(endpoint, config.credentials(), options=config.options())
    return grpc.aio.insecure_channel(endpoint, options=config.options())


def normalize_endpoints(endpoints: Union[str, Iterable[str], None]) -> List[str]:
    """A list of distinct endpoints from a string ("a:1,b:2"), a list, or None (then
    $ROLLOUT_ENDPOINTS, then 127.0.0.1:50051)."""
    if endpoints is None:
        endpoints = os.environ.get(ENDPOINTS_ENV) or DEFAULT_ENDPOINT
    if isinstance(endpoints, str):
        endpoints = endpoints.split(",")
    out: List[str] = []
    for e in endpoints:
        e = str(e).strip()
        if e and e not in out:
            out.append(e)
    if not out:
        raise ValueError("endpoints: give at least one gRPC target, e.g. 127.0.0.1:50051")
    return out


class EndpointPicker:
    """Chooses the endpoint of each call; thread-safe.

    ``least_loaded``: the endpoint with the fewest requests this client has outstanding there
    (ties rotate, so an idle client spreads its calls). ``round_robin``: each endpoint in turn.
    Endpoints in ``avoid`` (those that just failed a call being retried) are skipped unless every
    endpoint is in it.
    """

    def __init__(self, endpoints: Sequence[str], strategy: str = LEAST_LOADED) -> None:
        if strategy not in (LEAST_LOADED, ROUND_ROBIN):
            raise ValueError(f"balancing: must be {LEAST_LOADED!r} or {ROUND_ROBIN!r}, "
                             f"got {strategy!r}")
        self.endpoints = list(endpoints)
        self.strategy = strategy
        self._outstanding: Dict[str, int] = {e: 0 for e in self.endpoints}
        self._next = 0
        self._lock = threading.Lock()

    def acquire(self, avoid: Iterable[str] = ()) -> str:
        """Picks an endpoint and counts one more request outstanding there."""
        with self._lock:
            avoid = set(avoid)
            candidates = [e for e in self.endpoints if e not in avoid] or self.endpoints
            start = self._next
            self._next = (self._next + 1) % len(self.endpoints)
            ordered = sorted(candidates,
                             key=lambda e: (self.endpoints.index(e) - start) % len(self.endpoints))
            if self.strategy == LEAST_LOADED:
                chosen = min(ordered, key=lambda e: self._outstanding[e])
            else:
                chosen = ordered[0]
            self._outstanding[chosen] += 1
            return chosen

    def hold(self, endpoint: str) -> str:
        """Counts one more request outstanding at a given endpoint."""
        with self._lock:
            self._outstanding[endpoint] = self._outstanding.get(endpoint, 0) + 1
            return endpoint

    def release(self, endpoint: str) -> None:
        with self._lock:
            if self._outstanding.get(endpoint, 0) > 0:
                self._outstanding[endpoint] -= 1

    def outstanding(self) -> Dict[str, int]:
        """Requests outstanding per endpoint (a copy)."""
        with self._lock:
            return dict(self._outstanding)
