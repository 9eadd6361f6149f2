#include "exec/kernels/region_call.h"

#include <cstring>

#include "exec/kernels/elementwise_ops.h"
#include "exec/kernels/row_reducer.h"
#include "exec/kernels/vectorize.h"

namespace kiln::exec {
namespace {

// f32 maximum, minimum and add at the widest vectors the CPU has: pooling
// combines one row of channels per window position, and at the baseline
// vectors these rows took most of a max pool's time. False for other
// combiners.
KILN_VECTORIZED bool CombineF32(Combiner combiner, float* __restrict target,
                                const float* __restrict value, int64_t count) {
  switch (combiner) {
    case Combiner::kMaximum:
      for (int64_t i = 0; i < count; ++i) {
        target[i] = ops::Maximum::Apply(target[i], value[i], 0);
      }
      return true;
    case Combiner::kMinimum:
      for (int64_t i = 0; i < count; ++i) {
        target[i] = ops::Minimum::Apply(target[i], value[i], 0);
      }
      return true;
    case Combiner::kAdd:
      for (int64_t i = 0; i < count; ++i) target[i] = target[i] + value[i];
      return true;
    default:
      return false;
  }
}

template <typename Op, typename T>
bool Apply(std::byte* target, const std::byte* value, int64_t count) {
  if constexpr (requires(T x) { Op::Apply(x, x, 0); }) {
    auto* t = reinterpret_cast<T*>(target);
    auto* v = reinterpret_cast<const T*>(value);
    for (int64_t i = 0; i < count; ++i) t[i] = Op::Apply(t[i], v[i], 0);
    return true;
  } else {
    return false;
  }
}

// Apply at scattered element offsets, in order.
template <typename Op, typename T>
bool ApplyAt(std::byte* target, const std::byte* value,
             const int64_t* target_offsets, const int64_t* value_offsets,
             int64_t count) {
  if constexpr (requires(T x) { Op::Apply(x, x, 0); }) {
    auto* t = reinterpret_cast<T*>(target);
    auto* v = reinterpret_cast<const T*>(value);
    for (int64_t i = 0; i < count; ++i) {
      T& slot = t[target_offsets[i]];
      slot = Op::Apply(slot, v[value_offsets[i]], 0);
    }
    return true;
  } else {
    return false;
  }
}

// The same at scattered offsets (ApplyCombinerAt moves kReplace's values).
template <typename T>
bool ApplyTypedAt(Combiner combiner, std::byte* target, const std::byte* value,
                  const int64_t* target_offsets, const int64_t* value_offsets,
                  int64_t count) {
  return WithCombinerOp(combiner, [&](auto op) {
    return ApplyAt<decltype(op), T>(target, value, target_offsets,
                                    value_offsets, count);
  });
}

// The combiners with an op (ApplyCombinerRows moves kReplace's and
// kKeep's values itself).
template <typename T>
bool ApplyTyped(Combiner combiner, std::byte* target, const std::byte* value,
                int64_t count) {
  return WithCombinerOp(combiner, [&](auto op) {
    return Apply<decltype(op), T>(target, value, count);
  });
}

}  // namespace

bool ApplyCombiner(Combiner combiner, ElementType type, std::byte* target,
                   const std::byte* value, int64_t count) {
  return ApplyCombinerRows(combiner, type, target, value, 1, count, 0);
}

bool ApplyCombinerRows(Combiner combiner, ElementType type, std::byte* target,
                       const std::byte* value, int64_t rows, int64_t count,
                       int64_t value_stride) {
  const int64_t bytes = ir::StorageBytes(type);
  // `apply(target_row, value_row)` on every row; false when it declines
  // (which it does on the first row or not at all: the combiner and type
  // are the same for every row).
  auto each_row = [&](auto&& apply) {
    for (int64_t r = 0; r < rows; ++r) {
      if (!apply(target + r * count * bytes, value + r * value_stride * bytes))
        return false;
    }
    return true;
  };
  if (combiner == Combiner::kKeep) return true;
  if (combiner == Combiner::kReplace) {
    return each_row([&](std::byte* t, const std::byte* v) {
      if (count > 0) std::memmove(t, v, count * bytes);
      return true;
    });
  }
  if (ir::BitWidth(type) < 8 && !ir::IsBool(type) &&
      combiner != Combiner::kMaximum && combiner != Combiner::kMinimum) {
    return false;  // sub-byte integers need wrapping; only moves are exact
  }
  if (type == ElementType::kF32 &&
      each_row([&](std::byte* t, const std::byte* v) {
        return CombineF32(combiner, reinterpret_cast<float*>(t),
                          reinterpret_cast<const float*>(v), count);
      })) {
    return true;
  }
  bool handled = false;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    handled = each_row([&](std::byte* t, const std::byte* v) {
      return ApplyTyped<T>(combiner, t, v, count);
    });
  });
  return handled;
}

bool ApplyCombinerAt(Combiner combiner, ElementType type, std::byte* target,
                     const std::byte* value, const int64_t* target_offsets,
                     const int64_t* value_offsets, int64_t count) {
  if (combiner == Combiner::kKeep) return true;
  if (combiner == Combiner::kReplace) {  // any type: a move of its bytes
    const int64_t bytes = ir::StorageBytes(type);
    for (int64_t i = 0; i < count; ++i) {
      std::memcpy(target + target_offsets[i] * bytes,
                  value + value_offsets[i] * bytes, bytes);
    }
    return true;
  }
  // As ApplyCombinerRows: sub-byte integers only take a max or min.
  if (ir::BitWidth(type) < 8 && !ir::IsBool(type) &&
      combiner != Combiner::kMaximum && combiner != Combiner::kMinimum) {
    return false;
  }
  bool handled = false;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    handled = ApplyTypedAt<T>(combiner, target, value, target_offsets,
                              value_offsets, count);
  });
  return handled;
}

bool HasFastCombiner(Combiner combiner, ElementType type) {
  if (combiner == Combiner::kGeneric) return false;
  alignas(16) std::byte a[16] = {}, b[16] = {};
  return ApplyCombiner(combiner, type, a, b, 0);
}

}  // namespace kiln::exec
