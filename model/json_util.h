// Small helpers over nlohmann::json that turn every failure into an
// absl::Status naming the offending field (config.json, safetensors headers,
// index files). nlohmann throws on malformed text; ParseJson is the one place
// that catches, so no exception leaves this module.
//
//   ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(text, "config.json"));
//   ASSIGN_OR_RETURN(int64_t d, GetInt(j, "hidden_size", "config.json"));
#ifndef ROLLOUT_MODEL_JSON_UTIL_H_
#define ROLLOUT_MODEL_JSON_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace rollout::model {

struct JsonParseOptions {
  // Deeper nesting is rejected before parsing (bounds the parser's memory and
  // the recursion of value destruction on adversarial input).
  int max_depth = 64;
  // Reject objects that repeat a key (nlohmann would keep the last silently;
  // a safetensors header with a repeated tensor name is corrupt).
  bool reject_duplicate_keys = true;
};

// Parses `text`; `what` names the document in errors ("config.json").
absl::StatusOr<nlohmann::json> ParseJson(absl::string_view text,
                                         absl::string_view what,
                                         const JsonParseOptions& options = {});

// Reads a whole (small) text file; errors name the path.
absl::StatusOr<std::string> ReadTextFile(const std::string& path,
                                         int64_t max_bytes = 64 << 20);

// Field accessors on an object `obj`; `where` is the object's path for errors
// ("config.json text_config"). Required getters fail when the key is missing
// or has the wrong type; Optional* return nullopt when missing (or null) and
// fail on a wrong type.
absl::StatusOr<int64_t> GetInt(const nlohmann::json& obj, absl::string_view key,
                               absl::string_view where);
absl::StatusOr<std::optional<int64_t>> GetOptionalInt(const nlohmann::json& obj,
                                                      absl::string_view key,
                                                      absl::string_view where);
absl::StatusOr<std::optional<double>> GetOptionalDouble(
    const nlohmann::json& obj, absl::string_view key, absl::string_view where);
absl::StatusOr<std::optional<bool>> GetOptionalBool(const nlohmann::json& obj,
                                                    absl::string_view key,
                                                    absl::string_view where);
absl::StatusOr<std::optional<std::string>> GetOptionalString(
    const nlohmann::json& obj, absl::string_view key, absl::string_view where);
// An int or a list of ints (eos_token_id style); nullopt when missing/null.
absl::StatusOr<std::optional<std::vector<int64_t>>> GetOptionalIntOrIntList(
    const nlohmann::json& obj, absl::string_view key, absl::string_view where);

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_JSON_UTIL_H_
