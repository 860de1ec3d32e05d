#include "model/cpu/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gdn/reference.h"
#include "model/checkpoint.h"
#include "model/gdn_mixer.h"
#include "model/weights.h"

namespace rollout::model::cpu {
namespace {

ModelInfo InfoFrom(const ModelConfig& c) {
  ModelInfo info;
  info.model_type = c.model_type;
  info.vocab_size = c.vocab_size;
  info.num_layers = c.num_layers;
  info.num_gdn_layers = c.num_gdn_layers();
  info.num_attention_layers = c.num_attention_layers();
  info.max_position_embeddings = c.max_position_embeddings;
  info.eos_token_ids = c.eos_token_ids;
  return info;
}

absl::StatusOr<std::unique_ptr<HybridModel>> LoadModel(const std::string& dir,
                                                       ModelConfig config,
                                                       ops::ThreadPool* pool) {
  ASSIGN_OR_RETURN(std::unique_ptr<Checkpoint> ckpt, Checkpoint::Open(dir));
  ASSIGN_OR_RETURN(std::unique_ptr<ModelWeights> weights,
                   LoadModelWeights(config, *ckpt));
  return std::make_unique<HybridModel>(
      std::move(config),
      std::shared_ptr<const ModelWeights>(std::move(weights)), pool);
}

// A "Key: value kB" line of /proc/self/status, in bytes (0 if unavailable).
int64_t ProcStatusBytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, n, key) == 0 && line.size() > n && line[n] == ':') {
      return std::atoll(line.c_str() + n + 1) * 1024;
    }
  }
  return 0;
}

int64_t ResidentBytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

absl::Status CpuBackendOptions::Validate() const {
  if (num_threads < 0 || num_threads > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_threads must be in [0, 1024], got ", num_threads));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CpuBackend>> CpuBackend::Create(
    const std::string& checkpoint_dir, const CpuBackendOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<CpuBackend> b(new CpuBackend());
  b->options_ = options;
  const int threads = options.num_threads > 0
                          ? options.num_threads
                          : std::max(1u, std::thread::hardware_concurrency());
  b->pool_ = std::make_unique<ops::ThreadPool>(threads);
  ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(checkpoint_dir));
  ASSIGN_OR_RETURN(
      b->model_, LoadModel(checkpoint_dir, std::move(config), b->pool_.get()));
  b->info_ = InfoFrom(b->model_->config());
  return b;
}

BackendCapabilities CpuBackend::capabilities() const {
  BackendCapabilities caps;
  caps.name = "cpu";
  caps.replay_ssm = true;
  caps.bf16_ring = false;
  caps.max_rows_per_step = 0;
  return caps;
}

absl::StatusOr<PoolFootprint> CpuBackend::Footprint(int ring_length,
                                                    int kv_block_size) const {
  PoolConfig probe;
  probe.num_state_slots = 1;
  probe.ring_length = ring_length;
  probe.kv_block_size = kv_block_size;
  RETURN_IF_ERROR(probe.Validate());
  const PoolSizes s =
      PoolSizes::For(model_->config(), ring_length, kv_block_size);
  PoolFootprint fp;
  fp.state_slot_bytes = s.slot_floats * static_cast<int64_t>(sizeof(float));
  fp.ring_slot_bytes = s.ring_floats * static_cast<int64_t>(sizeof(float));
  fp.kv_block_bytes = s.kv_block_floats * static_cast<int64_t>(sizeof(float));
  return fp;
}

absl::Status CpuBackend::InitPools(const PoolConfig& pools) {
  return pools_.Init(model_->config(), pools);
}

