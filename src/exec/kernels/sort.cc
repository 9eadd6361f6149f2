#include "exec/kernels/sort.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "exec/kernels/element.h"
#include "exec/kernels/region_call.h"
#include "exec/parallel.h"

namespace kiln::exec {
namespace {

// Rows along `dimension`: calls fn(base offset) for each row, whose
// elements are at base + i * stride.
template <typename Fn>
void ForEachRow(const std::vector<int64_t>& dims, int64_t dimension, Fn&& fn) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> outer;
  std::vector<int64_t> outer_strides;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (d == dimension) continue;
    outer.push_back(dims[d]);
    outer_strides.push_back(strides[d]);
  }
  int64_t count = NumElements(outer);
  std::vector<int64_t> index(outer.size(), 0);
  int64_t base = 0;
  for (int64_t r = 0; r < count; ++r) {
    fn(base);
    for (int64_t d = static_cast<int64_t>(outer.size()) - 1; d >= 0; --d) {
      if (++index[d] < outer[d]) {
        base += outer_strides[d];
        break;
      }
      index[d] = 0;
      base -= outer_strides[d] * (outer[d] - 1);
    }
  }
}

// A key for float total order (-NaN < -inf < ... < +inf < +NaN).
template <typename T>
auto TotalKey(T value) {
  using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  Bits bits;
  std::memcpy(&bits, &value, sizeof(T));
  using U = std::make_unsigned_t<Bits>;
  return bits < 0 ? static_cast<Bits>(~static_cast<U>(bits) |
                                      (U{1} << (sizeof(T) * 8 - 1)))
                  : bits;
}

// -0 as +0 and any NaN as the positive quiet NaN.
template <typename T>
T Canonical(T value) {
  if (value != value) return std::numeric_limits<T>::quiet_NaN();
  return value == T(0) ? T(0) : value;
}

template <typename T>
bool Less(const T& a, const T& b, CompareDirection direction, bool total,
          bool canonical = false) {
  if constexpr (kIsFloat<T>) {
    if (total) {
      auto ka = canonical ? TotalKey(Canonical(a)) : TotalKey(a);
      auto kb = canonical ? TotalKey(Canonical(b)) : TotalKey(b);
      return direction == CompareDirection::kLT ? ka < kb : ka > kb;
    }
  }
  if constexpr (kIsComplex<T>) {
    auto ka = std::make_pair(a.real(), a.imag());
    auto kb = std::make_pair(b.real(), b.imag());
    return direction == CompareDirection::kLT ? ka < kb : ka > kb;
  } else {
    return direction == CompareDirection::kLT ? a < b : a > b;
  }
}

class SortKernel : public Kernel {
 public:
  SortKernel(SortParams p, std::unique_ptr<Region> comparator)
      : p_(std::move(p)) {
    if (comparator)
      comparator_ = std::make_unique<ScalarRegion>(std::move(comparator));
    stride_ = RowMajorStrides(p_.inputs[0].dims).empty()
                  ? 1
                  : RowMajorStrides(p_.inputs[0].dims)[p_.dimension];
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    size_t n = p_.inputs.size();
    const ArrayShape& shape = p_.inputs[0];
    int64_t length = shape.rank() == 0 ? 1 : shape.dims[p_.dimension];
    std::vector<int64_t> order(length);
    std::vector<const std::byte*> args(2 * n);
    Status status;
    ForEachRow(shape.dims, p_.dimension, [&](int64_t base) {
      if (!status.ok()) return;
      std::iota(order.begin(), order.end(), 0);
      if (p_.known) {
        SortKnown(ctx, step, base, order);
      } else {
        auto less = [&](int64_t a, int64_t b) {
          if (!status.ok()) return false;
          for (size_t i = 0; i < n; ++i) {
            const std::byte* data = ctx.slot(step.inputs[i]);
            int64_t bytes = p_.inputs[i].element_bytes();
            args[2 * i] = data + (base + a * stride_) * bytes;
            args[2 * i + 1] = data + (base + b * stride_) * bytes;
          }
          status = comparator_->Call(ctx, args.data());
          if (!status.ok()) return false;
          return *reinterpret_cast<const uint8_t*>(
                     comparator_->Result(ctx, 0)) != 0;
        };
        std::stable_sort(order.begin(), order.end(), less);
      }
      for (size_t i = 0; i < n; ++i) {
        const std::byte* in = ctx.slot(step.inputs[i]);
        std::byte* out = ctx.slot(step.outputs[i]);
        int64_t bytes = p_.inputs[i].element_bytes();
        for (int64_t j = 0; j < length; ++j) {
          std::memcpy(out + (base + j * stride_) * bytes,
                      in + (base + order[j] * stride_) * bytes, bytes);
        }
      }
    });
    return status;
  }

