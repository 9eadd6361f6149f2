// The order in which Kiln combines a contiguous row (row_reduce.h): 16
// lanes and a fixed tree, then the tail in order. A RowReducer takes the
// row in pieces, each but the last a multiple of 16 elements long, and
// gives the bits one whole-row pass gives. Internal to exec/kernels.
#ifndef KILN_EXEC_KERNELS_ROW_REDUCER_H_
#define KILN_EXEC_KERNELS_ROW_REDUCER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

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

// lanes[j] = op(lanes[j], x[g * 16 + j]) for `groups` groups of 16.
template <typename Op, typename T>
KILN_VECTORIZED void CombineLanes(T* lanes, const T* x, int64_t groups) {
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
        lane_end_(length >= 2 * kReduceLanes
                      ? length - length % kReduceLanes
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
    for (int64_t width = kReduceLanes / 2; width > 0; width /= 2) {
      for (int64_t j = 0; j < width; ++j) {
        lanes_[j] = Op::Apply(lanes_[j], lanes_[j + width], 0);
      }
    }
    acc_ = Op::Apply(acc_, lanes_[0], 0);
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
