#include "exec/kernels/arithmetic_chain.h"

#include "exec/kernels/vectorize.h"

namespace kiln::exec {
namespace {

// 8 floats: one AVX2 register (half an AVX-512 one, two SSE ones). Eight
// of them, r's accumulators, fill half of AVX2's sixteen registers and
// leave the rest for the operands. (With 16-float vectors, two AVX2
// registers each, the eight took all sixteen: GCC kept them on the stack
// and every link loaded and stored each of them, about 7x the time.)
using Vector = float __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;
// Elements per pass over the links: eight vectors of r, enough independent
// work to hide each op's latency and to pay for each link's dispatch.
constexpr int64_t kBlock = 8 * kLanes;
// The most links one chain kernel takes (the rest start a new chain).
constexpr int kMaxLinks = 64;

// The same vector at any float's alignment, for loads and stores (as
// expressions: a function returning a vector by value would have a
// different ABI in each of the kernel's versions).
using UnalignedVector = float
    __attribute__((vector_size(32), aligned(alignof(float)), may_alias));
#define KILN_LOAD(p) (*reinterpret_cast<const UnalignedVector*>(p))
#define KILN_STORE(p, v) (*reinterpret_cast<UnalignedVector*>(p) = (v))

// Where a link's v comes from at run time.
enum class Source : uint8_t { kArray, kScalar, kSelf };

// One link, resolved for a range: its code (op, source, side) and operand.
struct Resolved {
  uint8_t code;
  float scalar;
  const float* array;
};

constexpr uint8_t Code(ArithmeticOp op, Source source, bool r_on_left) {
  return static_cast<uint8_t>(static_cast<int>(op) * 6 +
                              static_cast<int>(source) * 2 +
                              (r_on_left ? 0 : 1));
}

// The cases of one op: r = r OP v or v OP r, v from an array, a scalar or r.
#define KILN_CHAIN_CASES(OP_ENUM, OP)                                        \
  case Code(ArithmeticOp::OP_ENUM, Source::kArray, true):                    \
    r0 = r0 OP KILN_LOAD(link.array + i);                                    \
    r1 = r1 OP KILN_LOAD(link.array + i + kLanes);                           \
    r2 = r2 OP KILN_LOAD(link.array + i + 2 * kLanes);                       \
    r3 = r3 OP KILN_LOAD(link.array + i + 3 * kLanes);                       \
    r4 = r4 OP KILN_LOAD(link.array + i + 4 * kLanes);                       \
    r5 = r5 OP KILN_LOAD(link.array + i + 5 * kLanes);                       \
    r6 = r6 OP KILN_LOAD(link.array + i + 6 * kLanes);                       \
    r7 = r7 OP KILN_LOAD(link.array + i + 7 * kLanes);                       \
    break;                                                                   \
  case Code(ArithmeticOp::OP_ENUM, Source::kArray, false):                   \
    r0 = KILN_LOAD(link.array + i) OP r0;                                    \
    r1 = KILN_LOAD(link.array + i + kLanes) OP r1;                           \
    r2 = KILN_LOAD(link.array + i + 2 * kLanes) OP r2;                       \
    r3 = KILN_LOAD(link.array + i + 3 * kLanes) OP r3;                       \
    r4 = KILN_LOAD(link.array + i + 4 * kLanes) OP r4;                       \
    r5 = KILN_LOAD(link.array + i + 5 * kLanes) OP r5;                       \
    r6 = KILN_LOAD(link.array + i + 6 * kLanes) OP r6;                       \
    r7 = KILN_LOAD(link.array + i + 7 * kLanes) OP r7;                       \
    break;                                                                   \
  case Code(ArithmeticOp::OP_ENUM, Source::kScalar, true):                   \
    r0 = r0 OP link.scalar;                                                  \
    r1 = r1 OP link.scalar;                                                  \
    r2 = r2 OP link.scalar;                                                  \
    r3 = r3 OP link.scalar;                                                  \
    r4 = r4 OP link.scalar;                                                  \
    r5 = r5 OP link.scalar;                                                  \
    r6 = r6 OP link.scalar;                                                  \
    r7 = r7 OP link.scalar;                                                  \
    break;                                                                   \
  case Code(ArithmeticOp::OP_ENUM, Source::kScalar, false):                  \
    r0 = link.scalar OP r0;                                                  \
    r1 = link.scalar OP r1;                                                  \
    r2 = link.scalar OP r2;                                                  \
    r3 = link.scalar OP r3;                                                  \
    r4 = link.scalar OP r4;                                                  \
    r5 = link.scalar OP r5;                                                  \
    r6 = link.scalar OP r6;                                                  \
    r7 = link.scalar OP r7;                                                  \
    break;                                                                   \
  case Code(ArithmeticOp::OP_ENUM, Source::kSelf, true):                     \
  case Code(ArithmeticOp::OP_ENUM, Source::kSelf, false):                    \
    r0 = r0 OP r0;                                                           \
    r1 = r1 OP r1;                                                           \
    r2 = r2 OP r2;                                                           \
    r3 = r3 OP r3;                                                           \
    r4 = r4 OP r4;                                                           \
    r5 = r5 OP r5;                                                           \
    r6 = r6 OP r6;                                                           \
    r7 = r7 OP r7;                                                           \
    break;

#define KILN_CHAIN_SCALAR_CASES(OP_ENUM, OP)                                 \
  case Code(ArithmeticOp::OP_ENUM, Source::kArray, true):                    \
    r = r OP link.array[i];                                                  \
    break;                                                                   \
  case Code(ArithmeticOp::OP_ENUM, Source::kArray, false):                   \
    r = link.array[i] OP r;                                                  \
    break;                                                                   \
  case Code(ArithmeticOp::OP_ENUM, Source::kScalar, true):                   \
    r = r OP link.scalar;                                                    \
    break;                                                                   \
  case Code(ArithmeticOp::OP_ENUM, Source::kScalar, false):                  \
    r = link.scalar OP r;                                                    \
    break;                                                                   \
  case Code(ArithmeticOp::OP_ENUM, Source::kSelf, true):                     \
  case Code(ArithmeticOp::OP_ENUM, Source::kSelf, false):                    \
    r = r OP r;                                                              \
    break;

KILN_VECTORIZED void RunChain(const float* start, float* out,
                              const Resolved* links, int num_links,
                              int64_t n) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    Vector r0 = KILN_LOAD(start + i), r1 = KILN_LOAD(start + i + kLanes);
    Vector r2 = KILN_LOAD(start + i + 2 * kLanes);
    Vector r3 = KILN_LOAD(start + i + 3 * kLanes);
    Vector r4 = KILN_LOAD(start + i + 4 * kLanes);
    Vector r5 = KILN_LOAD(start + i + 5 * kLanes);
    Vector r6 = KILN_LOAD(start + i + 6 * kLanes);
    Vector r7 = KILN_LOAD(start + i + 7 * kLanes);
    for (int k = 0; k < num_links; ++k) {
      const Resolved& link = links[k];
      switch (link.code) {
        KILN_CHAIN_CASES(kAdd, +)
        KILN_CHAIN_CASES(kSubtract, -)
        KILN_CHAIN_CASES(kMultiply, *)
        KILN_CHAIN_CASES(kDivide, /)
        default:
          break;
      }
    }
    KILN_STORE(out + i, r0);
    KILN_STORE(out + i + kLanes, r1);
    KILN_STORE(out + i + 2 * kLanes, r2);
    KILN_STORE(out + i + 3 * kLanes, r3);
    KILN_STORE(out + i + 4 * kLanes, r4);
    KILN_STORE(out + i + 5 * kLanes, r5);
    KILN_STORE(out + i + 6 * kLanes, r6);
    KILN_STORE(out + i + 7 * kLanes, r7);
  }
  // The rest one element at a time: the same IEEE operations.
  for (; i < n; ++i) {
    float r = start[i];
    for (int k = 0; k < num_links; ++k) {
      const Resolved& link = links[k];
      switch (link.code) {
        KILN_CHAIN_SCALAR_CASES(kAdd, +)
        KILN_CHAIN_SCALAR_CASES(kSubtract, -)
        KILN_CHAIN_SCALAR_CASES(kMultiply, *)
        KILN_CHAIN_SCALAR_CASES(kDivide, /)
        default:
          break;
      }
    }
    out[i] = r;
  }
}

