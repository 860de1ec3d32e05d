#include "worker/engine/fake_backend.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::worker {
namespace {

// SplitMix64 finaliser: a good cheap 64-bit mixer.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t Combine(uint64_t a, uint64_t b) { return Mix(a ^ Mix(b)); }

// The tag of token t at position p (never 0: 0 marks an unwritten KV entry).
uint64_t Tag(int32_t token, int32_t pos) {
  return Combine(static_cast<uint64_t>(token) + 1,
                 static_cast<uint64_t>(pos) + 1) |
         1ull;
}

// One token through the "recurrence".
uint64_t Advance(uint64_t h, uint64_t tag) { return Combine(h, tag); }

constexpr uint64_t kInitialState = 0x5EED5EED5EED5EEDull;

}  // namespace

FakeBackend::FakeBackend(FakeBackendOptions options)
    : options_(std::move(options)), weights_seed_(options_.weights_seed) {
  info_.model_type = "fake";
  info_.vocab_size = options_.vocab_size;
  info_.num_gdn_layers = options_.num_gdn_layers;
  info_.num_attention_layers = options_.num_attention_layers;
  info_.num_layers = options_.num_gdn_layers + options_.num_attention_layers;
  info_.max_position_embeddings = options_.max_position_embeddings;
  info_.eos_token_ids = options_.eos_token_ids;
}

model::BackendCapabilities FakeBackend::capabilities() const {
  model::BackendCapabilities c;
  c.name = "fake";
  c.replay_ssm = options_.replay_ssm;
  c.max_rows_per_step = options_.max_rows_per_step;
  return c;
}

absl::StatusOr<model::PoolFootprint> FakeBackend::Footprint(
    int ring_length, int kv_block_size) const {
  if (ring_length < 1 || kv_block_size < 1) {
    return absl::InvalidArgumentError("ring_length and kv_block_size >= 1");
  }
  model::PoolFootprint fp;
  fp.state_slot_bytes =
      options_.state_bytes_per_layer * options_.num_gdn_layers;
  fp.ring_slot_bytes = options_.ring_entry_bytes_per_layer * ring_length *
                       options_.num_gdn_layers;
  fp.kv_block_bytes = options_.kv_token_bytes_per_layer * kv_block_size *
                      options_.num_attention_layers;
  return fp;
}

absl::Status FakeBackend::InitPools(const model::PoolConfig& pools) {
  RETURN_IF_ERROR(pools.Validate());
  pools_ = pools;
  slots_.assign(pools.num_state_slots, Slot{});
  rings_.assign(pools.num_ring_slots, Ring{});
  kv_.assign(static_cast<size_t>(pools.num_kv_blocks) * pools.kv_block_size, 0);
  peak_bytes_ = std::max(peak_bytes_, memory().device_used_bytes);
  return absl::OkStatus();
}

absl::Status FakeBackend::CheckSlot(int slot) const {
  if (slot < 0 || slot >= static_cast<int>(slots_.size())) {
    return absl::OutOfRangeError(absl::StrCat("state slot ", slot));
  }
  return absl::OkStatus();
}

absl::Status FakeBackend::CheckLive(int slot) const {
  RETURN_IF_ERROR(CheckSlot(slot));
  if (slots_[slot].lost) {
    return absl::FailedPreconditionError(absl::StrCat(
        "slot ", slot, " lost its unflushed ring entries to another row"));
  }
  return absl::OkStatus();
}

absl::Status FakeBackend::CheckBlocks(absl::Span<const int32_t> blocks) const {
  for (int32_t b : blocks) {
    if (b < 0 || b >= pools_.num_kv_blocks) {
      return absl::OutOfRangeError(absl::StrCat("kv block ", b));
    }
  }
  return absl::OkStatus();
}

absl::Status FakeBackend::ResetState(int slot) {
  RETURN_IF_ERROR(CheckSlot(slot));
  Slot& s = slots_[slot];
  if (s.live_ring >= 0) {
    // The engine released the ring without flushing (a finished sequence):
    // the entries are garbage now.
    rings_[s.live_ring] = Ring{};
  }
  s = Slot{};
  s.h = kInitialState;
  s.pos = 0;
  return absl::OkStatus();
}

