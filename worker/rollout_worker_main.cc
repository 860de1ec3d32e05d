// rollout-worker: one engine on one device behind the internal API
// (proto/rollout/worker/v1/worker.proto), served on a unix socket. rolloutd
// starts, supervises and stops it; it is not meant to be run by hand (but
// can be, for debugging):
//
//   rollout-worker --socket=/tmp/w/worker-0.sock
//   --model=tests/data/tiny_qwen3_5
//
// It never serves /metrics (DESIGN.md section 9: a CUDA process must not run
// the Prometheus exposer); rolloutd pulls its stats over the socket.
//
// Start-up: load the model, start the engine, then bind the socket: a worker
// that answers GetInfo is ready. SIGTERM/SIGINT: refuse new requests, let
// running ones finish for up to --drain_seconds, abort the rest, exit 0. The
// process dies with rolloutd (rolloutd sets PR_SET_PDEATHSIG when it forks).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/mutex.h"
#include "model/cuda/device.h"
#include "worker/service/device_choice.h"
#include "worker/service/worker_options.h"
#include "worker/service/worker_runtime.h"
#include "worker/service/worker_service.h"

ABSL_FLAG(int, index, 0, "Worker index (metrics label, logs, device auto).");
ABSL_FLAG(std::string, socket, "", "Unix socket path to serve on.");
ABSL_FLAG(std::string, model, "", "Hugging Face checkpoint directory.");
ABSL_FLAG(std::string, device, "auto", "auto, cpu or cuda:<index>.");
ABSL_FLAG(int, threads, 0, "CPU backend threads (0: hardware concurrency).");
ABSL_FLAG(std::string, weights, "",
          "Checkpoint to serve instead of --model's weights (with "
          "--weight_version).");
ABSL_FLAG(int64_t, weight_version, 0, "Version of --weights (> 0).");
ABSL_FLAG(int, drain_seconds, 30,
          "On SIGTERM, seconds running requests get to finish.");
ABSL_FLAG(int, max_num_seqs, 64,
          "State slots: concurrent completions, and the largest group n.");
ABSL_FLAG(int64_t, memory_budget_bytes, int64_t{1} << 30,
          "Bytes for the state, ring and KV pools together.");
ABSL_FLAG(int, max_waiting_groups, 1024,
          "Groups queued in the engine beyond the running ones.");
ABSL_FLAG(int, max_top_logprobs, 20, "Largest top-k of logprobs.");
ABSL_FLAG(int, max_batch_tokens, 2048, "Tokens per engine step.");
ABSL_FLAG(bool, replay_ssm, true, "ReplaySSM ring decode enabled.");
ABSL_FLAG(int, ring_length, 16, "ReplaySSM ring length L.");
ABSL_FLAG(int, num_rings, -1,
          "ReplaySSM rings (-1: one per state slot; 0: no ring path).");
ABSL_FLAG(int, auto_min_batch, 8,
          "AUTO decodes on the ring from this many decode rows.");

