#include "server/workers/worker_args.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace rollout::server::workers {
namespace {

// Variables a worker may inherit (exact names).
constexpr absl::string_view kAllowed[] = {
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TZ",
    "TMPDIR",
    "LD_LIBRARY_PATH",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "GRPC_VERBOSITY",
    "GRPC_TRACE",
    "ASAN_OPTIONS",
    "UBSAN_OPTIONS",
    "TSAN_OPTIONS",
    "LSAN_OPTIONS",
    "MSAN_OPTIONS",
};
// ... and these prefixes (device selection, locale categories).
constexpr absl::string_view kAllowedPrefixes[] = {"CUDA_", "NVIDIA_", "LC_"};

bool Allowed(absl::string_view name) {
  for (absl::string_view a : kAllowed) {
    if (name == a) return true;
  }
  for (absl::string_view p : kAllowedPrefixes) {
    if (absl::StartsWith(name, p)) return true;
  }
  return false;
}

absl::string_view NameOf(absl::string_view entry) {
  return entry.substr(0, entry.find('='));
}

}  // namespace

std::string DeviceOf(const rollout::v1::ServerConfig& config, int index) {
  const auto& devices = config.workers().devices();
  if (index < devices.size()) return devices[index];
  return "auto";
}

int CpuThreadsPerWorker(int hardware_threads, int cpu_workers) {
  if (cpu_workers <= 0) return std::max(1, hardware_threads);
  return std::max(1, hardware_threads / cpu_workers);
}

std::vector<std::string> WorkerArgv(const rollout::v1::ServerConfig& config,
                                    const WorkerLaunch& launch) {
  const auto& admission = config.admission();
  const auto& replay = config.replay_ssm();
  // Slots bound concurrency, not only n: by default at least 64 whatever
  // max_n is (the validator keeps an explicit value >= max_n).
  const int max_num_seqs = config.workers().max_num_seqs() > 0
                               ? config.workers().max_num_seqs()
                               : std::max(64, admission.max_n());
  int num_rings = -1;  // one per slot
  const float share = replay.ring_pool_share();
  if (share <= 0.0f) {
    num_rings = 0;
  } else if (share < 1.0f) {
    num_rings = std::max(
        1,
        static_cast<int>(std::ceil(share * static_cast<float>(max_num_seqs))));
  }
  std::vector<std::string> argv = {
      launch.binary,
      absl::StrCat("--index=", launch.index),
      absl::StrCat("--socket=", launch.socket_path),
      absl::StrCat("--model=", launch.model_dir),
      absl::StrCat("--device=", launch.device),
      absl::StrCat("--max_num_seqs=", max_num_seqs),
      absl::StrCat("--memory_budget_bytes=",
                   config.workers().memory_budget_bytes()),
      absl::StrCat("--max_batch_tokens=", config.workers().max_batch_tokens()),
      absl::StrCat("--max_top_logprobs=", admission.max_top_logprobs()),
      absl::StrCat("--replay_ssm=", replay.enabled() ? "true" : "false"),
      absl::StrCat("--ring_length=", replay.ring_length()),
      absl::StrCat("--num_rings=", num_rings),
      absl::StrCat("--auto_min_batch=", replay.auto_min_batch_size()),
      // rolloutd cancels its calls before it stops a worker: little to drain.
      "--drain_seconds=5",
  };
  if (launch.threads > 0) {
    argv.push_back(absl::StrCat("--threads=", launch.threads));
  }
  if (!launch.weights_dir.empty() && launch.weight_version > 0) {
    argv.push_back(absl::StrCat("--weights=", launch.weights_dir));
    argv.push_back(absl::StrCat("--weight_version=", launch.weight_version));
  }
  return argv;
}

std::vector<std::string> WorkerEnvironment(
    const std::vector<std::string>& parent, int threads) {
  std::vector<std::string> env;
  bool has_blas = false;
  bool has_omp = false;
  for (const std::string& entry : parent) {
    const absl::string_view name = NameOf(entry);
    if (name.empty() || !Allowed(name)) continue;
    has_blas = has_blas || name == "OPENBLAS_NUM_THREADS";
    has_omp = has_omp || name == "OMP_NUM_THREADS";
    env.push_back(entry);
  }
  if (threads > 0 && !has_blas) {
    env.push_back(absl::StrCat("OPENBLAS_NUM_THREADS=", threads));
  }
  if (threads > 0 && !has_omp) {
    env.push_back(absl::StrCat("OMP_NUM_THREADS=", threads));
  }
  return env;
}

}  // namespace rollout::server::workers
