// Times the CPU backend on a checkpoint: load, one prefill, then decode steps
// over a batch of sequences (plain or ReplaySSM rows). A program, not a test:
//
//   bazel run -c opt //model/tools:cpu_forward_bench -- \
//       --checkpoint=/tmp/q08b_4l --prompt=256 --batch=4 --steps=8
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "model/backend.h"
#include "model/cpu/cpu_backend.h"

ABSL_FLAG(std::string, checkpoint, "", "HF checkpoint directory");
ABSL_FLAG(int, prompt, 128, "prompt tokens per sequence");
ABSL_FLAG(int, batch, 4, "decode rows per step");
ABSL_FLAG(int, steps, 8, "decode steps");
ABSL_FLAG(int, ring, 0, "ReplaySSM ring length for decode rows (0: plain)");
ABSL_FLAG(int, threads, 0, "CPU backend threads (0: all cores)");

namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "cpu_forward_bench: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  namespace m = rollout::model;
  const int P = absl::GetFlag(FLAGS_prompt), B = absl::GetFlag(FLAGS_batch);
  const int steps = absl::GetFlag(FLAGS_steps), L = absl::GetFlag(FLAGS_ring);
  auto t0 = Clock::now();
  absl::StatusOr<std::unique_ptr<m::cpu::CpuBackend>> backend =
      m::cpu::CpuBackend::Create(absl::GetFlag(FLAGS_checkpoint),
                                 {.num_threads = absl::GetFlag(FLAGS_threads)});
  if (!backend.ok()) return Fail(backend.status());
  std::printf("load: %.2f s, weights %.2f GB\n", Since(t0),
              (*backend)->memory().weights_bytes / 1e9);
  const int block = 16;
  const int blocks_per_seq = (P + steps + block) / block;
  m::PoolConfig pools;
  pools.num_state_slots = B;
  pools.num_ring_slots = L > 0 ? B : 0;
  pools.ring_length = L > 0 ? L : 16;
  pools.kv_block_size = block;
  pools.num_kv_blocks = B * blocks_per_seq;
  if (absl::Status s = (*backend)->InitPools(pools); !s.ok()) return Fail(s);
  std::vector<std::vector<int32_t>> tables(B);
  std::vector<int32_t> prompt(P);
  const int V = (*backend)->info().vocab_size;
  for (int i = 0; i < P; ++i) prompt[i] = (i * 7919 + 11) % V;
  t0 = Clock::now();
  for (int b = 0; b < B; ++b) {
    for (int i = 0; i < blocks_per_seq; ++i) {
      tables[b].push_back(b * blocks_per_seq + i);
    }
    (void)(*backend)->ResetState(b);
    m::ForwardBatch batch;
    m::ForwardRow row;
    row.tokens = prompt;
    row.state_slot = b;
    row.kv_blocks = tables[b];
    batch.rows.push_back(row);
    m::ForwardOutput out;
    if (absl::Status s = (*backend)->Forward(batch, &out); !s.ok()) {
      return Fail(s);
    }
  }
  const double prefill = Since(t0);
  std::printf("prefill: %d x %d tokens in %.2f s (%.1f tok/s)\n", B, P, prefill,
              B * P / prefill);
  std::vector<std::vector<int32_t>> tok(B, std::vector<int32_t>{1});
  t0 = Clock::now();
  for (int step = 0; step < steps; ++step) {
    m::ForwardBatch batch;
    for (int b = 0; b < B; ++b) {
      m::ForwardRow row;
      row.tokens = tok[b];
      row.start_pos = P + step;
      row.state_slot = b;
      row.kv_blocks = tables[b];
      if (L > 0) {
        row.replay.ring_slot = b;
        row.replay.write_pos = step % L;
      }
      batch.rows.push_back(row);
    }
    m::ForwardOutput out;
    if (absl::Status s = (*backend)->Forward(batch, &out); !s.ok()) {
      return Fail(s);
    }
  }
  const double decode = Since(t0);
  std::printf(
      "decode: %d steps x %d rows in %.2f s (%.1f tok/s, %.1f ms/step)\n",
      steps, B, decode, steps * B / decode, 1e3 * decode / steps);
  return 0;
}