namespace {

int g_signal_pipe[2] = {-1, -1};

void OnSignal(int signal_number) {
  const unsigned char byte = static_cast<unsigned char>(signal_number);
  (void)!write(g_signal_pipe[1], &byte, 1);  // async-signal-safe
}

std::string Prefix() {
  return absl::StrCat("rollout-worker[", absl::GetFlag(FLAGS_index), "]: ");
}

rollout::worker::service::WorkerOptions OptionsFromFlags() {
  rollout::worker::service::WorkerOptions o;
  o.index = absl::GetFlag(FLAGS_index);
  o.socket_path = absl::GetFlag(FLAGS_socket);
  o.model_dir = absl::GetFlag(FLAGS_model);
  o.device = absl::GetFlag(FLAGS_device);
  o.threads = absl::GetFlag(FLAGS_threads);
  o.weights_dir = absl::GetFlag(FLAGS_weights);
  o.weight_version = absl::GetFlag(FLAGS_weight_version);
  o.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  o.engine.max_num_seqs = absl::GetFlag(FLAGS_max_num_seqs);
  o.engine.memory_budget_bytes = absl::GetFlag(FLAGS_memory_budget_bytes);
  o.engine.max_waiting_groups = absl::GetFlag(FLAGS_max_waiting_groups);
  o.engine.max_top_logprobs = absl::GetFlag(FLAGS_max_top_logprobs);
  o.engine.max_batch_tokens = absl::GetFlag(FLAGS_max_batch_tokens);
  o.engine.prefill_chunk_tokens =
      std::min(o.engine.prefill_chunk_tokens, o.engine.max_batch_tokens);
  o.engine.replay.enabled = absl::GetFlag(FLAGS_replay_ssm);
  o.engine.replay.ring_length = absl::GetFlag(FLAGS_ring_length);
  o.engine.replay.num_rings = absl::GetFlag(FLAGS_num_rings);
  o.engine.replay.auto_min_batch = absl::GetFlag(FLAGS_auto_min_batch);
  // rolloutd resolves DEFAULT before a request gets here.
  o.engine.replay.default_mode = rollout::worker::ReplayMode::kAuto;
  return o;
}

int Fail(const std::string& what, const absl::Status& status) {
  std::cerr << Prefix() << what << ": " << status << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "rollout-worker: one engine on one device behind rolloutd's internal "
      "API (unix socket). Started by rolloutd.");
  absl::ParseCommandLine(argc, argv);
  // Sockets and anything else we create: owner only.
  umask(0077);
  if (pipe(g_signal_pipe) != 0) {
    std::cerr << Prefix() << "pipe: " << std::strerror(errno) << std::endl;
    return 1;
  }
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const rollout::worker::service::WorkerOptions options = OptionsFromFlags();
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    return Fail("invalid flags", valid);
  }

  std::vector<rollout::cuda::DeviceInfo> visible;
  if (options.device != "cpu") {
    auto devices = rollout::cuda::QueryDevices();
    if (devices.ok()) visible = *std::move(devices);
  }
  auto device = rollout::worker::service::ChooseDevice(options.device,
                                                       options.index, visible);
  if (!device.ok()) return Fail("device", device.status());
  if (device->cuda_ordinal >= 0) {
    if (absl::Status s = rollout::cuda::SelfTest(device->cuda_ordinal);
        !s.ok()) {
      return Fail(absl::StrCat(device->device, " self-test"), s);
    }
  }
  if (!device->note.empty()) {
    std::cerr << Prefix() << device->device << ": " << device->note
              << std::endl;
  }

  const absl::Time load_start = absl::Now();
  auto runtime = rollout::worker::service::StartRuntime(options, *device);
  if (!runtime.ok()) return Fail("start-up", runtime.status());
  rollout::worker::service::WorkerService service(runtime->executor.get(),
                                                  runtime->info);
  // A stale socket from a previous process of this worker would make the
  // bind fail.
  unlink(options.socket_path.c_str());
  auto server = rollout::worker::service::StartWorkerServer(
      &service, options.socket_path);
  if (!server.ok()) return Fail("serving", server.status());
  std::cerr << Prefix() << "ready on unix:" << options.socket_path << " ("
            << runtime->info.model().name() << ", device "
            << runtime->info.device() << ", backend " << runtime->info.backend()
            << ", loaded in " << absl::FormatDuration(absl::Now() - load_start)
            << ")" << std::endl;

  unsigned char signal_number = 0;
  while (read(g_signal_pipe[0], &signal_number, 1) < 0 && errno == EINTR) {
  }
  std::cerr << Prefix() << "signal " << static_cast<int>(signal_number)
            << ", draining for up to " << options.drain_seconds << " s"
            << std::endl;
  service.StartDraining();
  rollout::worker::Executor* executor = runtime->executor.get();
  rollout::Notification drained;
  std::thread drain([executor, &drained] {
    executor->Shutdown(rollout::worker::ShutdownMode::kDrain);
    drained.Notify();
  });
  if (!drained.WaitForNotificationWithTimeout(
          absl::Seconds(options.drain_seconds))) {
    std::cerr << Prefix() << "drain time over; aborting what is left"
              << std::endl;
    executor->Shutdown(rollout::worker::ShutdownMode::kAbort);
  }
  drain.join();
  // Calls still open get a moment to send their last events.
  (*server)->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
  (*server)->Wait();
  unlink(options.socket_path.c_str());
  return 0;
}
