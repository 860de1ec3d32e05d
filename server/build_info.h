// rolloutd's version and source commit (GetServerInfo, rollout_build_info).
#ifndef ROLLOUT_SERVER_BUILD_INFO_H_
#define ROLLOUT_SERVER_BUILD_INFO_H_

namespace rollout::server {

inline constexpr char kVersion[] = "0.1.0";
// The build is not stamped (no --workspace_status_command), so the commit is
// unknown to the binary.
inline constexpr char kCommit[] = "unknown";

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_BUILD_INFO_H_
