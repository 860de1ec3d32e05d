// libFuzzer entry point for the safetensors header parser: any byte string
// must give a header whose tensors lie inside the input, or an error; never a
// crash, hang or sanitizer report.
//
// With clang's libFuzzer (Debian clang-14 + libclang-rt-14-dev):
//   clang++-14 -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -I. \
//     model/safetensors_fuzzer.cc model/safetensors.cc model/json_util.cc \
//     model/dtype.cc $(pkg-config --libs absl_status absl_statusor \
//     absl_strings absl_str_format) -o /tmp/safetensors_fuzzer
//   /tmp/safetensors_fuzzer -max_total_time=600 -max_len=4096
// Under Bazel (gcc), safetensors_fuzzer_test drives the same entry point
// with random and mutated inputs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/types/span.h"
#include "model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rollout::model::SafetensorsLimits limits;
  limits.max_header_bytes = 1 << 20;
  absl::StatusOr<rollout::model::SafetensorsHeader> h =
      rollout::model::ParseSafetensorsHeader(absl::MakeConstSpan(data, size),
                                             limits);
  if (!h.ok()) return 0;
  for (const rollout::model::TensorInfo& t : h->tensors) {
    // Invariants the loader relies on.
    if (t.begin < 0 || t.end < t.begin || t.end > h->data_size ||
        h->data_offset + h->data_size != static_cast<int64_t>(size) ||
        t.nbytes() != t.numel() * rollout::model::DtypeSize(t.dtype)) {
      std::abort();
    }
  }
  return 0;
}
