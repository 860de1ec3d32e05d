// The one place where absl::Status becomes grpc::Status (handlers and
// everything below them use absl::Status).
#ifndef ROLLOUT_SERVER_GRPC_STATUS_H_
#define ROLLOUT_SERVER_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace rollout::server {

// Same code (absl and gRPC share the numbering) and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

// "OK", "INVALID_ARGUMENT", ... (the gRPC names, as used in metric labels).
absl::string_view StatusCodeName(grpc::StatusCode code);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_GRPC_STATUS_H_