absl::Status FakeBackend::CopyState(int src, int dst) {
  RETURN_IF_ERROR(CheckLive(src));
  RETURN_IF_ERROR(CheckSlot(dst));
  if (slots_[src].live_ring >= 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("CopyState: slot ", src, " has live ring entries"));
  }
  slots_[dst] = slots_[src];
  ++counters_.copy_state;
  return absl::OkStatus();
}

absl::Status FakeBackend::CopyKvBlock(int src, int dst) {
  const int32_t ids[2] = {src, dst};
  RETURN_IF_ERROR(CheckBlocks(ids));
  const int bs = pools_.kv_block_size;
  std::copy_n(kv_.begin() + static_cast<size_t>(src) * bs, bs,
              kv_.begin() + static_cast<size_t>(dst) * bs);
  ++counters_.copy_kv;
  return absl::OkStatus();
}

absl::Status FakeBackend::FlushRing(int state_slot, int ring_slot,
                                    int write_pos) {
  RETURN_IF_ERROR(CheckLive(state_slot));
  if (ring_slot < 0 || ring_slot >= static_cast<int>(rings_.size())) {
    return absl::OutOfRangeError(absl::StrCat("ring ", ring_slot));
  }
  Ring& r = rings_[ring_slot];
  Slot& s = slots_[state_slot];
  if (static_cast<int>(r.entries.size()) != write_pos ||
      (write_pos > 0 && r.owner != state_slot)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "FlushRing: write_pos ", write_pos, " but ring ", ring_slot, " holds ",
        r.entries.size(), " entries of slot ", r.owner));
  }
  for (uint64_t tag : r.entries) s.h = Advance(s.h, tag);
  r = Ring{};
  s.live_ring = -1;
  ++counters_.explicit_flushes;
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> FakeBackend::KvDigest(absl::Span<const int32_t> blocks,
                                               int end) const {
  if (options_.num_attention_layers == 0) return 0;
  const int bs = pools_.kv_block_size;
  uint64_t d = 0;
  for (int p = 0; p < end; ++p) {
    const uint64_t tag = kv_[static_cast<size_t>(blocks[p / bs]) * bs + p % bs];
    if (tag == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("KV of position ", p, " was never written"));
    }
    d = Combine(d, tag);
  }
  return d;
}

void FakeBackend::WriteLogits(uint64_t state, uint64_t kv, float* out) const {
  const uint64_t base = Combine(Combine(state, kv), weights_seed_);
  for (int v = 0; v < options_.vocab_size; ++v) {
    const uint64_t x = Combine(base, static_cast<uint64_t>(v));
    // Uniform in [-4, 4): 24 bits, exactly representable.
    out[v] =
        static_cast<float>((x >> 40) & 0xFFFFFF) / 16777216.0f * 8.0f - 4.0f;
  }
}

