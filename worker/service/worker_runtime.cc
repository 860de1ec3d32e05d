#include "worker/service/worker_runtime.h"

#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/cpu/cpu_backend.h"
#include "server/model_info.h"

namespace rollout::worker::service {
namespace {

std::string LastComponent(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

absl::StatusOr<WorkerRuntime> StartRuntime(const WorkerOptions& options,
                                           const DeviceChoice& device) {
  RETURN_IF_ERROR(options.Validate());
  // The only backend so far (device_choice.h): the CPU one, also on a GPU.
  model::cpu::CpuBackendOptions cpu_options;
  cpu_options.num_threads = options.threads;
  auto backend = model::cpu::CpuBackend::Create(options.model_dir, cpu_options);
  if (!backend.ok()) {
    return absl::Status(backend.status().code(),
                        absl::StrCat("loading ", options.model_dir, ": ",
                                     backend.status().message()));
  }
  WorkerRuntime runtime;
  rollout::worker::v1::WorkerInfo& info = runtime.info;
  *info.mutable_model() = rollout::server::ToModelInfo(
      (*backend)->config(), LastComponent(options.model_dir));
  ASSIGN_OR_RETURN(runtime.executor,
                   Executor::Create(*std::move(backend), options.engine));
  if (!options.weights_dir.empty()) {
    absl::Status loaded = runtime.executor->UpdateWeights(
        options.weights_dir, options.weight_version);
    if (!loaded.ok()) {
      return absl::Status(loaded.code(),
                          absl::StrCat("loading weights ", options.weights_dir,
                                       ": ", loaded.message()));
    }
  }
  const ExecutorInfo& e = runtime.executor->info();
  info.set_index(options.index);
  info.set_device(device.device);
  info.set_backend(device.backend);
  info.set_device_note(device.note);
  info.set_weight_version(
      static_cast<uint64_t>(runtime.executor->Stats().weight_version));
  info.set_replay_ssm_available(
      e.capabilities.replay_ssm && e.model.num_gdn_layers > 0 &&
      e.pools.pools.num_ring_slots > 0 && e.replay.enabled);
  info.set_max_n(e.limits.max_n);
  info.set_max_model_len(e.limits.max_model_len);
  info.set_max_top_logprobs(e.limits.max_top_logprobs);
  info.set_capacity(options.Capacity());
  info.set_state_slots(e.pools.pools.num_state_slots);
  info.set_ring_slots(e.pools.pools.num_ring_slots);
  info.set_kv_blocks(e.pools.pools.num_kv_blocks);
  info.set_kv_block_size(e.pools.pools.kv_block_size);
  info.set_pid(getpid());
  return runtime;
}

}  // namespace rollout::worker::service
