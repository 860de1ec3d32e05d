// RETURN_IF_ERROR / ASSIGN_OR_RETURN for absl::Status and absl::StatusOr.
//
//   RETURN_IF_ERROR(file.Open(path));
//   ASSIGN_OR_RETURN(Config config, ParseConfig(text));
//
// The only status macros in the project (no exceptions cross module boundaries;
// grpc::Status is made once, in server/).
#ifndef ROLLOUT_COMMON_STATUS_MACROS_H_
#define ROLLOUT_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ROLLOUT_STATUS_CONCAT_INNER_(a, b) a##b
#define ROLLOUT_STATUS_CONCAT_(a, b) ROLLOUT_STATUS_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::absl::Status rollout_status_ = (expr);           \
    if (!rollout_status_.ok()) return rollout_status_; \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr) \
  ROLLOUT_ASSIGN_OR_RETURN_IMPL_(   \
      ROLLOUT_STATUS_CONCAT_(rollout_statusor_, __LINE__), lhs, expr)

#define ROLLOUT_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // ROLLOUT_COMMON_STATUS_MACROS_H_
