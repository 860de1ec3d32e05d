#include "server/field_error.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"

namespace rollout::server {
namespace {
constexpr char kFieldPayload[] = "type.rollout.dev/rollout.field";
}  // namespace

absl::Status InvalidFieldError(absl::string_view field,
                               absl::string_view message) {
  absl::Status status =
      absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
  status.SetPayload(kFieldPayload, absl::Cord(field));
  return status;
}

std::string FieldOf(const absl::Status& status) {
  absl::optional<absl::Cord> field = status.GetPayload(kFieldPayload);
  return field.has_value() ? std::string(*field) : "";
}

}  // namespace rollout::server
