#include "server/server_info.h"

#include "server/build_info.h"

namespace rollout::server {

rollout::v1::ServerInfo BuildServerInfo(const ConfigSnapshot& snapshot,
                                        const DispatcherState& state,
                                        const rollout::v1::ModelInfo* model,
                                        bool paused) {
  const rollout::v1::ServerConfig& c = snapshot.config;
  rollout::v1::ServerInfo info;
  info.set_version(kVersion);
  info.set_commit(kCommit);
  info.set_config_generation(snapshot.generation);
  if (model != nullptr) *info.mutable_model() = *model;

  auto* limits = info.mutable_limits();
  limits->set_max_n(c.admission().max_n());
  limits->set_max_prompt_tokens(c.admission().max_prompt_tokens());
  limits->set_max_tokens(c.admission().max_tokens());
  limits->set_max_top_logprobs(c.admission().max_top_logprobs());
  limits->set_max_stop_token_ids(c.admission().max_stop_token_ids());
  limits->set_max_response_bytes(c.admission().max_response_bytes());
  limits->set_max_receive_message_bytes(
      c.transport().max_receive_message_bytes());
  limits->set_max_send_message_bytes(c.transport().max_send_message_bytes());
  limits->set_max_queued_requests(c.admission().max_queued_requests());
  limits->set_max_queued_tokens(c.admission().max_queued_tokens());
  limits->set_max_requests_per_client(c.admission().max_requests_per_client());

  *info.mutable_default_sampling() = c.default_sampling();

  auto* replay = info.mutable_replay_ssm();
  replay->set_enabled(c.replay_ssm().enabled());
  replay->set_default_mode(c.replay_ssm().default_mode());
  replay->add_supported_modes(rollout::v1::REPLAY_SSM_MODE_ON);
  replay->add_supported_modes(rollout::v1::REPLAY_SSM_MODE_OFF);
  replay->add_supported_modes(rollout::v1::REPLAY_SSM_MODE_AUTO);
  replay->set_ring_length(c.replay_ssm().ring_length());
  replay->set_auto_min_batch_size(c.replay_ssm().auto_min_batch_size());
  replay->set_available(c.replay_ssm().enabled() && state.replay_ssm_available);

  info.set_weight_version(state.weight_version);
  info.set_paused(paused);
  info.set_ready_workers(state.ready_workers);
  for (const auto& worker : state.workers) *info.add_workers() = worker;
  return info;
}

}  // namespace rollout::server
