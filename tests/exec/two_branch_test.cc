// The split form of erf and erfc (exec/kernels/two_branch.h) against their
// select form, the function each element would get from the plain loop:
// the two must agree bit for bit, in and out of place, at every length
// (the vector tails, the chunk boundaries) and for every mix of branches
// within a vector.
#include "exec/kernels/two_branch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "exec/kernels/elementwise_ops.h"

namespace kiln::exec {
namespace {

// Inputs that take both branches in every proportion: the edges (the
// branch bound, its neighbours, NaN, infinities, zeros, subnormals), a
// sweep of every 4099th bit pattern, and normal samples, shuffled so that
// most vectors mix the branches.
std::vector<float> Inputs() {
  const float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> inputs = {
      1.0f,
      -1.0f,
      std::nextafter(1.0f, 0.0f),
      std::nextafter(-1.0f, 0.0f),
      std::nextafter(1.0f, 2.0f),
      std::nextafter(-1.0f, -2.0f),
      0.0f,
      -0.0f,
      kInf,
      -kInf,
      std::numeric_limits<float>::quiet_NaN(),
      -std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::denorm_min(),
      4.0f,
      10.05f,
      10.1f,
      -10.1f,
      std::numeric_limits<float>::max(),
  };
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4099) {
    inputs.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  }
  std::mt19937 random(7);
  std::normal_distribution<float> normal(-0.2f, 1.1f);
  for (int i = 0; i < 100000; ++i) inputs.push_back(normal(random));
  std::shuffle(inputs.begin() + 18, inputs.end(), random);
  return inputs;
}

bool SameBits(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Runs the split form of Op over `inputs` at lengths that end in every
// lane and on both sides of a chunk, out of place and in place, and counts
// the elements whose bits differ from Op::Apply's.
template <typename Op>
int64_t Mismatches(const std::vector<float>& inputs, float* first_input) {
  int64_t mismatches = 0;
  auto check = [&](const float* in, const float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (!SameBits(out[i], Op::Apply(in[i], 0))) {
        if (mismatches++ == 0) *first_input = in[i];
      }
    }
  };
  std::vector<int64_t> lengths;
  for (int64_t n = 0; n <= 40; ++n) lengths.push_back(n);
  for (int64_t n : {kTwoBranchChunk - 1, kTwoBranchChunk, kTwoBranchChunk + 1,
                    3 * kTwoBranchChunk + 17}) {
    lengths.push_back(n);
  }
  lengths.push_back(static_cast<int64_t>(inputs.size()));
  for (int64_t n : lengths) {
    // Starting one element in, so that loads are not all aligned.
    const float* in = inputs.data() + (n < 100 ? 1 : 0);
    std::vector<float> out(n + 1, -7.0f);
    RunTwoBranchSplit<typename Op::Branches>(in, out.data(), n);
    check(in, out.data(), n);
    EXPECT_EQ(out[n], -7.0f) << "wrote past the end at length " << n;
    std::vector<float> in_place(in, in + n);
    RunTwoBranchSplit<typename Op::Branches>(in_place.data(), in_place.data(),
                                             n);
    check(in, in_place.data(), n);
  }
  return mismatches;
}

class TwoBranchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TwoBranchSplitAvailable()) {
      GTEST_SKIP() << "this CPU has no AVX-512F, so kernels never take the "
                      "split form here";
    }
  }
};

TEST_F(TwoBranchTest, ErfSplitIsTheSelectFormBitForBit) {
  float first = 0;
  EXPECT_EQ(Mismatches<ops::Erf>(Inputs(), &first), 0) << "first at " << first;
}

TEST_F(TwoBranchTest, ErfcSplitIsTheSelectFormBitForBit) {
  float first = 0;
  EXPECT_EQ(Mismatches<ops::Erfc>(Inputs(), &first), 0) << "first at " << first;
}

TEST_F(TwoBranchTest, ErfcSingleSplitIsTheSelectFormBitForBit) {
  float first = 0;
  EXPECT_EQ(Mismatches<ops::ErfcSingle>(Inputs(), &first), 0)
      << "first at " << first;
}

}  // namespace
}  // namespace kiln::exec
