"""cc_fuzz_test: a libFuzzer entry point (LLVMFuzzerTestOneInput) with its seed corpus, as a test.

    cc_fuzz_test(
        name = "request_fuzzer",
        srcs = ["request_fuzzer.cc"],
        deps = [...],
        corpus = "corpus/request",   # directory in this package (seeds + regression inputs)
        min_coverage = 300,
    )

defines
  <name>      sh_test (tag "fuzz"), run by bazel/fuzz_test_runner.sh:
              - normal and TSan builds: replays the corpus plus deterministic mutations
                (tests/fuzz/replay_driver.cc), seconds;
              - --config=asan / --config=fuzz (clang, --define=fuzzing_engine=libfuzzer): libFuzzer
                with ASan + UBSan for FUZZ_SECONDS (default 60) from the corpus; fails on any crash,
                sanitizer report, leak, timeout or out-of-memory, or when the coverage (edges of the
                instrumented parser code) ends below min_coverage, i.e. the target never reached
                what it is meant to fuzz.
  <name>_bin  the binary (tools/fuzz.sh runs it for longer and merges findings into the corpus).
"""

def cc_fuzz_test(name, srcs, deps = [], corpus = None, min_coverage = 0, max_len = 4096,
                 dict = None, size = "medium", tags = [], **kwargs):
    native.cc_binary(
        name = name + "_bin",
        testonly = 1,
        srcs = srcs,
        deps = deps + select({
            "//bazel:libfuzzer": [],
            "//conditions:default": ["//tests/fuzz:replay_driver"],
        }),
        linkopts = select({
            "//bazel:libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        **kwargs
    )

    # Which engine the binary has (the runner cannot tell otherwise).
    native.genrule(
        name = name + "_engine",
        outs = [name + "_engine.txt"],
        cmd = select({
            "//bazel:libfuzzer": "echo libfuzzer > $@",
            "//conditions:default": "echo replay > $@",
        }),
        testonly = 1,
    )
    corpus_files = native.glob([corpus + "/**"]) if corpus else []
    native.sh_test(
        name = name,
        size = size,
        srcs = ["//bazel:fuzz_test_runner.sh"],
        args = [
            "$(location :%s_bin)" % name,
            "$(location :%s_engine)" % name,
            str(min_coverage),
            str(max_len),
            "$(location %s)" % dict if dict else "-",
        ] + (["%s/%s" % (native.package_name(), corpus)] if corpus else []),
        data = [":" + name + "_bin", ":" + name + "_engine"] + corpus_files +
               ([dict] if dict else []),
        tags = ["fuzz"] + tags,
    )
