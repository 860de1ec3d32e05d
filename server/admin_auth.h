// Bearer-token check of Admin RPCs.
//
// When security.admin_token_file is configured, an Admin call must carry the
// metadata "authorization: Bearer <token>". The comparison takes the same
// time wherever the tokens differ, and neither the expected nor the presented
// token ever appears in an error message or a log.
#ifndef ROLLOUT_SERVER_ADMIN_AUTH_H_
#define ROLLOUT_SERVER_ADMIN_AUTH_H_

#include <map>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/string_ref.h"

namespace rollout::server {

using ClientMetadata = std::multimap<grpc::string_ref, grpc::string_ref>;

// OK when `expected` is empty (no token configured) or the metadata carries
// it; UNAUTHENTICATED otherwise.
absl::Status CheckAdminToken(const ClientMetadata& metadata,
                             absl::string_view expected);

// a == b in time that depends only on the lengths.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_ADMIN_AUTH_H_
