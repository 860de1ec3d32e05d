"""The raw protobuf and gRPC modules of the API, for code that needs the messages themselves.

    from rollout_client.proto import rollout_pb2, admin_pb2, config_pb2
    request = rollout_pb2.GenerateRequest(prompt_token_ids=[1, 2, 3], n=4)

The descriptors carry their canonical names ("rollout/v1/rollout.proto"), exactly as stubs
generated elsewhere from the same files (e.g. this repository's Bazel targets //proto:*_py), so
both can be imported in one process. (Stubs generated from a *different* version of these files
under the same names cannot: protobuf refuses conflicting definitions.)
"""
from rollout_client._proto import admin_pb2, admin_pb2_grpc, config_pb2
from rollout_client._proto import rollout_pb2, rollout_pb2_grpc

__all__ = [
    "admin_pb2",
    "admin_pb2_grpc",
    "config_pb2",
    "rollout_pb2",
    "rollout_pb2_grpc",
]
