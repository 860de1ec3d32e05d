// The command line and environment of one rollout-worker process, from the
// server config (worker/rollout_worker_main.cc documents the flags).
//
// The environment is clean: only an allow-list of the parent's variables
// (locale, paths, CUDA/NVIDIA device selection, BLAS/OpenMP threading,
// sanitizer and gRPC debug settings) goes through, so a worker does not
// inherit rolloutd's secrets or test harness state. CPU workers share the
// machine's cores: each gets cores / CPU workers threads (OpenBLAS and the
// backend's pool) unless the parent set OPENBLAS_NUM_THREADS itself.
#ifndef ROLLOUT_SERVER_WORKERS_WORKER_ARGS_H_
#define ROLLOUT_SERVER_WORKERS_WORKER_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "rollout/v1/config.pb.h"

namespace rollout::server::workers {

struct WorkerLaunch {
  int index = 0;
  std::string binary;
  std::string socket_path;
  std::string model_dir;
  // "auto", "cpu" or "cuda:<i>" (workers.devices[index], or "auto").
  std::string device = "auto";
  // Weights to serve (after Admin.UpdateWeights): empty = model_dir's.
  std::string weights_dir;
  uint64_t weight_version = 0;
  // Threads for the CPU backend and BLAS; 0 = the worker's default.
  int threads = 0;
};

// workers.devices[index], or "auto" when the list is empty.
std::string DeviceOf(const rollout::v1::ServerConfig& config, int index);

// Threads each CPU worker should use: hardware threads / workers running on
// the CPU (devices "cpu"; "auto" counts when no GPU is assumed), at least 1.
int CpuThreadsPerWorker(int hardware_threads, int cpu_workers);

// argv (argv[0] = binary) of the worker.
std::vector<std::string> WorkerArgv(const rollout::v1::ServerConfig& config,
                                    const WorkerLaunch& launch);

// "NAME=value" entries: the allowed part of `parent` (an environ-style list)
// plus OPENBLAS_NUM_THREADS / OMP_NUM_THREADS = threads when threads > 0 and
// the parent did not set them.
std::vector<std::string> WorkerEnvironment(
    const std::vector<std::string>& parent, int threads);

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_WORKER_ARGS_H_
