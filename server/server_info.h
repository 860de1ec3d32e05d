// GetServerInfo's answer, assembled from the config in effect, the
// dispatcher's state and the model description.
#ifndef ROLLOUT_SERVER_SERVER_INFO_H_
#define ROLLOUT_SERVER_SERVER_INFO_H_

#include "rollout/v1/rollout.pb.h"
#include "server/config/config_manager.h"
#include "server/dispatcher.h"

namespace rollout::server {

// `model` may be null (not known yet).
rollout::v1::ServerInfo BuildServerInfo(const ConfigSnapshot& config,
                                        const DispatcherState& state,
                                        const rollout::v1::ModelInfo* model,
                                        bool paused);

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_SERVER_INFO_H_
