// The order in which Kiln combines a contiguous row (row_reduce.h): 16
// lanes and a fixed tree, then the tail in order. A RowReducer takes the
// row in pieces, each but the last a multiple of 16 elements long, and
// gives the bits one whole-row pass gives. Internal to exec/kernels.
#ifndef KILN_EXEC_KERNELS_ROW_REDUCER_H_
#define KILN_EXEC_KERNELS_ROW_REDUCER_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "exec/kernels/elementwise_ops.h"
#include "exec/kernels/region_call.h"
#include "exec/kernels/vectorize.h"

namespace kiln::exec {

inline constexpr int64_t kReduceLanes = 16;

// Calls fn(Op{}) with the functor of a combiner that has one (add,
// multiply, maximum, minimum, and, or, xor) and returns what fn returns;
// false for the others (generic, replace, keep).
template <typename Fn>
bool WithCombinerOp(Combiner combiner, Fn&& fn) {
  switch (combiner) {
    case Combiner::kAdd:
      return fn(ops::Add{});
    case Combiner::kMultiply:
      return fn(ops::Multiply{});
    case Combiner::kMaximum:
      return fn(ops::Maximum{});
    case Combiner::kMinimum:
      return fn(ops::Minimum{});
    case Combiner::kAnd:
      return fn(ops::And{});
    case Combiner::kOr:
      return fn(ops::Or{});
    case Combiner::kXor:
      return fn(ops::Xor{});
    default:
      return false;
  }
}

// Maximum (kMax) or minimum of floats by compare and select alone. The
// NaN and signed-zero rules of ops::Maximum and ops::Minimum cost a chain
// of dependent masks per group, which bounds the loop by latency; without
// NaNs a plain select keeps the same value in every lane, and a lane
// whose result is zero takes the zero those rules prefer (+0 for the
// maximum, -0 for the minimum) afterwards if it met one. A NaN anywhere
// leaves `lanes` as they were and returns false: the caller combines the
// exact way.
template <bool kMax, typename T>
KILN_VECTORIZED bool CombineMinMaxLanes(T* lanes, const T* x, int64_t groups) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr Bits kPreferredZero = kMax ? 0 : Bits{1} << (sizeof(T) * 8 - 1);
  T local[kReduceLanes];
  Bits unordered[kReduceLanes] = {};
  Bits met_preferred_zero[kReduceLanes] = {};
  std::memcpy(local, lanes, sizeof(local));
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t j = 0; j < kReduceLanes; ++j) {
      T v = x[g * kReduceLanes + j];
      Bits bits;
      std::memcpy(&bits, &v, sizeof(bits));
      unordered[j] |= v != v ? ~Bits{0} : 0;
      met_preferred_zero[j] |= bits == kPreferredZero ? ~Bits{0} : 0;
      local[j] = (kMax ? v > local[j] : v < local[j]) ? v : local[j];
    }
  }
  Bits any_unordered = 0;
  for (int64_t j = 0; j < kReduceLanes; ++j) any_unordered |= unordered[j];
  if (any_unordered != 0) return false;
  for (int64_t j = 0; j < kReduceLanes; ++j) {
    if (local[j] == T(0) && met_preferred_zero[j] != 0) {
      std::memcpy(&local[j], &kPreferredZero, sizeof(T));
    }
  }
  std::memcpy(lanes, local, sizeof(local));
  return true;
}

// lanes[j] = op(lanes[j], x[g * 16 + j]) for `groups` groups of 16.
template <typename Op, typename T>
KILN_VECTORIZED void CombineLanes(T* lanes, const T* x, int64_t groups) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    constexpr bool kMax = std::is_same_v<Op, ops::Maximum>;
    if constexpr (kMax || std::is_same_v<Op, ops::Minimum>) {
      if (CombineMinMaxLanes<kMax, T>(lanes, x, groups)) return;
    }
  }
  T local[kReduceLanes];
  std::memcpy(local, lanes, sizeof(local));
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t j = 0; j < kReduceLanes; ++j) {
      local[j] = Op::Apply(local[j], x[g * kReduceLanes + j], 0);
    }
  }
  std::memcpy(lanes, local, sizeof(local));
}

template <typename Op, typename T>
class RowReducer {
 public:
  // A row of `length` elements, combined into `init`.
  RowReducer(T init, int64_t length)
      : acc_(init),
        length_(length),
        lane_end_(length >= 2 * kReduceLanes ? length - length % kReduceLanes
                                             : 0) {}

  // The next `n` elements of the row.
  void Feed(const T* x, int64_t n) {
    int64_t i = 0;
    if (position_ < lane_end_) {
      if (position_ == 0) {
        std::memcpy(lanes_, x, sizeof(lanes_));
        i = kReduceLanes;
      }
      int64_t lane_elements = std::min(n, lane_end_ - position_) - i;
      CombineLanes<Op, T>(lanes_, x + i, lane_elements / kReduceLanes);
      i += lane_elements;
      if (position_ + i == lane_end_) FoldLanes();
    }
    for (; i < n; ++i) acc_ = Op::Apply(acc_, x[i], 0);
    position_ += n;
  }

  T Finish() const { return acc_; }

 private:
  void FoldLanes() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      constexpr bool kMax = std::is_same_v<Op, ops::Maximum>;
      if constexpr (kMax || std::is_same_v<Op, ops::Minimum>) {
        // Without NaNs the tree's value is the lanes' extreme, whatever
        // the order, with the zero the rules prefer if a lane holds it.
        if (FoldMinMaxLanes<kMax>()) return;
      }
    }
    for (int64_t width = kReduceLanes / 2; width > 0; width /= 2) {
      for (int64_t j = 0; j < width; ++j) {
        lanes_[j] = Op::Apply(lanes_[j], lanes_[j + width], 0);
      }
    }
    acc_ = Op::Apply(acc_, lanes_[0], 0);
  }

  template <bool kMax>
  bool FoldMinMaxLanes() {
    T extreme = lanes_[0];
    bool preferred_zero = false;
    for (int64_t j = 0; j < kReduceLanes; ++j) {
      T v = lanes_[j];
      if (v != v) return false;
      extreme = (kMax ? v > extreme : v < extreme) ? v : extreme;
      preferred_zero |= v == T(0) && std::signbit(v) != kMax;
    }
    if (extreme == T(0) && preferred_zero) extreme = kMax ? T(0) : -T(0);
    acc_ = Op::Apply(acc_, extreme, 0);
    return true;
  }

  T acc_;
  T lanes_[kReduceLanes];
  int64_t length_;
  int64_t lane_end_;
  int64_t position_ = 0;
};

// One whole row.
template <typename Op, typename T>
T ReduceRowInLanes(T acc, const T* x, int64_t n) {
  RowReducer<Op, T> reducer(acc, n);
  reducer.Feed(x, n);
  return reducer.Finish();
}

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_ROW_REDUCER_H_
