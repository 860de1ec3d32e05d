#include "server/server_credentials.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace rollout::server {
namespace {

absl::StatusOr<std::string> ReadPem(const char* field,
                                    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (!in || buffer.str().empty()) {
    return absl::FailedPreconditionError(absl::StrCat("security.tls.", field,
                                                      ": cannot read \"", path,
                                                      "\" (or it is empty)"));
  }
  return buffer.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const rollout::v1::TlsConfig& tls) {
  if (tls.cert_file().empty()) return grpc::InsecureServerCredentials();
  auto cert = ReadPem("cert_file", tls.cert_file());
  if (!cert.ok()) return cert.status();
  auto key = ReadPem("key_file", tls.key_file());
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back({*key, *cert});
  if (!tls.client_ca_file().empty()) {
    auto ca = ReadPem("client_ca_file", tls.client_ca_file());
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    options.client_certificate_request =
        tls.require_client_cert()
            ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
            : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace rollout::server
