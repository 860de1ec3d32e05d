"""Generated protobuf / gRPC modules of rollout.v1 and grpc.health.v1 (do not edit).

Made by client/python/tools/gen_protos.py from the repository's proto/ with Debian's protoc 3.21
and grpc_python_plugin; `bazel test //client/python:proto_sync_test` fails when they are stale.
Use them through :mod:`rollout_client.proto`.
"""
