"""nvcc_library: CUDA sources compiled by /usr/local/cuda/bin/nvcc inside a genrule.

Each .cu becomes one object (one action, so nvcc runs in parallel), archived into a static library
wrapped in a cc_library. Targets: sm_90a SASS (H100/H200, wgmma/TMA allowed) + compute_90 PTX.
Every action gets a private TMPDIR: sandboxed nvcc runs are all PID 3 and share the host /tmp,
so their tmpxft_* files would collide.
"""

NVCC = "/usr/local/cuda/bin/nvcc"

NVCC_FLAGS = [
    "-ccbin /usr/bin/g++",
    "-std=c++17",
    "-O3",
    "-Xcompiler -fPIC",
    "-lineinfo",
    "--expt-relaxed-constexpr",
    "-gencode arch=compute_90a,code=sm_90a",
    "-gencode arch=compute_90,code=compute_90",
]

def nvcc_library(name, srcs, hdrs = [], private_hdrs = [], deps = [], nvcc_deps = [], defines = [],
                 nvcc_flags = [], **kwargs):
    """srcs: .cu files; hdrs: public headers (plain C++, no CUDA types, includable from g++ code);
    private_hdrs: .cuh files the .cu files include; nvcc_deps: other nvcc_library names whose
    headers the .cu files include."""
    objs = []
    dep_hdrs = [d + "_nvcc_hdrs" for d in nvcc_deps]
    native.filegroup(name = name + "_nvcc_hdrs", srcs = hdrs + private_hdrs + dep_hdrs)
    for src in srcs:
        obj = "_nvcc_objs/%s/%s.o" % (name, src[:-len(".cu")])
        objs.append(obj)
        native.genrule(
            name = "%s_nvcc_%s" % (name, src.replace("/", "_").replace(".", "_")),
            srcs = [src, name + "_nvcc_hdrs", "@cuda//:nvcc_inputs"],
            outs = [obj],
            cmd = ("export TMPDIR=$$(mktemp -d) && trap 'rm -rf $$TMPDIR' EXIT && " +
                   "%s %s %s %s -I. -I$(GENDIR) -c $(location %s) -o $@" %
                   (NVCC, " ".join(NVCC_FLAGS + nvcc_flags),
                    " ".join(["-D" + d for d in defines]), "", src)),
        )
    native.genrule(
        name = name + "_archive",
        srcs = objs,
        outs = ["lib%s_cu.a" % name],
        cmd = "ar rcs $@ $(SRCS)",
    )
    native.cc_library(
        name = name,
        srcs = [":lib%s_cu.a" % name],
        hdrs = hdrs,
        linkstatic = 1,
        deps = deps + nvcc_deps + ["@cuda//:cudart"],
        **kwargs
    )

def emu_cuda_library(name, srcs, hdrs = [], private_hdrs = [], deps = [], **kwargs):
    """The same .cu sources built for the CPU emulation (gdn/emu/README.md): each .cu copied to a
    .cc and compiled by the host compiler with GDN_CUDA_EMU defined and gdn/emu/cuda_emu.h
    force-included, linked against the emulator and its runtime instead of libcudart. The result
    offers the same launchers (hdrs) as the nvcc_library of those sources."""
    ccs = []
    for src in srcs:
        cc = "_emu_srcs/%s/%s.cc" % (name, src[:-len(".cu")])
        ccs.append(cc)
        native.genrule(
            name = "%s_emu_%s" % (name, src.replace("/", "_").replace(".", "_")),
            srcs = [src],
            outs = [cc],
            cmd = "cp $< $@",
        )
    native.cc_library(
        name = name,
        srcs = ccs,
        hdrs = hdrs,
        textual_hdrs = private_hdrs,
        copts = [
            "-DGDN_CUDA_EMU",
            "-include",
            "gdn/emu/cuda_emu.h",
            "-Wno-unknown-pragmas",
            # Optimised in every build mode: the emulated kernels are the tests' hot loop.
            "-O2",
            # Never instrumented (the kernels run on fibers, which the sanitizers of
            # --config=asan neither follow nor afford: decode_emu_test took > 20 min there).
            "-fno-sanitize=all",
        ],
        deps = deps + [
            "//gdn/emu:emu",
            "//gdn/emu:cudart",
        ],
        **kwargs
    )

def cuda_kernel_library(name, srcs, hdrs, private_hdrs = [], deps = [], **kwargs):
    """nvcc_library `name` and its twin `name`_emu: the same sources built for the CPU emulation
    (emu_cuda_library, testonly), offering the same launchers to the emulated tests."""
    nvcc_library(name = name, srcs = srcs, hdrs = hdrs, private_hdrs = private_hdrs, deps = deps,
                 **kwargs)
    emu_cuda_library(name = name + "_emu", testonly = 1, srcs = srcs, hdrs = hdrs,
                     private_hdrs = private_hdrs, deps = deps)

def _emu_twins(labels):
    return [label + "_emu" for label in labels]

def cuda_host_library(name, srcs, hdrs, deps = [], kernel_deps = [], **kwargs):
    """cc_library `name` (host code over kernel libraries) and its twin `name`_emu (testonly),
    whose kernel_deps are their _emu twins."""
    native.cc_library(name = name, srcs = srcs, hdrs = hdrs, deps = deps + kernel_deps, **kwargs)
    native.cc_library(name = name + "_emu", testonly = 1, srcs = srcs, hdrs = hdrs,
                      deps = deps + _emu_twins(kernel_deps))

def cuda_kernel_test(name, srcs, size, emu_size, deps = [], kernel_deps = []):
    """A GPU test `name` (it skips without a GPU) and the same test on the CPU emulation,
    `name` with _test replaced by _emu_test: GDN_CUDA_EMU defined (the tests cut their head counts,
    gdn/test_util.h kHeadCut) and kernel_deps (libraries with an _emu twin) replaced by the twins."""
    native.cc_test(name = name, size = size, srcs = srcs, deps = deps + kernel_deps)
    native.cc_test(
        name = name[:-len("_test")] + "_emu_test",
        size = emu_size,
        srcs = srcs,
        local_defines = ["GDN_CUDA_EMU"],
        deps = deps + _emu_twins(kernel_deps),
    )