absl::Status FakeBackend::Forward(const model::ForwardBatch& batch,
                                  model::ForwardOutput* out) {
  ++counters_.forward_calls;
  if (fail_next_forward_) {
    fail_next_forward_ = false;
    return absl::InternalError("injected Forward failure");
  }
  if (options_.max_rows_per_step > 0 &&
      static_cast<int>(batch.rows.size()) > options_.max_rows_per_step) {
    return absl::InvalidArgumentError("too many rows");
  }
  const int V = options_.vocab_size;
  const int bs = pools_.kv_block_size;
  // Validate everything first so a failing step changes nothing.
  std::vector<int> seen_slots;
  for (const model::ForwardRow& row : batch.rows) {
    RETURN_IF_ERROR(CheckLive(row.state_slot));
    if (std::find(seen_slots.begin(), seen_slots.end(), row.state_slot) !=
        seen_slots.end()) {
      return absl::InvalidArgumentError("two rows share a state slot");
    }
    seen_slots.push_back(row.state_slot);
    const Slot& s = slots_[row.state_slot];
    if (row.tokens.empty()) return absl::InvalidArgumentError("empty row");
    for (int32_t t : row.tokens) {
      if (t < 0 || t >= V) return absl::InvalidArgumentError("token id");
    }
    if (row.start_pos != s.pos) {
      return absl::FailedPreconditionError(
          absl::StrCat("row start_pos ", row.start_pos, " but slot ",
                       row.state_slot, " holds ", s.pos, " tokens"));
    }
    const int end = row.start_pos + static_cast<int>(row.tokens.size());
    if (end > info_.max_position_embeddings) {
      return absl::InvalidArgumentError("beyond max positions");
    }
    if (options_.num_attention_layers > 0) {
      if (static_cast<int>(row.kv_blocks.size()) < (end + bs - 1) / bs) {
        return absl::InvalidArgumentError(
            absl::StrCat("row has ", row.kv_blocks.size(), " kv blocks for ",
                         end, " positions"));
      }
      RETURN_IF_ERROR(CheckBlocks(row.kv_blocks));
    }
    const model::ReplayRow& rp = row.replay;
    if (rp.ring_slot >= 0) {
      if (row.tokens.size() != 1) {
        return absl::InvalidArgumentError("ring on a prefill row");
      }
      if (!options_.replay_ssm || options_.num_gdn_layers == 0) {
        return absl::UnimplementedError("no ReplaySSM ring path");
      }
      if (rp.ring_slot >= static_cast<int>(rings_.size())) {
        return absl::OutOfRangeError(absl::StrCat("ring ", rp.ring_slot));
      }
      const Ring& r = rings_[rp.ring_slot];
      // write_pos 0 starts an empty ring: entries another (finished) slot
      // left there are discarded; that slot's state is lost (checked later).
      const bool ok_cursor =
          rp.write_pos > 0
              ? static_cast<int>(r.entries.size()) == rp.write_pos &&
                    r.owner == row.state_slot
              : r.entries.empty() || r.owner != row.state_slot;
      if (rp.write_pos < 0 || rp.write_pos >= pools_.ring_length ||
          !ok_cursor || (s.live_ring >= 0 && s.live_ring != rp.ring_slot)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "ring cursor: write_pos ", rp.write_pos, ", ring ", rp.ring_slot,
            " holds ", r.entries.size(), " entries of slot ", r.owner));
      }
    } else if (s.live_ring >= 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("plain/prefill row on slot ", row.state_slot,
                       " with live ring entries (flush first)"));
    }
  }

  out->logits.clear();
  out->logits_offset.assign(batch.rows.size(), 0);
  out->logits_count.assign(batch.rows.size(), 0);
  out->rows_flushed = 0;
  // KV writes first for all rows (a real backend writes K/V of every row
  // before attention reads them), then states and logits.
  for (const model::ForwardRow& row : batch.rows) {
    if (options_.num_attention_layers == 0) break;
    for (size_t i = 0; i < row.tokens.size(); ++i) {
      const int p = row.start_pos + static_cast<int>(i);
      kv_[static_cast<size_t>(row.kv_blocks[p / bs]) * bs + p % bs] =
          Tag(row.tokens[i], p);
    }
  }
  for (size_t ri = 0; ri < batch.rows.size(); ++ri) {
    const model::ForwardRow& row = batch.rows[ri];
    Slot& s = slots_[row.state_slot];
    const model::ReplayRow& rp = row.replay;
    const int n = static_cast<int>(row.tokens.size());
    ++counters_.rows;
    if (rp.ring_slot >= 0) {
      ++counters_.ring_rows;
    } else if (n == 1 && row.logits == model::LogitsWanted::kLast) {
      ++counters_.decode_tokens;
    } else {
      counters_.prefill_tokens += n;
    }
    out->logits_offset[ri] =
        static_cast<int32_t>(out->logits.size() / std::max(V, 1));
    // Effective state before the row: checkpoint + live ring entries.
    uint64_t h = s.h;
    if (rp.ring_slot >= 0) {
      Ring& r = rings_[rp.ring_slot];
      if (rp.write_pos == 0 && !r.entries.empty()) {
        slots_[r.owner].lost = true;
        slots_[r.owner].live_ring = -1;
        r = Ring{};
      }
      for (uint64_t tag : r.entries) h = Advance(h, tag);
    }
    for (int i = 0; i < n; ++i) {
      const int p = row.start_pos + i;
      h = Advance(h, Tag(row.tokens[i], p));
      const bool want =
          row.logits == model::LogitsWanted::kAll ||
          (row.logits == model::LogitsWanted::kLast && i == n - 1);
      if (want) {
        ASSIGN_OR_RETURN(uint64_t kv, KvDigest(row.kv_blocks, p + 1));
        out->logits.resize(out->logits.size() + V);
        WriteLogits(h, kv, out->logits.data() + out->logits.size() - V);
        ++out->logits_count[ri];
      }
    }
    s.pos += n;
    if (rp.ring_slot >= 0) {
      Ring& r = rings_[rp.ring_slot];
      if (rp.flush || rp.write_pos == pools_.ring_length - 1) {
        s.h = h;  // checkpoint := S_t
        r = Ring{};
        s.live_ring = -1;
        ++out->rows_flushed;
        ++counters_.ring_flushes;
      } else {
        r.owner = row.state_slot;
        r.entries.push_back(Tag(row.tokens[0], row.start_pos));
        s.live_ring = rp.ring_slot;
      }
    } else {
      s.h = h;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<model::StateSnapshot> FakeBackend::ExportState(
    int state_slot, absl::Span<const int32_t> kv_blocks) {
  RETURN_IF_ERROR(CheckLive(state_slot));
  RETURN_IF_ERROR(CheckBlocks(kv_blocks));
  const Slot& s = slots_[state_slot];
  if (s.live_ring >= 0) {
    return absl::FailedPreconditionError(
        "ExportState of a slot with live ring entries");
  }
  model::StateSnapshot snap;
  snap.state.resize(sizeof(s.h) + sizeof(s.pos));
  std::memcpy(snap.state.data(), &s.h, sizeof(s.h));
  std::memcpy(snap.state.data() + sizeof(s.h), &s.pos, sizeof(s.pos));
  const int bs = pools_.kv_block_size;
  snap.kv.resize(kv_blocks.size() * bs * sizeof(uint64_t));
  for (size_t i = 0; i < kv_blocks.size(); ++i) {
    std::memcpy(snap.kv.data() + i * bs * sizeof(uint64_t),
                kv_.data() + static_cast<size_t>(kv_blocks[i]) * bs,
                bs * sizeof(uint64_t));
  }
  snap.num_kv_blocks = static_cast<int32_t>(kv_blocks.size());
  ++counters_.exports;
  return snap;
}

absl::Status FakeBackend::ImportState(const model::StateSnapshot& snap,
                                      int state_slot,
                                      absl::Span<const int32_t> kv_blocks) {
  RETURN_IF_ERROR(CheckSlot(state_slot));
  RETURN_IF_ERROR(CheckBlocks(kv_blocks));
  if (snap.num_kv_blocks != static_cast<int32_t>(kv_blocks.size()) ||
      snap.state.size() != sizeof(uint64_t) + sizeof(int)) {
    return absl::InvalidArgumentError("snapshot shape mismatch");
  }
  Slot& s = slots_[state_slot];
  if (s.live_ring >= 0) rings_[s.live_ring] = Ring{};
  s = Slot{};
  std::memcpy(&s.h, snap.state.data(), sizeof(s.h));
  std::memcpy(&s.pos, snap.state.data() + sizeof(s.h), sizeof(s.pos));
  const int bs = pools_.kv_block_size;
  for (size_t i = 0; i < kv_blocks.size(); ++i) {
    std::memcpy(kv_.data() + static_cast<size_t>(kv_blocks[i]) * bs,
                snap.kv.data() + i * bs * sizeof(uint64_t),
                bs * sizeof(uint64_t));
  }
  ++counters_.imports;
  return absl::OkStatus();
}

absl::Status FakeBackend::LoadWeights(const std::string& checkpoint_dir) {
  uint64_t seed;
  if (!absl::StartsWith(checkpoint_dir, "fake:") ||
      !absl::SimpleAtoi(checkpoint_dir.substr(5), &seed)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a fake checkpoint: ", checkpoint_dir));
  }
  weights_seed_ = seed;
  ++counters_.weight_loads;
  return absl::OkStatus();
}

model::MemoryStats FakeBackend::memory() const {
  model::MemoryStats m;
  m.weights_bytes = 1 << 20;
  absl::StatusOr<model::PoolFootprint> fp =
      Footprint(pools_.ring_length, pools_.kv_block_size);
  if (fp.ok()) {
    m.pools_bytes = fp->state_slot_bytes * pools_.num_state_slots +
                    fp->ring_slot_bytes * pools_.num_ring_slots +
                    fp->kv_block_bytes * pools_.num_kv_blocks;
  }
  m.device_used_bytes = m.weights_bytes + m.pools_bytes;
  m.device_peak_bytes = std::max(peak_bytes_, m.device_used_bytes);
  return m;
}

}  // namespace rollout::worker
