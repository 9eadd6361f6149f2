// include/xla_ffi_c_api.h against XLA's FFI C API as jaxlib 0.10.2 ships it:
// every struct's size and alignment, every field's offset and the
// constants handlers depend on, as measured with jaxlib's headers
// (ffi_abi_measured.inc, checked at compile time); and, when the build
// found jaxlib's headers (KILN_JAXLIB_FFI_INCLUDE_DIR), the same table
// computed from them in another translation unit (ffi_abi_jaxlib.cc).
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "xla_ffi_c_api.h"

#define KILN_FFI_EXPECT_SIZE(s, size, align)      \
  static_assert(sizeof(s) == (size), #s " size"); \
  static_assert(alignof(s) == (align), #s " alignment");
#define KILN_FFI_EXPECT_OFFSET(s, field, offset) \
  static_assert(offsetof(s, field) == (offset), #s "." #field " offset");
#define KILN_FFI_EXPECT_CONSTANT(name, value) \
  static_assert(static_cast<long long>(name) == (value), #name);
#include "ffi_abi_measured.inc"
#undef KILN_FFI_EXPECT_SIZE
#undef KILN_FFI_EXPECT_OFFSET
#undef KILN_FFI_EXPECT_CONSTANT

namespace kiln::testing {

#ifdef KILN_HAVE_JAXLIB_FFI_HEADERS
// ffi_abi_jaxlib.cc: the table from jaxlib's own header.
std::vector<std::string> JaxlibFfiLayout();
#endif

namespace {

std::vector<std::string> KilnFfiLayout() {
  std::vector<std::string> lines;
#define KILN_FFI_STRUCT(s)                                                  \
  lines.push_back(std::string(#s) + " " + std::to_string(sizeof(s)) + " " + \
                  std::to_string(alignof(s)));
#define KILN_FFI_FIELD(s, f) \
  lines.push_back(std::string(#s "." #f " ") + std::to_string(offsetof(s, f)));
#include "ffi_abi_layout.inc"
#undef KILN_FFI_STRUCT
#undef KILN_FFI_FIELD
  return lines;
}

TEST(FfiAbiTest, LayoutTableCoversTheApi) {
  // 34 structs and 90 fields.
  EXPECT_EQ(KilnFfiLayout().size(), 124u);
  EXPECT_EQ(XLA_FFI_API_MAJOR, 0);
  EXPECT_EQ(XLA_FFI_API_MINOR, 3);
}

#ifdef KILN_HAVE_JAXLIB_FFI_HEADERS
TEST(FfiAbiTest, MatchesJaxlibHeaders) {
  std::vector<std::string> kiln = KilnFfiLayout();
  std::vector<std::string> jaxlib = JaxlibFfiLayout();
  ASSERT_EQ(kiln.size(), jaxlib.size());
  for (size_t i = 0; i < kiln.size(); ++i) EXPECT_EQ(kiln[i], jaxlib[i]);
}
#endif

}  // namespace
}  // namespace kiln::testing
