// gRPC server credentials from security.tls: plaintext when no certificate is
// configured, TLS with cert_file + key_file, mTLS with client_ca_file
// (require_client_cert refuses clients without a valid certificate).
#ifndef ROLLOUT_SERVER_SERVER_CREDENTIALS_H_
#define ROLLOUT_SERVER_SERVER_CREDENTIALS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"
#include "rollout/v1/config.pb.h"

namespace rollout::server {

// FAILED_PRECONDITION naming the field when a file cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const rollout::v1::TlsConfig& tls);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_SERVER_CREDENTIALS_H_
