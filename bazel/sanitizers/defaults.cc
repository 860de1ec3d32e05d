// Runtime defaults of the sanitizers, linked into every binary of a sanitizer
// build (.bazelrc: --custom_malloc=//bazel/sanitizers:defaults). Compiled in
// rather than passed as environment variables so that the binaries a test
// starts (rolloutd starts rollout-worker; Python tests start rolloutd) and
// `bazel run` get them too, and so the TSan suppressions need no file path at
// run time. An explicit ASAN_OPTIONS / TSAN_OPTIONS / UBSAN_OPTIONS variable
// still overrides any of these options.
#ifndef __has_feature
#define __has_feature(x) 0
#endif

extern "C" {

#if __has_feature(address_sanitizer) || defined(__SANITIZE_ADDRESS__)
// check_initialization_order / strict_init_order: static-init-order bugs
// across our translation units. detect_stack_use_after_return: catches
// returning views into stack buffers (costs memory, worth it in tests).
const char* __asan_default_options() {
  return "detect_leaks=1:check_initialization_order=1:strict_init_order=1:"
         "detect_stack_use_after_return=1:strict_string_checks=1:"
         "print_suppressions=0";
}

// Leaks that are not ours: one-time allocations the Debian libraries keep
// until exit by design (never freed, reachable only from their statics).
const char* __lsan_default_suppressions() {
  return
#include "bazel/sanitizers/lsan_suppressions.inc"
      ;
}
#endif

#if __has_feature(undefined_behavior_sanitizer) || \
    __has_feature(address_sanitizer) || defined(__SANITIZE_ADDRESS__)
const char* __ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1:report_error_type=1";
}
#endif

#if __has_feature(thread_sanitizer) || defined(__SANITIZE_THREAD__)
// halt_on_error: the first race fails the test, with its report.
// second_deadlock_stack: both stacks of a lock-order inversion.
const char* __tsan_default_options() {
  return "halt_on_error=1:second_deadlock_stack=1:history_size=4:"
         "print_suppressions=0";
}

// --config=tsan_full (ROLLOUT_TSAN_INSTRUMENTED_LIBS) runs against TSan-built
// absl and gRPC (tools/tsan_libs.sh), so their called_from_lib lines go.
const char* __tsan_default_suppressions() {
  return
#include "bazel/sanitizers/tsan_suppressions.inc"
#ifndef ROLLOUT_TSAN_INSTRUMENTED_LIBS
#include "bazel/sanitizers/tsan_suppressions_system_libs.inc"
#endif
      ;
}
#endif

}  // extern "C"
