#include "model/safetensors.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/safetensors_writer.h"

namespace rollout::model {
namespace {

// A file: 8-byte length, header text, then `data_bytes` bytes of data.
std::vector<uint8_t> RawFile(const std::string& header, size_t data_bytes,
                             uint64_t claimed_length = UINT64_MAX) {
  const uint64_t n =
      claimed_length == UINT64_MAX ? header.size() : claimed_length;
  std::vector<uint8_t> f(8);
  for (int i = 0; i < 8; ++i) f[i] = static_cast<uint8_t>(n >> (8 * i));
  f.insert(f.end(), header.begin(), header.end());
  f.resize(f.size() + data_bytes, 0x5a);
  return f;
}

void ExpectError(const std::vector<uint8_t>& file, const std::string& needle) {
  absl::StatusOr<SafetensorsHeader> h = ParseSafetensorsHeader(file);
  ASSERT_FALSE(h.ok()) << "expected an error mentioning '" << needle << "'";
  EXPECT_NE(h.status().message().find(needle), absl::string_view::npos)
      << h.status();
}

TEST(SafetensorsHeaderTest, ParsesValidHeader) {
  const std::string header =
      R"({"b": {"dtype": "BF16", "shape": [3, 5], "data_offsets": [12, 42]},
          "a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
          "s": {"dtype": "I32", "shape": [], "data_offsets": [42, 46]},
          "e": {"dtype": "F32", "shape": [0, 7], "data_offsets": [46, 46]},
          "__metadata__": {"format": "pt"}})";
  absl::StatusOr<SafetensorsHeader> h =
      ParseSafetensorsHeader(RawFile(header, 46));
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->tensors.size(), 4u);
  EXPECT_EQ(h->tensors[0].name, "a");  // sorted by name
  const TensorInfo* b = h->Find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, Dtype::kBF16);
  EXPECT_EQ(b->numel(), 15);
  EXPECT_EQ(b->ShapeString(), "[3, 5]");
  EXPECT_EQ(h->Find("s")->numel(), 1);
  EXPECT_EQ(h->Find("e")->numel(), 0);
  EXPECT_EQ(h->Find("zz"), nullptr);
  EXPECT_EQ(h->metadata.at("format"), "pt");
  EXPECT_EQ(h->data_offset, 8 + static_cast<int64_t>(header.size()));
  EXPECT_EQ(h->data_size, 46);
}

TEST(SafetensorsHeaderTest, TruncatedAndBadLengths) {
  ExpectError({}, "too short");
  ExpectError({1, 2, 3}, "too short");
  ExpectError(RawFile("{}", 0, 1000), "exceeds the file");
  ExpectError(RawFile("{}", 0, uint64_t{1} << 40), "exceeds the limit");
  ExpectError(RawFile("{}", 0, UINT64_MAX - 1), "exceeds the limit");
  ExpectError(RawFile("[]", 0), "does not start with a JSON object");
  ExpectError(RawFile("", 0), "does not start with a JSON object");
  ExpectError(RawFile("{\"a\": ", 0), "invalid JSON");
}

TEST(SafetensorsHeaderTest, OutOfRangeAndInconsistentOffsets) {
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": [4],
                          "data_offsets": [0, 16]}})",
                      8),
              "reach past the data section");
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": [4],
                          "data_offsets": [16, 0]}})",
                      16),
              "reversed");
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": [4],
                          "data_offsets": [0, 12]}})",
                      16),
              "needs 16 bytes");
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": [4],
                          "data_offsets": [0, -16]}})",
                      16),
              "data_offsets");
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": [4],
                          "data_offsets": [0, 18446744073709551615]}})",
                      16),
              "data_offsets");
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": [4],
                          "data_offsets": [0, 16, 32]}})",
                      32),
              "data_offsets");
  ExpectError(RawFile(R"({"a": {"dtype": "F32", "shape": [4],
                          "data_offsets": [0, 16]},
                          "b": {"dtype": "F32", "shape": [2],
                          "data_offsets": [8, 16]}})",
                      16),
              "overlap");
}

TEST(SafetensorsHeaderTest, BadShapesAndDtypes) {
  ExpectError(RawFile(R"({"w": {"dtype": "Q4", "shape": [1],
                          "data_offsets": [0, 1]}})",
                      1),
              "unknown dtype 'Q4'");
  ExpectError(RawFile(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", 4),
              "'dtype'");
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": [-1],
                          "data_offsets": [0, 4]}})",
                      4),
              "non-negative integer");
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": [1.5],
                          "data_offsets": [0, 4]}})",
                      4),
              "non-negative integer");
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": "4",
                          "data_offsets": [0, 16]}})",
                      16),
              "'shape'");
  // 2^32 * 2^32 elements overflows int64 bytes.
  ExpectError(RawFile(R"({"w": {"dtype": "F32",
                          "shape": [4294967296, 4294967296],
                          "data_offsets": [0, 16]}})",
                      16),
              "overflows");
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": [1,1,1,1,1,1,1,1,1],
                          "data_offsets": [0, 4]}})",
                      4),
              "rank 9");
  ExpectError(RawFile(R"({"w": 3})", 0), "not an object");
  ExpectError(RawFile(R"({"__metadata__": {"a": 1}})", 0), "not a string");
  ExpectError(RawFile(R"({"": {"dtype": "F32", "shape": [1],
                          "data_offsets": [0, 4]}})",
                      4),
              "empty or too long");
  ExpectError(RawFile(R"({"w": {"dtype": "F32", "shape": [1],
                          "data_offsets": [0, 4]},
                          "w": {"dtype": "F32", "shape": [1],
                          "data_offsets": [4, 8]}})",
                      8),
              "appears twice");
  ExpectError(RawFile(std::string(200, '{'), 0), "nested deeper");
}

