// NumPy .npy files (format versions 1.0-3.0, little-endian, C order) as
// Kiln arrays.
#ifndef KILN_TOOLS_KILN_NPY_H_
#define KILN_TOOLS_KILN_NPY_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "exec/plan.h"

namespace kiln::cli {

struct NpyArray {
  exec::ArrayShape shape;
  std::string data;  // row-major, StorageBytes per element
};

// Parses a .npy file. NumPy's bool, int8..64, uint8..64, float16/32/64 and
// complex64/128 dtypes are read; bfloat16 as the ml_dtypes name
// "bfloat16" ('<V2' with that descr is not recognized).
StatusOr<NpyArray> ParseNpy(std::string_view bytes);

// A .npy file for `array`. Types NumPy has no dtype for (bf16, f8, sub-byte
// ints) are written under the ml_dtypes names ("bfloat16", "int4", ...).
std::string WriteNpy(const NpyArray& array);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_NPY_H_