 private:
  void SortKnown(RunContext& ctx, const Step& step, int64_t base,
                 std::vector<int64_t>& order) const {
    const KnownComparator& c = p_.comparator;
    const std::byte* data = ctx.slot(step.inputs[c.operand]);
    bool total = c.type == CompareType::kTotalOrder;
    DispatchNative(p_.inputs[c.operand].type, [&](auto tag) {
      using T = decltype(tag);
      const T* keys = reinterpret_cast<const T*>(data);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return Less(keys[base + a * stride_], keys[base + b * stride_],
                    c.direction, total, c.canonical);
      });
    });
  }

  SortParams p_;
  std::unique_ptr<ScalarRegion> comparator_;
  int64_t stride_ = 1;

  friend bool kiln::exec::SortsByKnownComparator(const Kernel& kernel);
};

class TopKKernel : public Kernel {
 public:
  TopKKernel(ArrayShape operand, int64_t k, ElementType index_type)
      : operand_(std::move(operand)), k_(k), index_type_(index_type) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const std::byte* in = ctx.slot(step.inputs[0]);
    std::byte* values = ctx.slot(step.outputs[0]);
    std::byte* indices = ctx.slot(step.outputs[1]);
    const int64_t length = operand_.rank() == 0 ? 1 : operand_.dims.back();
    const int64_t rows = length == 0 ? 0 : operand_.num_elements() / length;
    const int64_t bytes = operand_.element_bytes();
    const ElementType type = operand_.type;
    // Larger first, ties in index order: what a stable sort by "larger"
    // puts first. Floats in total order (as XLA's TopK compares): +NaN
    // first. Each row's keys are computed once, as int64 in the same order
    // (floats by their total-order key in double, 64-bit unsigned integers
    // with the sign bit flipped), then one pass keeps the best k so far,
    // best first: an element joins only if its key is larger than the
    // k-th's, so an equal key, which comes later, stays behind.
    auto select_rows = [&](int64_t first, int64_t last) {
      std::vector<int64_t> keys(length);
      std::vector<int64_t> top(k_);
      for (int64_t r = first; r < last; ++r) {
        const int64_t base = r * length;
        if (type == ElementType::kF32) {
          // JAX's usual case, read directly and keyed without a branch
          // (TotalKey's, on random signs, mispredicted half the time): the
          // bits with all but the sign flipped where the sign is set, the
          // same order as TotalKey of the value in double.
          const auto* row = reinterpret_cast<const int32_t*>(in) + base;
          for (int64_t i = 0; i < length; ++i) {
            const int32_t bits = row[i];
            keys[i] = bits ^ ((bits >> 31) & 0x7fffffff);
          }
        } else if (ir::IsFloat(type)) {
          for (int64_t i = 0; i < length; ++i) {
            keys[i] = TotalKey(LoadDouble(type, in, base + i));
          }
        } else if (type == ElementType::kUI64) {
          for (int64_t i = 0; i < length; ++i) {
            keys[i] = static_cast<int64_t>(
                static_cast<uint64_t>(LoadInt(type, in, base + i)) ^
                (uint64_t{1} << 63));
          }
        } else {
          for (int64_t i = 0; i < length; ++i) {
            keys[i] = LoadInt(type, in, base + i);
          }
        }
        int64_t kept = 0;
        for (int64_t i = 0; i < length && k_ > 0; ++i) {
          const int64_t key = keys[i];
          int64_t position;
          if (kept == k_) {
            if (key <= keys[top[k_ - 1]]) continue;
            position = k_ - 1;
          } else {
            position = kept++;
          }
          while (position > 0 && key > keys[top[position - 1]]) {
            top[position] = top[position - 1];
            --position;
          }
          top[position] = i;
        }
        for (int64_t j = 0; j < k_; ++j) {
          std::memcpy(values + (r * k_ + j) * bytes,
                      in + (base + top[j]) * bytes, bytes);
          StoreInt(index_type_, indices, r * k_ + j, top[j]);
        }
      }
    };
    ParallelFor(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, length)),
                select_rows);
    return OkStatus();
  }

 private:
  ArrayShape operand_;
  int64_t k_;
  ElementType index_type_;
};

}  // namespace

bool SortsByKnownComparator(const Kernel& kernel) {
  const auto* sort = dynamic_cast<const SortKernel*>(&kernel);
  return sort != nullptr && sort->p_.known;
}

std::unique_ptr<Kernel> MakeSortKernel(SortParams params,
                                       std::unique_ptr<Region> comparator) {
  return std::make_unique<SortKernel>(std::move(params), std::move(comparator));
}

std::unique_ptr<Kernel> MakeTopKKernel(ArrayShape operand, int64_t k,
                                       ElementType index_type) {
  return std::make_unique<TopKKernel>(std::move(operand), k, index_type);
}

}  // namespace kiln::exec
