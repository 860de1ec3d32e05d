"""grpc.health.v1.Health/Check without generated stubs.

The two health messages are tiny (HealthCheckRequest {string service = 1},
HealthCheckResponse {ServingStatus status = 1}), so they are encoded here by hand instead of
registering health.proto in protobuf's default descriptor pool: the same messages are often
already registered in a trainer's process under another file name (grpcio-health-checking uses
"grpc/health/v1/health.proto", this repository's Bazel stubs "health.proto"), and a second
registration under a different name fails at import time.
"""
from __future__ import annotations

from typing import Any

import grpc

SERVICE = "grpc.health.v1.Health"
CHECK_METHOD = f"/{SERVICE}/Check"

#: HealthCheckResponse.ServingStatus numbers.
UNKNOWN, SERVING, NOT_SERVING, SERVICE_UNKNOWN = 0, 1, 2, 3


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _read_varint(buf: bytes, pos: int) -> "tuple[int, int]":
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


def _fields(buf: bytes):
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
        elif wire == 2:
            length, pos = _read_varint(buf, pos)
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield number, wire, value


def encode_request(service: str) -> bytes:
    """HealthCheckRequest{service}."""
    data = service.encode("utf-8")
    return (b"\x0a" + _varint(len(data)) + data) if data else b""


def decode_request(data: bytes) -> str:
    for number, wire, value in _fields(data):
        if number == 1 and wire == 2:
            return bytes(value).decode("utf-8")
    return ""


def encode_response(status: int) -> bytes:
    """HealthCheckResponse{status}."""
    return (b"\x08" + _varint(status)) if status else b""


def decode_response(data: bytes) -> int:
    status = UNKNOWN
    for number, wire, value in _fields(data):
        if number == 1 and wire == 0:
            status = value
    return status


def check_callable(channel: Any) -> Any:
    """The Check method on a grpc.Channel or grpc.aio.Channel: call it with the service name,
    it returns the status number."""
    return channel.unary_unary(CHECK_METHOD, request_serializer=encode_request,
                               response_deserializer=decode_response)


def servicer_handler(check: Any) -> grpc.GenericRpcHandler:
    """A server-side handler for Check: ``check(service, context) -> status number`` (tests)."""
    return grpc.method_handlers_generic_handler(SERVICE, {
        "Check": grpc.unary_unary_rpc_method_handler(
            check, request_deserializer=decode_request, response_serializer=encode_response),
    })
