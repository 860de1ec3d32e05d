// libFuzzer entry point for the safetensors header parser: any byte string
// must give a header whose tensors lie inside the input, or an error; never a
// crash, hang or sanitizer report.
//
// Built and run by cc_fuzz_test (bazel/fuzz.bzl): the corpus model/fuzz_corpus/
// safetensors replays in the normal suite; --config=asan fuzzes it for 60 s
// with libFuzzer + ASan/UBSan; tools/fuzz.sh model:safetensors_fuzzer <secs>
// runs longer.
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
