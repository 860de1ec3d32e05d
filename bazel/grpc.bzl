"""Protocol Buffers + gRPC code generation with Debian's protoc and plugins (no downloads).

proto_grpc_library(name, src, deps) in //proto generates, from one .proto file:
  <name>_cc  C++ messages (+ gRPC stubs when the file has services), include as "rollout/v1/x.pb.h"
  <name>_py  Python *_pb2.py (+ *_pb2_grpc.py), import as `from rollout.v1 import x_pb2`
Imports between our protos are relative to //proto (e.g. import "rollout/v1/rollout.proto").
"""

_PROTOC = "/usr/bin/protoc"

def _files_of(name):
    return name + "_files"

def proto_grpc_library(name, src, deps = [], services = True, visibility = None):
    """src: path of the .proto relative to this package; deps: other proto_grpc_library names here."""
    base = src[:-len(".proto")]
    native.filegroup(
        name = _files_of(name),
        srcs = [src] + [":" + _files_of(d) for d in deps],
        visibility = visibility,
    )
    cc_outs = [base + ".pb.h", base + ".pb.cc"]
    if services:
        cc_outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
    grpc_cc = ("--grpc_out=$(GENDIR)/%s --plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin " %
               native.package_name()) if services else ""
    native.genrule(
        name = name + "_cc_codegen",
        srcs = [":" + _files_of(name)],
        outs = cc_outs,
        cmd = ("%s -I%s --cpp_out=$(GENDIR)/%s %s%s/%s" %
               (_PROTOC, native.package_name(), native.package_name(), grpc_cc,
                native.package_name(), src)),
    )
    native.cc_library(
        name = name + "_cc",
        srcs = [o for o in cc_outs if o.endswith(".cc")],
        hdrs = [o for o in cc_outs if o.endswith(".h")],
        includes = ["."],
        deps = [":" + d + "_cc" for d in deps] + ["//third_party/system:grpc++"],
        visibility = visibility,
    )
    py_outs = [base + "_pb2.py"]
    if services:
        py_outs.append(base + "_pb2_grpc.py")
    grpc_py = ("--grpc_python_out=$(GENDIR)/%s --plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin " %
               native.package_name()) if services else ""
    native.genrule(
        name = name + "_py_codegen",
        srcs = [":" + _files_of(name)],
        outs = py_outs,
        cmd = ("%s -I%s --python_out=$(GENDIR)/%s %s%s/%s" %
               (_PROTOC, native.package_name(), native.package_name(), grpc_py,
                native.package_name(), src)),
    )
    native.py_library(
        name = name + "_py",
        srcs = py_outs,
        imports = ["."],
        deps = [":" + d + "_py" for d in deps],
        visibility = visibility,
    )

def system_proto_py_library(name, proto, visibility = None):
    """Python stubs for a system .proto (e.g. /usr/share/grpc-proto/grpc/health/v1/health.proto),
    generated at top level (health_pb2) so they never shadow the `grpc` package."""
    base = proto.split("/")[-1][:-len(".proto")]
    proto_dir = proto[:proto.rfind("/")]
    outs = [base + "_pb2.py", base + "_pb2_grpc.py"]
    native.genrule(
        name = name + "_codegen",
        outs = outs,
        cmd = ("%s -I%s --python_out=$(@D) --grpc_python_out=$(@D) " % (_PROTOC, proto_dir) +
               "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin %s" % proto),
    )
    native.py_library(name = name, srcs = outs, imports = ["."], visibility = visibility)