#undef KILN_CHAIN_CASES
#undef KILN_CHAIN_SCALAR_CASES
#undef KILN_LOAD
#undef KILN_STORE

class ArithmeticChainKernel : public ElementwiseKernel {
 public:
  ArithmeticChainKernel(int64_t count, std::vector<int> input_bytes,
                        std::vector<ChainLink> links, int cost)
      : ElementwiseKernel(count, std::move(input_bytes), {sizeof(float)}),
        links_(std::move(links)),
        cost_(cost) {}

  void RunRange(const std::byte* const* inputs, std::byte* const* outputs,
                int64_t, int64_t n) const override {
    Resolved resolved[kMaxLinks];
    for (size_t k = 0; k < links_.size(); ++k) {
      const ChainLink& link = links_[k];
      Source source = link.input < 0                ? Source::kSelf
                      : reads_whole(link.input)     ? Source::kScalar
                                                    : Source::kArray;
      const auto* operand =
          link.input < 0 ? nullptr
                         : reinterpret_cast<const float*>(inputs[link.input]);
      resolved[k] = {Code(link.op, source, link.r_on_left),
                     source == Source::kScalar ? operand[0] : 0.0f, operand};
    }
    RunChain(reinterpret_cast<const float*>(inputs[0]),
             reinterpret_cast<float*>(outputs[0]), resolved,
             static_cast<int>(links_.size()), n);
  }
  int cost_per_element() const override { return cost_; }

 private:
  std::vector<ChainLink> links_;
  int cost_;
};

}  // namespace

std::unique_ptr<ElementwiseKernel> MakeArithmeticChainKernel(
    int64_t count, std::vector<int> input_bytes, std::vector<ChainLink> links,
    int cost) {
  if (links.empty() || links.size() > static_cast<size_t>(kMaxLinks)) {
    return nullptr;
  }
  return std::make_unique<ArithmeticChainKernel>(
      count, std::move(input_bytes), std::move(links), cost);
}

}  // namespace kiln::exec
