// libFuzzer entry point for rolloutd's request path before any work starts:
// arbitrary bytes parsed as a public request, resolved (server defaults) and
// validated exactly as the Rollout / Admin services do
// (server/rollout_service.cc). Beyond "no crash, no sanitizer report", it
// checks what the workers rely on: an accepted request is within every limit,
// and a refused one is INVALID_ARGUMENT naming its field.
//
// Input: byte 0 selects the message and the limits in force, the rest is the
// serialized message (proto wire format).
//   byte0 % 8:  0 Generate (unary)   1 GenerateStream   2 Score   3 Abort
//               4 Pause              5 UpdateWeights    6, 7 Generate (unary)
//   byte0 & 8:  a model is known (vocab_size / context checks on)
// Seeds: tests/fuzz/corpus/request (made by tests/fuzz/make_seeds.py).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "google/protobuf/stubs/logging.h"
#include "rollout/v1/admin.pb.h"
#include "rollout/v1/config.pb.h"
#include "rollout/v1/rollout.pb.h"
#include "server/config/config_defaults.h"
#include "server/field_error.h"
#include "server/request_defaults.h"
#include "server/request_limits.h"
#include "server/request_validator.h"

namespace rollout::server {
namespace {

// A violated property: print it and abort (libFuzzer saves the input).
#define FUZZ_CHECK(cond)                                                    \
  do {                                                                      \
    if (!(cond)) {                                                          \
      std::fprintf(stderr, "request_fuzzer: property failed: %s (%s:%d)\n", \
                   #cond, __FILE__, __LINE__);                              \
      std::abort();                                                         \
    }                                                                       \
  } while (0)

const v1::ServerConfig& Config() {
  static const v1::ServerConfig* config =
      new v1::ServerConfig(DefaultServerConfig());
  return *config;
}

RequestLimits Limits(bool model_known) {
  v1::ModelInfo model;
  // The tiny test model's context; a small vocabulary so that random ids hit
  // both sides of the bound.
  model.set_vocab_size(1000);
  model.set_max_position_embeddings(4096);
  return RequestLimits::From(Config(), model_known ? &model : nullptr);
}

// A refusal must be INVALID_ARGUMENT and name the field (metrics label it).
void CheckRefusal(const absl::Status& s) {
  FUZZ_CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  FUZZ_CHECK(!FieldOf(s).empty());
}

void CheckIds(const google::protobuf::RepeatedField<int32_t>& ids,
              const RequestLimits& limits) {
  for (int32_t id : ids) {
    FUZZ_CHECK(id >= 0);
    FUZZ_CHECK(limits.vocab_size == 0 || id < limits.vocab_size);
  }
}

void CheckRequestId(const std::string& id) {
  FUZZ_CHECK(!id.empty() && id.size() <= 256);
  for (char c : id) FUZZ_CHECK(c >= ' ' && c <= '~');
}

void FuzzGenerate(const uint8_t* data, size_t size, bool unary,
                  const RequestLimits& limits) {
  v1::GenerateRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  std::mt19937_64 rng(7);
  const v1::GenerateRequest resolved =
      ResolveGenerateRequest(request, Config(), limits, absl::BitGenRef(rng));
  const absl::Status s = ValidateGenerateRequest(resolved, limits, unary);
  if (!s.ok()) {
    CheckRefusal(s);
    return;
  }
  // Accepted: every limit the workers and the response assembly rely on.
  CheckRequestId(resolved.request_id());
  const int prompt = resolved.prompt_token_ids_size();
  FUZZ_CHECK(prompt >= 1 && prompt <= limits.max_prompt_tokens);
  CheckIds(resolved.prompt_token_ids(), limits);
  FUZZ_CHECK(resolved.n() >= 1 && resolved.n() <= limits.max_n);
  const v1::SamplingParams& p = resolved.sampling();
  FUZZ_CHECK(std::isfinite(p.temperature()) && p.temperature() >= 0);
  FUZZ_CHECK(p.top_p() > 0 && p.top_p() <= 1);
  FUZZ_CHECK(p.top_k() >= 0);
  FUZZ_CHECK(p.min_p() >= 0 && p.min_p() <= 1);
  FUZZ_CHECK(p.max_tokens() >= 1 && p.max_tokens() <= limits.max_tokens);
  FUZZ_CHECK(p.min_tokens() >= 0 && p.min_tokens() <= p.max_tokens());
  FUZZ_CHECK(limits.context_length == 0 ||
             int64_t{prompt} + p.max_tokens() <= limits.context_length);
  FUZZ_CHECK(p.stop_token_ids_size() <= limits.max_stop_token_ids);
  CheckIds(p.stop_token_ids(), limits);
  FUZZ_CHECK(resolved.logprobs().top_k() >= 0 &&
             resolved.logprobs().top_k() <= limits.max_top_logprobs);
  FUZZ_CHECK(v1::ReplaySsmMode_IsValid(resolved.replay_ssm()));
  if (unary) {
    FUZZ_CHECK(EstimateResponseBytes(
                   resolved.n(), p.max_tokens(), resolved.logprobs().sampled(),
                   resolved.logprobs().top_k()) <= limits.max_response_bytes);
  }
}

void FuzzScore(const uint8_t* data, size_t size, const RequestLimits& limits) {
  v1::ScoreRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  std::mt19937_64 rng(7);
  const v1::ScoreRequest resolved =
      ResolveScoreRequest(request, absl::BitGenRef(rng));
  const absl::Status s = ValidateScoreRequest(resolved, limits);
  if (!s.ok()) {
    CheckRefusal(s);
    return;
  }
  CheckRequestId(resolved.request_id());
  const int prompt = resolved.prompt_token_ids_size();
  FUZZ_CHECK(prompt >= 1 && prompt <= limits.max_prompt_tokens);
  CheckIds(resolved.prompt_token_ids(), limits);
  FUZZ_CHECK(resolved.completions_size() >= 1 &&
             resolved.completions_size() <= limits.max_n);
  for (const v1::TokenSequence& c : resolved.completions()) {
    FUZZ_CHECK(c.token_ids_size() >= 1 &&
               c.token_ids_size() <= limits.max_tokens);
    FUZZ_CHECK(limits.context_length == 0 ||
               int64_t{prompt} + c.token_ids_size() <= limits.context_length);
    CheckIds(c.token_ids(), limits);
  }
  FUZZ_CHECK(resolved.top_logprobs() >= 0 &&
             resolved.top_logprobs() <= limits.max_top_logprobs);
}

template <typename Request, typename Validate>
void FuzzSimple(const uint8_t* data, size_t size, Validate validate) {
  Request request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  const absl::Status s = validate(request);
  if (!s.ok()) CheckRefusal(s);
}

}  // namespace
}  // namespace rollout::server

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Parse errors of invalid UTF-8 strings are expected by the thousand.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rollout::server;  // NOLINT: entry point
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const RequestLimits limits = Limits((selector & 8) != 0);
  ++data;
  --size;
  switch (selector % 8) {
    case 1:
      FuzzGenerate(data, size, /*unary=*/false, limits);
      break;
    case 2:
      FuzzScore(data, size, limits);
      break;
    case 3:
      FuzzSimple<rollout::v1::AbortRequest>(data, size, ValidateAbortRequest);
      break;
    case 4:
      FuzzSimple<rollout::v1::PauseRequest>(data, size, ValidatePauseRequest);
      break;
    case 5:
      FuzzSimple<rollout::v1::UpdateWeightsRequest>(
          data, size, ValidateUpdateWeightsRequest);
      break;
    default:
      FuzzGenerate(data, size, /*unary=*/true, limits);
      break;
  }
  return 0;
}
