#!/usr/bin/python3
"""A small grpcurl replacement (grpcurl and grpc_cli are not Debian packages).

Runs on Debian's /usr/bin/python3 with python3-grpcio and python3-protobuf. Message types come from
the server's reflection service (grpc.reflection.v1alpha, what gRPC C++ 1.51 serves); the health and
reflection stubs themselves are generated on first use from Debian's grpc-proto files with
/usr/bin/protoc and grpc_python_plugin (into ~/.cache/rollout-grpc-cli, or a temporary directory).

  tools/grpc_cli.py 127.0.0.1:50051 ls                      # services
  tools/grpc_cli.py 127.0.0.1:50051 ls rollout.v1.Rollout   # methods
  tools/grpc_cli.py 127.0.0.1:50051 health                  # "" -> SERVING, exit 0
  tools/grpc_cli.py 127.0.0.1:50051 health rollout.v1.Rollout
  tools/grpc_cli.py 127.0.0.1:50051 call rollout.v1.Rollout/GetServerInfo '{}'
  tools/grpc_cli.py 127.0.0.1:50051 call rollout.v1.Rollout/Generate \\
      '{"prompt_token_ids": [1, 2, 3], "n": 2, "sampling": {"max_tokens": 8}}'
  tools/grpc_cli.py --token-file /run/secrets/admin 127.0.0.1:50051 \\
      call rollout.v1.Admin/ReloadConfig '{"dry_run": true}'

Output is JSON (proto field names), one object per response message. Exit status: 0 OK, 1 gRPC
error (printed as "ERROR <CODE>: <message>"), 2 usage error or a health status other than SERVING.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

GRPC_PROTO_DIR = "/usr/share/grpc-proto"
STUB_PROTOS = ["grpc/health/v1/health.proto", "grpc/reflection/v1alpha/reflection.proto"]


def _stub_dir():
    """Generates (once) and imports the health and reflection stubs."""
    digest = hashlib.sha256()
    for rel in STUB_PROTOS:
        with open(os.path.join(GRPC_PROTO_DIR, rel), "rb") as f:
            digest.update(f.read())
    key = digest.hexdigest()[:16]
    candidates = [os.path.join(os.path.expanduser("~"), ".cache", "rollout-grpc-cli", key),
                  os.path.join(tempfile.gettempdir(), "rollout-grpc-cli-%d-%s" % (os.getuid(), key))]
    for out in candidates:
        if os.path.exists(os.path.join(out, "done")):
            return out
        try:
            os.makedirs(out, exist_ok=True)
            for rel in STUB_PROTOS:
                subprocess.run(["/usr/bin/protoc", "-I" + os.path.dirname(os.path.join(GRPC_PROTO_DIR, rel)),
                                "--python_out=" + out, "--grpc_python_out=" + out,
                                "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
                                os.path.join(GRPC_PROTO_DIR, rel)], check=True)
            open(os.path.join(out, "done"), "w").close()
            return out
        except (OSError, subprocess.CalledProcessError) as e:
            last_error = e
    sys.exit("grpc_cli: cannot generate the health/reflection stubs: %s" % last_error)


sys.path.insert(0, _stub_dir())
import health_pb2  # noqa: E402  (generated above)
import health_pb2_grpc  # noqa: E402
import reflection_pb2  # noqa: E402
import reflection_pb2_grpc  # noqa: E402


def _reflect(channel, metadata, timeout, **request):
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(**request)]),
                                          metadata=metadata, timeout=timeout)
    for response in responses:
        if response.HasField("error_response"):
            raise LookupError(response.error_response.error_message)
        return response
    raise LookupError("no reflection response")


def _list_services(channel, metadata, timeout):
    response = _reflect(channel, metadata, timeout, list_services="")
    return sorted(s.name for s in response.list_services_response.service)


def _pool_for(channel, metadata, timeout, symbol):
    """A descriptor pool holding `symbol`'s file and everything it imports."""
    response = _reflect(channel, metadata, timeout, file_containing_symbol=symbol)
    files = {}
    for raw in response.file_descriptor_response.file_descriptor_proto:
        proto = descriptor_pb2.FileDescriptorProto.FromString(raw)
        files[proto.name] = proto
    pool = descriptor_pool.DescriptorPool()
    added = set()
    while len(added) < len(files):  # add in dependency order
        progress = False
        for name, proto in files.items():
            if name not in added and all(d in added or d not in files for d in proto.dependency):
                pool.Add(proto)
                added.add(name)
                progress = True
        if not progress:
            raise LookupError("circular or missing imports in reflection data for " + symbol)
    return pool


