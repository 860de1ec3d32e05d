#include "model/dtype.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace rollout::model {
namespace {

TEST(DtypeTest, NamesAndSizes) {
  EXPECT_EQ(*DtypeFromName("BF16"), Dtype::kBF16);
  EXPECT_EQ(*DtypeFromName("F8_E4M3"), Dtype::kF8E4M3);
  EXPECT_FALSE(DtypeFromName("bf16").ok());
  EXPECT_FALSE(DtypeFromName("").ok());
  EXPECT_EQ(DtypeSize(Dtype::kF64), 8);
  EXPECT_EQ(DtypeSize(Dtype::kBF16), 2);
  EXPECT_STREQ(DtypeName(Dtype::kI32), "I32");
  EXPECT_TRUE(IsFloatConvertible(Dtype::kF16));
  EXPECT_FALSE(IsFloatConvertible(Dtype::kI32));
}

TEST(DtypeTest, Bf16RoundTripAndRounding) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 3.140625f, 0x1p-100f, 65280.0f}) {
    EXPECT_EQ(Bf16ToFloat(FloatToBf16(f)), f) << f;  // exactly representable
  }
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(Bf16ToFloat(FloatToBf16(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(Bf16ToFloat(FloatToBf16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(NAN))));
  EXPECT_TRUE(std::isinf(Bf16ToFloat(FloatToBf16(INFINITY))));
}

TEST(DtypeTest, Fp16ExhaustiveRoundTrip) {
  // Every finite half converts to fp32 and back to the same bits.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = Fp16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToFp16(f), h) << h;
  }
  EXPECT_EQ(Fp16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(Fp16ToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(FloatToFp16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(FloatToFp16(65519.0f), 0x7bff);
  EXPECT_TRUE(std::isnan(Fp16ToFloat(FloatToFp16(NAN))));
}

}  // namespace
}  // namespace rollout::model