// Random corruption of a valid file never crashes and is either rejected or
// still describes tensors inside the file.
TEST(SafetensorsHeaderTest, SurvivesRandomCorruption) {
  std::vector<uint8_t> base = RawFile(
      R"({"a": {"dtype": "BF16", "shape": [3, 5], "data_offsets": [0, 30]},
          "b": {"dtype": "F32", "shape": [2], "data_offsets": [30, 38]},
          "__metadata__": {"format": "pt"}})",
      38);
  std::mt19937 rng(12345);
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> f = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      switch (rng() % 3) {
        case 0:  // flip a byte
          f[rng() % f.size()] = static_cast<uint8_t>(rng());
          break;
        case 1:  // truncate
          f.resize(rng() % (f.size() + 1));
          break;
        default:  // insert a structural character
          if (!f.empty()) {
            const char* chars = "{}[]\",:0-9eE ";
            f.insert(f.begin() + rng() % f.size(),
                     static_cast<uint8_t>(chars[rng() % 14]));
          }
      }
      if (f.empty()) break;
    }
    absl::StatusOr<SafetensorsHeader> h = ParseSafetensorsHeader(f);
    if (!h.ok()) continue;
    ++accepted;
    for (const TensorInfo& t : h->tensors) {
      ASSERT_LE(t.end, h->data_size);
      ASSERT_LE(h->data_offset + h->data_size, static_cast<int64_t>(f.size()));
      ASSERT_EQ(t.nbytes(), t.numel() * DtypeSize(t.dtype));
    }
  }
  EXPECT_LT(accepted, 20000);
}

class SafetensorsFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) {
    return std::string(::testing::TempDir()) + "/" + name;
  }
};

TEST_F(SafetensorsFileTest, WriteOpenAndConvert) {
  const std::vector<float> a = {1.0f, -2.0f, 0.5f, 3.25f, 1e-3f, 7.0f};
  const std::vector<int32_t> ids = {5, -1, 1030};
  const std::string path = Path("wr.safetensors");
  ASSERT_TRUE(WriteSafetensors(path,
                               {MakeBf16Tensor("x.bf16", {2, 3}, a),
                                MakeF32Tensor("x.f32", {6}, a),
                                MakeI32Tensor("ids", {3}, ids)},
                               {{"format", "pt"}})
                  .ok());
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> f =
      SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->header().data_offset % 8, 0);
  EXPECT_EQ((*f)->header().metadata.at("format"), "pt");
  for (const char* name : {"x.bf16", "x.f32"}) {
    const TensorInfo* t = (*f)->header().Find(name);
    ASSERT_NE(t, nullptr);
    std::vector<float> out(t->numel());
    ASSERT_TRUE(ToFloat32(t->dtype, (*f)->Bytes(*t), absl::MakeSpan(out)).ok());
    for (size_t i = 0; i < a.size(); ++i) {
      const float want =
          t->dtype == Dtype::kF32 ? a[i] : Bf16ToFloat(FloatToBf16(a[i]));
      EXPECT_EQ(out[i], want) << name << i;
    }
  }
  const TensorInfo* t = (*f)->header().Find("ids");
  std::vector<float> out(3);
  EXPECT_FALSE(ToFloat32(t->dtype, (*f)->Bytes(*t), absl::MakeSpan(out)).ok());
  EXPECT_EQ(std::memcmp((*f)->Bytes(*t).data(), ids.data(), 12), 0);
}

TEST_F(SafetensorsFileTest, OpenErrorsNameThePath) {
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> f =
      SafetensorsFile::Open(Path("missing.safetensors"));
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(absl::IsNotFound(f.status()));
  EXPECT_NE(f.status().message().find("missing.safetensors"),
            absl::string_view::npos);

  // A truncated copy of a valid file.
  const std::string path = Path("trunc.safetensors");
  const std::vector<float> a(100, 1.0f);
  ASSERT_TRUE(WriteSafetensors(path, {MakeF32Tensor("w", {100}, a)}).ok());
  ASSERT_EQ(::truncate(path.c_str(), 300), 0);
  f = SafetensorsFile::Open(path);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("truncated"), absl::string_view::npos)
      << f.status();
  EXPECT_NE(f.status().message().find("'w'"), absl::string_view::npos);

  // An empty file.
  const std::string empty = Path("empty.safetensors");
  std::FILE* fp = std::fopen(empty.c_str(), "wb");
  std::fclose(fp);
  f = SafetensorsFile::Open(empty);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("too short"), absl::string_view::npos);
}

}  // namespace
}  // namespace rollout::model
