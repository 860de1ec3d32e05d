// The CPU backend against transformers 5 (tests/data/make_golden.py): for each
// tiny checkpoint, prefill logits at every prompt position, the 40-token greedy
// continuation token for token with the logits of every step, chunked prefill,
// and ReplaySSM ON decode (ring lengths 1, 7, 16) against OFF.
//
// Tolerance: max |delta| <= 1e-4 * max |golden logit| against transformers;
// ON vs OFF: max |delta| <= 1e-5 * max |logit|.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "model/backend.h"
#include "model/cpu/cpu_backend.h"
#include "model/safetensors.h"

namespace rollout::model {
namespace {

struct Golden {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::vector<float>> prefill_logits;   // [T_i, V]
  std::vector<std::vector<int32_t>> greedy_tokens;  // [N]
  std::vector<std::vector<float>> greedy_logits;    // [N, V]
};

template <typename T>
std::vector<T> Read(const SafetensorsFile& f, const std::string& name,
                    Dtype dtype) {
  const TensorInfo* t = f.header().Find(name);
  EXPECT_NE(t, nullptr) << name;
  if (t == nullptr) return {};
  EXPECT_EQ(t->dtype, dtype) << name;
  std::vector<T> out(t->numel());
  std::memcpy(out.data(), f.Bytes(*t).data(), t->nbytes());
  return out;
}

Golden LoadGolden(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> f =
      SafetensorsFile::Open(dir + "/golden.safetensors");
  EXPECT_TRUE(f.ok()) << f.status();
  Golden g;
  for (int i = 0; (*f)->header().Find("prompt_" + std::to_string(i)); ++i) {
    const std::string s = std::to_string(i);
    g.prompts.push_back(Read<int32_t>(**f, "prompt_" + s, Dtype::kI32));
    g.prefill_logits.push_back(
        Read<float>(**f, "prefill_logits_" + s, Dtype::kF32));
    g.greedy_tokens.push_back(
        Read<int32_t>(**f, "greedy_tokens_" + s, Dtype::kI32));
    g.greedy_logits.push_back(
        Read<float>(**f, "greedy_logits_" + s, Dtype::kF32));
  }
  return g;
}

float MaxAbs(const float* x, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

float MaxAbsDiff(const float* a, const float* b, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

int32_t Argmax(const float* x, int n) {
  return static_cast<int32_t>(std::max_element(x, x + n) - x);
}

constexpr int kBlock = 16;

class GoldenTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    dir_ = std::string("tests/data/") + GetParam();
    golden_ = LoadGolden(dir_);
    ASSERT_EQ(golden_.prompts.size(), 5u);
    absl::StatusOr<std::unique_ptr<cpu::CpuBackend>> b =
        cpu::CpuBackend::Create(dir_, {.num_threads = 2});
    ASSERT_TRUE(b.ok()) << b.status();
    backend_ = *std::move(b);
    vocab_ = backend_->info().vocab_size;
    // Per prompt: two state slots (OFF, ON), two ring slots, enough blocks.
    PoolConfig pools;
    pools.num_state_slots = 16;
    pools.num_ring_slots = 8;
    pools.ring_length = 16;
    pools.kv_block_size = kBlock;
    pools.num_kv_blocks = 16 * 12;
    ASSERT_TRUE(backend_->InitPools(pools).ok());
  }

  // Blocks of sequence `seq` (disjoint ranges).
  std::vector<int32_t> Blocks(int seq) const {
    std::vector<int32_t> b(12);
    for (int i = 0; i < 12; ++i) b[i] = seq * 12 + i;
    return b;
  }

  void InitRing(int ring_length) {
    PoolConfig pools;
    pools.num_state_slots = 16;
    pools.num_ring_slots = 8;
    pools.ring_length = ring_length;
    pools.kv_block_size = kBlock;
    pools.num_kv_blocks = 16 * 12;
    ASSERT_TRUE(backend_->InitPools(pools).ok());
  }

  // Greedy decode of every prompt in one batch per step (rows = prompts).
  // ring_length > 0 decodes through ReplaySSM rings. Returns the logits of
  // every step [prompt][N * V] and checks the tokens against the golden.
  std::vector<std::vector<float>> GreedyAll(int ring_length,
                                            int prefill_chunk) {
    const int P = static_cast<int>(golden_.prompts.size());
    std::vector<std::vector<int32_t>> blocks(P);
    std::vector<std::vector<float>> step_logits(P);
    std::vector<int32_t> last(P);
    for (int p = 0; p < P; ++p) {
      blocks[p] = Blocks(p);
      EXPECT_TRUE(backend_->ResetState(p).ok());
      // Chunked prefill, one row per chunk (continuing the same slot).
      const std::vector<int32_t>& prompt = golden_.prompts[p];
      const int T = static_cast<int>(prompt.size());
      for (int s = 0; s < T; s += prefill_chunk) {
        const int n = std::min(prefill_chunk, T - s);
        ForwardBatch batch;
        ForwardRow row;
        row.tokens = absl::MakeConstSpan(prompt.data() + s, n);
        row.start_pos = s;
        row.state_slot = p;
        row.kv_blocks = blocks[p];
        row.logits = s + n == T ? LogitsWanted::kLast : LogitsWanted::kNone;
        batch.rows.push_back(row);
        ForwardOutput out;
        absl::Status st = backend_->Forward(batch, &out);
        EXPECT_TRUE(st.ok()) << st;
        if (s + n == T) {
          step_logits[p] = out.logits;
          last[p] = Argmax(out.logits.data(), vocab_);
        }
      }
    }
    const int N = static_cast<int>(golden_.greedy_tokens[0].size());
    std::vector<int> write_pos(P, 0);
    for (int step = 0; step < N; ++step) {
      ForwardBatch batch;
      std::vector<std::vector<int32_t>> toks(P);
      for (int p = 0; p < P; ++p) {
        EXPECT_EQ(last[p], golden_.greedy_tokens[p][step])
            << GetParam() << " prompt " << p << " step " << step << " ring "
            << ring_length;
        toks[p] = {last[p]};
        if (step == N - 1) continue;
        ForwardRow row;
        row.tokens = toks[p];
        row.start_pos = static_cast<int32_t>(golden_.prompts[p].size()) + step;
        row.state_slot = p;
        row.kv_blocks = blocks[p];
        if (ring_length > 0) {
          row.replay.ring_slot = p;
          row.replay.write_pos = write_pos[p];
        }
        batch.rows.push_back(row);
      }
      if (step == N - 1) break;
      ForwardOutput out;
      absl::Status st = backend_->Forward(batch, &out);
      EXPECT_TRUE(st.ok()) << st;
      for (int p = 0; p < P; ++p) {
        const float* l = out.logits.data() +
                         static_cast<size_t>(out.logits_offset[p]) * vocab_;
        step_logits[p].insert(step_logits[p].end(), l, l + vocab_);
        last[p] = Argmax(l, vocab_);
        if (ring_length > 0) {
          write_pos[p] = write_pos[p] == ring_length - 1 ? 0 : write_pos[p] + 1;
        }
      }
      if (ring_length > 0) {
        int expected_flushes = 0;
        for (int p = 0; p < P; ++p) expected_flushes += write_pos[p] == 0;
        EXPECT_EQ(out.rows_flushed, expected_flushes);
      }
    }
    return step_logits;
  }

  std::string dir_;
  Golden golden_;
  std::unique_ptr<cpu::CpuBackend> backend_;
  int vocab_ = 0;
};

TEST_P(GoldenTest, PrefillLogitsAtEveryPosition) {
  const int P = static_cast<int>(golden_.prompts.size());
  // All prompts in one batch.
  ForwardBatch batch;
  std::vector<std::vector<int32_t>> blocks(P);
  for (int p = 0; p < P; ++p) {
    ASSERT_TRUE(backend_->ResetState(p).ok());
    blocks[p] = Blocks(p);
    ForwardRow row;
    row.tokens = golden_.prompts[p];
    row.state_slot = p;
    row.kv_blocks = blocks[p];
    row.logits = LogitsWanted::kAll;
    batch.rows.push_back(row);
  }
  ForwardOutput out;
  absl::Status st = backend_->Forward(batch, &out);
  ASSERT_TRUE(st.ok()) << st;
  for (int p = 0; p < P; ++p) {
    const size_t T = golden_.prompts[p].size();
    ASSERT_EQ(out.logits_count[p], static_cast<int>(T));
    const float* mine =
        out.logits.data() + static_cast<size_t>(out.logits_offset[p]) * vocab_;
    const std::vector<float>& ref = golden_.prefill_logits[p];
    ASSERT_EQ(ref.size(), T * vocab_);
    const float scale = MaxAbs(ref.data(), ref.size());
    const float diff = MaxAbsDiff(mine, ref.data(), ref.size());
    EXPECT_LE(diff, 1e-4f * scale)
        << GetParam() << " prompt " << p << " (T=" << T << ")";
    RecordProperty(("prefill_rel_err_" + std::to_string(p)).c_str(),
                   absl::StrFormat("%.3g", diff / scale));
  }
}

TEST_P(GoldenTest, GreedyContinuationMatchesTransformers) {
  for (int chunk : {1000, 17}) {  // whole prompt; chunked prefill
    std::vector<std::vector<float>> logits = GreedyAll(0, chunk);
    for (size_t p = 0; p < logits.size(); ++p) {
      const std::vector<float>& ref = golden_.greedy_logits[p];
      ASSERT_EQ(logits[p].size(), ref.size());
      const float scale = MaxAbs(ref.data(), ref.size());
      const size_t N = ref.size() / vocab_;
      float worst = 0;
      for (size_t j = 0; j < N; ++j) {
        const float diff = MaxAbsDiff(logits[p].data() + j * vocab_,
                                      ref.data() + j * vocab_, vocab_);
        worst = std::max(worst, diff);
        EXPECT_LE(diff, 1e-4f * scale) << GetParam() << " prompt " << p
                                       << " step " << j << " chunk " << chunk;
      }
      RecordProperty(("greedy_rel_err_" + std::to_string(p) + "_chunk" +
                      std::to_string(chunk))
                         .c_str(),
                     absl::StrFormat("%.3g", worst / scale));
    }
  }
}

TEST_P(GoldenTest, ReplaySsmOnMatchesOff) {
  std::vector<std::vector<float>> off = GreedyAll(0, 1000);
  for (int L : {1, 7, 16}) {
    InitRing(L);
    std::vector<std::vector<float>> on = GreedyAll(L, 1000);
    for (size_t p = 0; p < on.size(); ++p) {
      ASSERT_EQ(on[p].size(), off[p].size());
      const float scale = MaxAbs(off[p].data(), off[p].size());
      const float diff = MaxAbsDiff(on[p].data(), off[p].data(), on[p].size());
      EXPECT_LE(diff, 1e-5f * scale)
          << GetParam() << " prompt " << p << " L=" << L;
      RecordProperty(
          ("on_off_rel_err_" + std::to_string(p) + "_L" + std::to_string(L))
              .c_str(),
          absl::StrFormat("%.3g", diff / scale));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, GoldenTest,
                         ::testing::Values("tiny_qwen3_next", "tiny_qwen3_5",
                                           "tiny_qwen3_5_moe"));

}  // namespace
}  // namespace rollout::model