def _message_class(descriptor):
    get = getattr(message_factory, "GetMessageClass", None)
    if get is not None:
        return get(descriptor)
    return message_factory.MessageFactory(descriptor.file.pool).GetPrototype(descriptor)


def _to_json(message):
    return json_format.MessageToJson(message, preserving_proto_field_name=True, indent=None)


def cmd_ls(channel, metadata, args):
    if not args.target:
        for name in _list_services(channel, metadata, args.timeout):
            print(name)
        return 0
    pool = _pool_for(channel, metadata, args.timeout, args.target)
    service = pool.FindServiceByName(args.target)
    for method in service.methods:
        stream = "stream " if method.server_streaming else ""
        print("%s(%s) returns (%s%s)" % (method.name, method.input_type.full_name, stream,
                                         method.output_type.full_name))
    return 0


def cmd_health(channel, metadata, args):
    stub = health_pb2_grpc.HealthStub(channel)
    response = stub.Check(health_pb2.HealthCheckRequest(service=args.target or ""),
                          metadata=metadata, timeout=args.timeout)
    name = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
    print(name)
    return 0 if response.status == health_pb2.HealthCheckResponse.SERVING else 2


def cmd_call(channel, metadata, args):
    if not args.target or "/" not in args.target:
        print("grpc_cli: call needs SERVICE/METHOD", file=sys.stderr)
        return 2
    service_name, method_name = args.target.rsplit("/", 1)
    pool = _pool_for(channel, metadata, args.timeout, service_name)
    method = pool.FindServiceByName(service_name).FindMethodByName(method_name)
    if method is None:
        print("grpc_cli: no method %s in %s" % (method_name, service_name), file=sys.stderr)
        return 2
    if method.client_streaming:
        print("grpc_cli: client-streaming methods are not supported", file=sys.stderr)
        return 2
    request_class = _message_class(method.input_type)
    response_class = _message_class(method.output_type)
    request = json_format.Parse(args.json or "{}", request_class())
    path = "/%s/%s" % (service_name, method_name)
    kwargs = dict(request_serializer=request_class.SerializeToString,
                  response_deserializer=response_class.FromString)
    if method.server_streaming:
        for response in channel.unary_stream(path, **kwargs)(request, metadata=metadata,
                                                             timeout=args.timeout):
            print(_to_json(response), flush=True)
    else:
        print(_to_json(channel.unary_unary(path, **kwargs)(request, metadata=metadata,
                                                           timeout=args.timeout)))
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__[__doc__.index("\n"):])
    parser.add_argument("address", help="host:port or unix:PATH")
    parser.add_argument("command", choices=["ls", "health", "call"])
    parser.add_argument("target", nargs="?", help="service (ls, health) or SERVICE/METHOD (call)")
    parser.add_argument("json", nargs="?", help="request as JSON (call); default {}")
    parser.add_argument("--timeout", type=float, default=30.0, help="deadline in seconds (30)")
    parser.add_argument("--token", help="admin bearer token (sent as authorization: Bearer ...)")
    parser.add_argument("--token-file", help="file holding the admin bearer token")
    parser.add_argument("-H", "--header", action="append", default=[], help="extra metadata key:value")
    parser.add_argument("--tls", action="store_true", help="use TLS")
    parser.add_argument("--ca", help="PEM CA bundle for --tls (default: system roots)")
    parser.add_argument("--max-msg-mb", type=int, default=512, help="max receive message size (512)")
    args = parser.parse_args(argv)

    metadata = []
    token = args.token
    if args.token_file:
        with open(args.token_file) as f:
            token = f.read().strip()
    if token:
        metadata.append(("authorization", "Bearer " + token))
    for header in args.header:
        key, _, value = header.partition(":")
        metadata.append((key.strip().lower(), value.strip()))
    options = [("grpc.max_receive_message_length", args.max_msg_mb * 1024 * 1024)]
    if args.tls:
        root = open(args.ca, "rb").read() if args.ca else None
        channel = grpc.secure_channel(args.address, grpc.ssl_channel_credentials(root), options)
    else:
        channel = grpc.insecure_channel(args.address, options)
    commands = {"ls": cmd_ls, "health": cmd_health, "call": cmd_call}
    try:
        with channel:
            return commands[args.command](channel, metadata, args)
    except grpc.RpcError as e:
        print("ERROR %s: %s" % (e.code().name, e.details()), file=sys.stderr)
        return 1
    except (LookupError, json_format.ParseError) as e:
        print("grpc_cli: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