absl::Status CpuBackend::CheckPools() const {
  if (!pools_.initialized()) {
    return absl::FailedPreconditionError("InitPools has not been called");
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::CheckSlot(int slot, absl::string_view what) const {
  RETURN_IF_ERROR(CheckPools());
  if (slot < 0 || slot >= pools_.config().num_state_slots) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", slot, " outside [0, ",
                     pools_.config().num_state_slots, ")"));
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::CheckBlocks(absl::Span<const int32_t> blocks) const {
  for (int32_t b : blocks) {
    if (b < 0 || b >= pools_.config().num_kv_blocks) {
      return absl::InvalidArgumentError(absl::StrCat(
          "KV block ", b, " outside [0, ", pools_.config().num_kv_blocks, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::ResetState(int slot) {
  RETURN_IF_ERROR(CheckSlot(slot, "state slot"));
  std::fill_n(pools_.slot(slot), pools_.sizes().slot_floats, 0.0f);
  return absl::OkStatus();
}

absl::Status CpuBackend::CopyState(int src, int dst) {
  RETURN_IF_ERROR(CheckSlot(src, "source state slot"));
  RETURN_IF_ERROR(CheckSlot(dst, "destination state slot"));
  if (src != dst) {
    std::copy_n(pools_.slot(src), pools_.sizes().slot_floats, pools_.slot(dst));
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::CopyKvBlock(int src, int dst) {
  RETURN_IF_ERROR(CheckPools());
  const int32_t ids[2] = {src, dst};
  RETURN_IF_ERROR(CheckBlocks(ids));
  if (src != dst) {
    std::copy_n(pools_.kv_block(src), pools_.sizes().kv_block_floats,
                pools_.kv_block(dst));
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::FlushRing(int state_slot, int ring_slot,
                                   int write_pos) {
  RETURN_IF_ERROR(CheckSlot(state_slot, "state slot"));
  const PoolConfig& pc = pools_.config();
  if (ring_slot < 0 || ring_slot >= pc.num_ring_slots) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ring slot ", ring_slot, " outside [0, ", pc.num_ring_slots, ")"));
  }
  if (write_pos < 0 || write_pos >= pc.ring_length) {
    return absl::InvalidArgumentError(
        absl::StrCat("write_pos ", write_pos,
                     " outside [0, ring_length = ", pc.ring_length, ")"));
  }
  const ModelConfig& c = model_->config();
  SequenceState st = pools_.View(c, state_slot, ring_slot, {});
  const gdn::GdnDims dims = ToGdnDims(c.gdn);
  for (GdnLayerState& l : st.gdn) {
    gdn::ReplayFold(dims, pc.ring_length, write_pos, l.recurrent, l.ring_k,
                    l.ring_d, l.ring_g);
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::ValidateBatch(const ForwardBatch& batch) const {
  RETURN_IF_ERROR(CheckPools());
  const PoolConfig& pc = pools_.config();
  const ModelConfig& c = model_->config();
  std::unordered_set<int> slots, rings;
  // Blocks each row writes (positions >= start_pos) -> row.
  std::unordered_map<int32_t, size_t> written;
  for (size_t i = 0; i < batch.rows.size(); ++i) {
    const ForwardRow& r = batch.rows[i];
    auto bad = [&](auto... parts) {
      return absl::InvalidArgumentError(
          absl::StrCat("row ", i, ": ", parts...));
    };
    const int T = static_cast<int>(r.tokens.size());
    if (T < 1) return bad("no tokens");
    if (r.start_pos < 0) return bad("start_pos ", r.start_pos, " < 0");
    if (static_cast<int64_t>(r.start_pos) + T > c.max_position_embeddings) {
      return bad("positions up to ", r.start_pos + T,
                 " exceed max_position_embeddings ", c.max_position_embeddings);
    }
    if (r.state_slot < 0 || r.state_slot >= pc.num_state_slots) {
      return bad("state slot ", r.state_slot, " outside [0, ",
                 pc.num_state_slots, ")");
    }
    if (!slots.insert(r.state_slot).second) {
      return bad("state slot ", r.state_slot, " used by two rows");
    }
    for (int t = 0; t < T; ++t) {
      if (r.tokens[t] < 0 || r.tokens[t] >= c.vocab_size) {
        return bad("token id ", r.tokens[t], " outside [0, ", c.vocab_size,
                   ")");
      }
    }
    if (r.replay.ring_slot >= 0) {
      if (T != 1) return bad("a ReplaySSM row must be a one-token decode row");
      if (r.replay.ring_slot >= pc.num_ring_slots) {
        return bad("ring slot ", r.replay.ring_slot, " outside [0, ",
                   pc.num_ring_slots, ")");
      }
      if (!rings.insert(r.replay.ring_slot).second) {
        return bad("ring slot ", r.replay.ring_slot, " used by two rows");
      }
      if (r.replay.write_pos < 0 || r.replay.write_pos >= pc.ring_length) {
        return bad("write_pos ", r.replay.write_pos, " outside [0, ",
                   pc.ring_length, ")");
      }
    }
    if (c.num_attention_layers() > 0) {
      const int64_t need =
          (static_cast<int64_t>(r.start_pos) + T + pc.kv_block_size - 1) /
          pc.kv_block_size;
      if (static_cast<int64_t>(r.kv_blocks.size()) < need) {
        return bad(r.kv_blocks.size(), " KV blocks for ", r.start_pos + T,
                   " positions; ", need, " needed");
      }
      absl::Status s = CheckBlocks(r.kv_blocks.subspan(0, need));
      if (!s.ok()) return bad(s.message());
      for (int64_t b = r.start_pos / pc.kv_block_size; b < need; ++b) {
        auto [it, inserted] = written.emplace(r.kv_blocks[b], i);
        if (!inserted && it->second != i) {
          return bad("KV block ", r.kv_blocks[b],
                     " is written by two rows of the batch");
        }
      }
    }
  }
  // A block being written must not be read by another row either.
  if (!written.empty()) {
    for (size_t i = 0; i < batch.rows.size(); ++i) {
      const ForwardRow& r = batch.rows[i];
      const int64_t need = (static_cast<int64_t>(r.start_pos) +
                            r.tokens.size() + pc.kv_block_size - 1) /
                           pc.kv_block_size;
      for (int64_t b = 0; b < need; ++b) {
        auto it = written.find(r.kv_blocks[b]);
        if (it != written.end() && it->second != i) {
          return absl::InvalidArgumentError(absl::StrCat(
              "row ", i, ": reads KV block ", r.kv_blocks[b], " that row ",
              it->second, " writes in the same step"));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::Forward(const ForwardBatch& batch,
                                 ForwardOutput* out) {
  RETURN_IF_ERROR(ValidateBatch(batch));
  const int V = model_->config().vocab_size;
  out->logits_offset.assign(batch.rows.size(), 0);
  out->logits_count.assign(batch.rows.size(), 0);
  out->rows_flushed = 0;
  int64_t total = 0;
  for (size_t i = 0; i < batch.rows.size(); ++i) {
    const ForwardRow& r = batch.rows[i];
    const int T = static_cast<int>(r.tokens.size());
    const int count = r.logits == LogitsWanted::kNone   ? 0
                      : r.logits == LogitsWanted::kLast ? 1
                                                        : T;
    out->logits_offset[i] = static_cast<int32_t>(total);
    out->logits_count[i] = count;
    total += count;
  }
  out->logits.assign(static_cast<size_t>(total) * V, 0.0f);
  for (size_t i = 0; i < batch.rows.size(); ++i) {
    const ForwardRow& r = batch.rows[i];
    const int T = static_cast<int>(r.tokens.size());
    SequenceState st = pools_.View(model_->config(), r.state_slot,
                                   r.replay.ring_slot, r.kv_blocks);
    st.replay.write_pos = r.replay.write_pos;
    st.replay.force_flush = r.replay.flush;
    ASSIGN_OR_RETURN(
        bool flushed,
        model_->Forward(r.tokens, r.start_pos, st, T - out->logits_count[i],
                        out->logits.data() +
                            static_cast<size_t>(out->logits_offset[i]) * V));
    if (flushed) ++out->rows_flushed;
  }
  return absl::OkStatus();
}

absl::StatusOr<StateSnapshot> CpuBackend::ExportState(
    int state_slot, absl::Span<const int32_t> kv_blocks) {
  RETURN_IF_ERROR(CheckSlot(state_slot, "state slot"));
  RETURN_IF_ERROR(CheckBlocks(kv_blocks));
  const PoolSizes& s = pools_.sizes();
  StateSnapshot snap;
  snap.state.resize(s.slot_floats * sizeof(float));
  std::memcpy(snap.state.data(), pools_.slot(state_slot), snap.state.size());
  snap.num_kv_blocks = static_cast<int32_t>(kv_blocks.size());
  const size_t block_bytes = s.kv_block_floats * sizeof(float);
  snap.kv.resize(block_bytes * kv_blocks.size());
  for (size_t i = 0; i < kv_blocks.size(); ++i) {
    std::memcpy(snap.kv.data() + i * block_bytes, pools_.kv_block(kv_blocks[i]),
                block_bytes);
  }
  return snap;
}

absl::Status CpuBackend::ImportState(const StateSnapshot& snap, int state_slot,
                                     absl::Span<const int32_t> kv_blocks) {
  RETURN_IF_ERROR(CheckSlot(state_slot, "state slot"));
  RETURN_IF_ERROR(CheckBlocks(kv_blocks));
  const PoolSizes& s = pools_.sizes();
  const size_t block_bytes = s.kv_block_floats * sizeof(float);
  if (snap.state.size() != s.slot_floats * sizeof(float)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "snapshot state has ", snap.state.size(), " bytes, a state slot has ",
        s.slot_floats * sizeof(float)));
  }
  if (snap.num_kv_blocks != static_cast<int32_t>(kv_blocks.size()) ||
      snap.kv.size() != block_bytes * kv_blocks.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "snapshot holds ", snap.num_kv_blocks, " KV blocks (", snap.kv.size(),
        " bytes); ", kv_blocks.size(), " blocks given"));
  }
  std::memcpy(pools_.slot(state_slot), snap.state.data(), snap.state.size());
  for (size_t i = 0; i < kv_blocks.size(); ++i) {
    std::memcpy(pools_.kv_block(kv_blocks[i]), snap.kv.data() + i * block_bytes,
                block_bytes);
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::LoadWeights(const std::string& checkpoint_dir) {
  ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(checkpoint_dir));
  RETURN_IF_ERROR(CheckSameArchitecture(model_->config(), config));
  ASSIGN_OR_RETURN(std::unique_ptr<HybridModel> model,
                   LoadModel(checkpoint_dir, std::move(config), pool_.get()));
  // Fully loaded and validated: swap. Pools keep their layout (same shapes).
  model_ = std::move(model);
  // Shapes are unchanged; eos ids and max positions may differ.
  info_ = InfoFrom(model_->config());
  return absl::OkStatus();
}

MemoryStats CpuBackend::memory() const {
  MemoryStats m;
  m.weights_bytes = model_->weights().bytes();
  m.pools_bytes = pools_.bytes();
  m.device_used_bytes = ResidentBytes();
  m.device_peak_bytes = std::max(ProcStatusBytes("VmHWM"), m.device_used_bytes);
  return m;
}

}  // namespace rollout::model::cpu
