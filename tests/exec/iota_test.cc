// The iota kernel over any range of its elements (fused kernels and
// threads ask for tiles that start anywhere), against the index computed
// element by element.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "exec/kernels/data_movement.h"
#include "exec/kernels/elementwise_kernel.h"

namespace kiln::exec {
namespace {

TEST(IotaTest, AnyRangeOfAnyDimensionHoldsItsIndices) {
  const std::vector<int64_t> dims = {3, 5, 7};
  for (ElementType type : {ElementType::kI32, ElementType::kF32,
                           ElementType::kI64, ElementType::kUI8}) {
    for (int64_t dimension = 0; dimension < 3; ++dimension) {
      auto kernel = MakeIotaKernel(ArrayShape{type, dims}, dimension);
      auto* elementwise = dynamic_cast<ElementwiseKernel*>(kernel.get());
      ASSERT_NE(elementwise, nullptr);
      int64_t inner = 1;
      for (int64_t d = dimension + 1; d < 3; ++d) inner *= dims[d];
      const int64_t bytes = ir::StorageBytes(type);
      for (int64_t begin : {int64_t{0}, int64_t{1}, int64_t{6}, int64_t{7},
                            int64_t{34}, int64_t{50}}) {
        for (int64_t n : {int64_t{1}, int64_t{13}, 105 - begin}) {
          if (begin + n > 105) continue;
          std::vector<std::byte> out(n * bytes);
          std::byte* outputs[] = {out.data()};
          elementwise->RunRange(nullptr, outputs, begin, n);
          for (int64_t i = 0; i < n; ++i) {
            const int64_t want = ((begin + i) / inner) % dims[dimension];
            double got = 0;
            if (type == ElementType::kI32) {
              int32_t v;
              std::memcpy(&v, &out[i * bytes], bytes);
              got = v;
            } else if (type == ElementType::kF32) {
              float v;
              std::memcpy(&v, &out[i * bytes], bytes);
              got = v;
            } else if (type == ElementType::kI64) {
              int64_t v;
              std::memcpy(&v, &out[i * bytes], bytes);
              got = static_cast<double>(v);
            } else {
              uint8_t v;
              std::memcpy(&v, &out[i * bytes], bytes);
              got = v;
            }
            ASSERT_EQ(got, want)
                << ir::ElementTypeName(type) << " dimension " << dimension
                << " begin " << begin << " i " << i;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::exec
