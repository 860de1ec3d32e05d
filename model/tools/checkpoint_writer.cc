#include "model/tools/checkpoint_writer.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "model/safetensors_writer.h"
#include "nlohmann/json.hpp"

namespace rollout::model::tools {
namespace {

using Shape = std::vector<int64_t>;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t HashName(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// How the values of one logical tensor are drawn.
enum class Kind {
  kSymmetric,  // uniform, mean 0, std `scale`
  kAroundOne,  // 1 + uniform with std `scale` (plain norm weights)
  kALog,       // log(U[1, 8))
};

struct Stream {
  uint64_t key = 0;
  Kind kind = Kind::kSymmetric;
  float scale = 0.0f;

  float At(int64_t i) const {
    const uint64_t r = SplitMix64(key ^ SplitMix64(static_cast<uint64_t>(i)));
    const float u01 = static_cast<float>(r >> 40) * (1.0f / 16777216.0f);
    switch (kind) {
      case Kind::kALog:
        return std::log(1.0f + 7.0f * u01);
      case Kind::kAroundOne:
        return 1.0f + scale * 1.7320508f * (2.0f * u01 - 1.0f);
      case Kind::kSymmetric:
      default:
        return scale * 1.7320508f * (2.0f * u01 - 1.0f);
    }
  }
};

// Fills out[0, n) with elements [begin, begin + n) of a stored tensor.
using Filler = std::function<void(int64_t begin, int64_t n, float* out)>;

struct PlannedTensor {
  std::string name;
  Shape shape;
  Filler fill;
};

class Planner {
 public:
  Planner(const CheckpointSpec& spec, uint64_t seed) : s_(spec), seed_(seed) {
    prefix_ = (spec.model_type != "qwen3_next" && spec.nested)
                  ? "model.language_model."
                  : "model.";
  }

  std::vector<PlannedTensor> Plan() {
    const int64_t D = s_.hidden_size, V = s_.vocab_size;
    const float embed_scale = 0.35f;
    Plain("model.embed_tokens.weight", {V, D}, Kind::kSymmetric, embed_scale);
    for (int i = 0; i < s_.num_layers; ++i) Layer(i);
    Plain("model.norm.weight", {D}, Kind::kSymmetric, 0.1f);
    if (!s_.tie_word_embeddings) {
      Plain("lm_head.weight", {V, D}, Kind::kSymmetric, embed_scale);
    }
    if (s_.extra_ignored_tensors) {
      Plain("mtp.fc.weight", {D, 2 * D}, Kind::kSymmetric, 0.02f,
            "mtp.fc.weight");
      Plain("model.visual.patch_embed.proj.weight", {32, 3, 2, 4, 4},
            Kind::kSymmetric, 0.02f, "model.visual.patch_embed.proj.weight");
    }
    return std::move(out_);
  }

 private:
  Stream MakeStream(const std::string& canonical, Kind kind, float scale) {
    return {SplitMix64(seed_ ^ HashName(canonical)), kind, scale};
  }

  // Stored name for a canonical "model." / "lm_head." name.
  std::string Stored(const std::string& canonical) const {
    if (canonical.rfind("model.", 0) == 0) {
      return prefix_ + canonical.substr(6);
    }
    return canonical;
  }

  void Plain(const std::string& canonical, Shape shape, Kind kind, float scale,
             const std::string& stored = "") {
    Stream st = MakeStream(canonical, kind, scale);
    out_.push_back({stored.empty() ? Stored(canonical) : stored,
                    std::move(shape), [st](int64_t b, int64_t n, float* o) {
                      for (int64_t i = 0; i < n; ++i) o[i] = st.At(b + i);
                    }});
  }

  void Matrix(const std::string& canonical, int64_t rows, int64_t cols) {
    Plain(canonical, {rows, cols}, Kind::kSymmetric,
          1.0f / std::sqrt(static_cast<float>(cols)));
  }

  void Mlp(const std::string& p, int64_t D, int64_t I) {
    Matrix(p + "gate_proj.weight", I, D);
    Matrix(p + "up_proj.weight", I, D);
    Matrix(p + "down_proj.weight", D, I);
  }

  void Gdn(const std::string& p) {
    const int64_t D = s_.hidden_size, H = s_.linear_num_key_heads,
                  HV = s_.linear_num_value_heads, K = s_.linear_key_head_dim,
                  Vd = s_.linear_value_head_dim, r = HV / H;
    const int64_t C = 2 * H * K + HV * Vd, VD = HV * Vd;
    const float in_scale = 1.0f / std::sqrt(static_cast<float>(D));
    if (s_.model_type == "qwen3_next" && !s_.split_gdn_projections) {
      // Grouped per key head g: [q_g | k_g | v_g (r*V) | z_g (r*V)], drawn
      // from the same logical streams as the split form.
      Stream qkv =
          MakeStream(p + "in_proj_qkv.weight", Kind::kSymmetric, in_scale);
      Stream z = MakeStream(p + "in_proj_z.weight", Kind::kSymmetric, in_scale);
      const int64_t group = 2 * K + 2 * r * Vd;
      out_.push_back(
          {Stored(p + "in_proj_qkvz.weight"),
           {H * group, D},
           [=](int64_t b, int64_t n, float* o) {
             for (int64_t i = 0; i < n; ++i) {
               const int64_t row = (b + i) / D, col = (b + i) % D;
               const int64_t g = row / group, j = row % group;
               if (j < K) {
                 o[i] = qkv.At((g * K + j) * D + col);
               } else if (j < 2 * K) {
                 o[i] = qkv.At((H * K + g * K + j - K) * D + col);
               } else if (j < 2 * K + r * Vd) {
                 o[i] = qkv.At((2 * H * K + g * r * Vd + j - 2 * K) * D + col);
               } else {
                 o[i] = z.At((g * r * Vd + j - 2 * K - r * Vd) * D + col);
               }
             }
           }});
      Stream bs =
          MakeStream(p + "in_proj_b.weight", Kind::kSymmetric, in_scale);
      Stream as =
          MakeStream(p + "in_proj_a.weight", Kind::kSymmetric, in_scale);
      out_.push_back({Stored(p + "in_proj_ba.weight"),
                      {2 * HV, D},
                      [=](int64_t b, int64_t n, float* o) {
                        for (int64_t i = 0; i < n; ++i) {
                          const int64_t row = (b + i) / D, col = (b + i) % D;
                          const int64_t g = row / (2 * r), j = row % (2 * r);
                          o[i] = j < r ? bs.At((g * r + j) * D + col)
                                       : as.At((g * r + j - r) * D + col);
                        }
                      }});
    } else {
      Matrix(p + "in_proj_qkv.weight", C, D);
      Matrix(p + "in_proj_z.weight", VD, D);
      Matrix(p + "in_proj_b.weight", HV, D);
      Matrix(p + "in_proj_a.weight", HV, D);
    }
    Plain(p + "conv1d.weight", {C, 1, s_.linear_conv_kernel_dim},
          Kind::kSymmetric, 0.3f);
    Plain(p + "dt_bias", {HV}, Kind::kSymmetric, 0.5f);
    Plain(p + "A_log", {HV}, Kind::kALog, 0.0f);
    Plain(p + "norm.weight", {Vd}, Kind::kAroundOne, 0.1f);
    Matrix(p + "out_proj.weight", D, VD);
  }

  void Attention(const std::string& p) {
    const int64_t D = s_.hidden_size, hd = s_.head_dim;
    Matrix(p + "q_proj.weight", 2 * s_.num_attention_heads * hd, D);
    Matrix(p + "k_proj.weight", s_.num_key_value_heads * hd, D);
    Matrix(p + "v_proj.weight", s_.num_key_value_heads * hd, D);
    Matrix(p + "o_proj.weight", D, s_.num_attention_heads * hd);
    Plain(p + "q_norm.weight", {hd}, Kind::kSymmetric, 0.1f);
    Plain(p + "k_norm.weight", {hd}, Kind::kSymmetric, 0.1f);
  }

  void Moe(const std::string& p) {
    const int64_t D = s_.hidden_size, E = s_.num_experts,
                  I = s_.moe_intermediate_size;
    Matrix(p + "gate.weight", E, D);
    const float up_scale = 1.0f / std::sqrt(static_cast<float>(D));
    const float down_scale = 1.0f / std::sqrt(static_cast<float>(I));
    if (s_.fused_experts) {
      std::vector<Stream> gate, up, down;
      for (int64_t e = 0; e < E; ++e) {
        const std::string ep = absl::StrCat(p, "experts.", e, ".");
        gate.push_back(
            MakeStream(ep + "gate_proj.weight", Kind::kSymmetric, up_scale));
        up.push_back(
            MakeStream(ep + "up_proj.weight", Kind::kSymmetric, up_scale));
        down.push_back(
            MakeStream(ep + "down_proj.weight", Kind::kSymmetric, down_scale));
      }
      out_.push_back({Stored(p + "experts.gate_up_proj"),
                      {E, 2 * I, D},
                      [=](int64_t b, int64_t n, float* o) {
                        for (int64_t i = 0; i < n; ++i) {
                          const int64_t e = (b + i) / (2 * I * D);
                          const int64_t rem = (b + i) % (2 * I * D);
                          o[i] = rem < I * D ? gate[e].At(rem)
                                             : up[e].At(rem - I * D);
                        }
                      }});
      out_.push_back({Stored(p + "experts.down_proj"),
                      {E, D, I},
                      [=](int64_t b, int64_t n, float* o) {
                        for (int64_t i = 0; i < n; ++i) {
                          o[i] = down[(b + i) / (D * I)].At((b + i) % (D * I));
                        }
                      }});
    } else {
      for (int64_t e = 0; e < E; ++e) {
        Mlp(absl::StrCat(p, "experts.", e, "."), D, I);
      }
    }
    Mlp(p + "shared_expert.", D, s_.shared_expert_intermediate_size);
    Matrix(p + "shared_expert_gate.weight", 1, D);
  }

  void Layer(int i) {
    const int64_t D = s_.hidden_size;
    const std::string p = absl::StrCat("model.layers.", i, ".");
    Plain(p + "input_layernorm.weight", {D}, Kind::kSymmetric, 0.1f);
    if (s_.is_full_attention(i)) {
      Attention(p + "self_attn.");
    } else {
      Gdn(p + "linear_attn.");
    }
    if (s_.is_moe_layer(i)) {
      Moe(p + "mlp.");
    } else {
      Mlp(p + "mlp.", D, s_.intermediate_size);
    }
    Plain(p + "post_attention_layernorm.weight", {D}, Kind::kSymmetric, 0.1f);
  }

  const CheckpointSpec& s_;
  uint64_t seed_;
  std::string prefix_;
  std::vector<PlannedTensor> out_;
};

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text << "\n";
  if (!out)
    return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

void Encode(Dtype dtype, const float* in, int64_t n, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == Dtype::kF32) {
      std::memcpy(out + 4 * i, in + i, 4);
    } else {
      const uint16_t h =
          dtype == Dtype::kBF16 ? FloatToBf16(in[i]) : FloatToFp16(in[i]);
      std::memcpy(out + 2 * i, &h, 2);
    }
  }
}

}  // namespace

