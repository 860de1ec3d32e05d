// libFuzzer entry point for config.json parsing: any text gives a validated
// ModelConfig or an error, never a crash. Built and run like
// safetensors_fuzzer.cc; seeds: model/fuzz_corpus/config (the tiny models'
// config.json files).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "model/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<rollout::model::ModelConfig> c =
      rollout::model::ParseModelConfig(text);
  if (c.ok() && !c->Validate().ok()) std::abort();
  return 0;
}
