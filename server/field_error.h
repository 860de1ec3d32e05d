// INVALID_ARGUMENT statuses that carry the offending request field.
//
//   return InvalidFieldError("sampling.top_p",
//                            absl::StrCat("must be in (0, 1], got ", v));
//   // message: "sampling.top_p: must be in (0, 1], got 2"
//   ...
//   metrics->RecordValidationFailure(FieldOf(status));  // "sampling.top_p"
//
// The field (a proto field path without indices) travels as a status payload,
// so the metrics label never has to be parsed back out of the message.
#ifndef ROLLOUT_SERVER_FIELD_ERROR_H_
#define ROLLOUT_SERVER_FIELD_ERROR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rollout::server {

// INVALID_ARGUMENT "<field>: <message>" with `field` attached.
absl::Status InvalidFieldError(absl::string_view field,
                               absl::string_view message);

// The field attached by InvalidFieldError, or "" if none.
std::string FieldOf(const absl::Status& status);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_FIELD_ERROR_H_
