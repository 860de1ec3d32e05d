#include "server/admin_auth.h"

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace rollout::server {

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Walk the longer string fully so the time does not reveal a common prefix.
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  uint8_t diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t x = i < a.size() ? static_cast<uint8_t>(a[i]) : 0;
    const uint8_t y = i < b.size() ? static_cast<uint8_t>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

absl::Status CheckAdminToken(const ClientMetadata& metadata,
                             absl::string_view expected) {
  if (expected.empty()) return absl::OkStatus();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError(
        "admin RPCs need the metadata \"authorization: Bearer <token>\" (the "
        "token of security.admin_token_file)");
  }
  absl::string_view value(it->second.data(), it->second.size());
  constexpr absl::string_view kScheme = "bearer ";
  if (value.size() < kScheme.size() ||
      !absl::EqualsIgnoreCase(value.substr(0, kScheme.size()), kScheme)) {
    return absl::UnauthenticatedError(
        "the authorization metadata must be \"Bearer <token>\"");
  }
  const absl::string_view presented =
      absl::StripAsciiWhitespace(value.substr(kScheme.size()));
  if (!ConstantTimeEquals(presented, expected)) {
    return absl::UnauthenticatedError("invalid admin token");
  }
  return absl::OkStatus();
}

}  // namespace rollout::server