absl::Status WriteOptions::Validate() const {
  if (dtype != Dtype::kBF16 && dtype != Dtype::kF16 && dtype != Dtype::kF32) {
    return absl::InvalidArgumentError("dtype must be BF16, F16 or F32");
  }
  if (max_shard_bytes < 1) {
    return absl::InvalidArgumentError("max_shard_bytes must be >= 1");
  }
  return absl::OkStatus();
}

std::vector<PlannedTensorInfo> PlanTensors(const CheckpointSpec& spec) {
  std::vector<PlannedTensorInfo> out;
  for (PlannedTensor& t : Planner(spec, 0).Plan()) {
    out.push_back({t.name, t.shape});
  }
  return out;
}

absl::Status WriteRandomCheckpoint(const CheckpointSpec& spec,
                                   const std::string& dir,
                                   const WriteOptions& options) {
  RETURN_IF_ERROR(spec.Validate());
  RETURN_IF_ERROR(options.Validate());
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  RETURN_IF_ERROR(WriteText(dir + "/config.json", ConfigJson(spec)));
  RETURN_IF_ERROR(
      WriteText(dir + "/generation_config.json", GenerationConfigJson(spec)));

  std::vector<PlannedTensor> tensors = Planner(spec, options.seed).Plan();
  const int64_t elem = DtypeSize(options.dtype);
  // Greedy sharding in write order; a tensor never spans shards.
  std::vector<std::vector<int>> shards(1);
  int64_t in_shard = 0, total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const int64_t bytes = Numel(tensors[i].shape) * elem;
    if (in_shard > 0 && in_shard + bytes > options.max_shard_bytes) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(static_cast<int>(i));
    in_shard += bytes;
    total += bytes;
  }
  const int num_shards = static_cast<int>(shards.size());
  nlohmann::json weight_map = nlohmann::json::object();
  WriteProgress progress{0, total, 0, num_shards};
  constexpr int64_t kChunk = 1 << 20;  // elements per generated chunk
  std::vector<float> values(kChunk);
  std::vector<uint8_t> bytes(kChunk * elem);
  for (int s = 0; s < num_shards; ++s) {
    const std::string file =
        num_shards == 1 ? "model.safetensors"
                        : absl::StrFormat("model-%05d-of-%05d.safetensors",
                                          s + 1, num_shards);
    std::vector<TensorSpec> specs;
    for (int i : shards[s]) {
      specs.push_back({tensors[i].name, options.dtype, tensors[i].shape});
      weight_map[tensors[i].name] = file;
    }
    ASSIGN_OR_RETURN(
        std::unique_ptr<SafetensorsWriter> w,
        SafetensorsWriter::Create(dir + "/" + file, specs, {{"format", "pt"}}));
    progress.shard = s + 1;
    for (int i : shards[s]) {
      const int64_t n = Numel(tensors[i].shape);
      for (int64_t b = 0; b < n; b += kChunk) {
        const int64_t c = std::min(kChunk, n - b);
        tensors[i].fill(b, c, values.data());
        Encode(options.dtype, values.data(), c, bytes.data());
        RETURN_IF_ERROR(w->Append(absl::MakeConstSpan(bytes.data(), c * elem)));
        progress.bytes_done += c * elem;
        if (options.progress) options.progress(progress);
      }
    }
    RETURN_IF_ERROR(w->Finish());
  }
  if (num_shards > 1) {
    nlohmann::json index = {{"metadata", {{"total_size", total}}},
                            {"weight_map", weight_map}};
    RETURN_IF_ERROR(
        WriteText(dir + "/model.safetensors.index.json", index.dump(2)));
  }
  return absl::OkStatus();
}

}  // namespace rollout::model::tools
