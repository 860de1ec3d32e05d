#include "model/weight_names.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace rollout::model {

ClassifiedName ClassifyTensorName(absl::string_view name) {
  ClassifiedName out;
  for (absl::string_view ignored :
       {"mtp.", "model.mtp.", "model.visual.", "visual.", "model.vision_tower.",
        "vision_tower.", "model.language_model.mtp."}) {
    if (absl::StartsWith(name, ignored)) {
      out.role = TensorRole::kIgnored;
      return out;
    }
  }
  constexpr absl::string_view kNested = "model.language_model.";
  if (absl::StartsWith(name, kNested)) {
    out.role = TensorRole::kLanguageModel;
    out.canonical = absl::StrCat("model.", name.substr(kNested.size()));
    return out;
  }
  if (absl::StartsWith(name, "model.") || name == "lm_head.weight") {
    out.role = TensorRole::kLanguageModel;
    out.canonical = std::string(name);
    return out;
  }
  return out;
}

absl::StatusOr<NameMap> BuildNameMap(const std::vector<std::string>& names) {
  NameMap map;
  for (const std::string& name : names) {
    ClassifiedName c = ClassifyTensorName(name);
    switch (c.role) {
      case TensorRole::kIgnored:
        map.ignored.push_back(name);
        break;
      case TensorRole::kUnknown:
        map.unknown.push_back(name);
        break;
      case TensorRole::kLanguageModel: {
        auto [it, inserted] = map.to_checkpoint.emplace(c.canonical, name);
        if (!inserted) {
          return absl::InvalidArgumentError(
              absl::StrCat("checkpoint has both '", it->second, "' and '", name,
                           "' for the same weight"));
        }
        break;
      }
    }
  }
  return map;
}

}  // namespace rollout::model
