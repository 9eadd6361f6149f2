// The slots Kiln does not implement yet answer UNIMPLEMENTED, naming
// themselves, whatever they are given; the rest are implemented.
#include <cstring>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

class UnimplementedTest : public PluginTest {};

TEST_F(UnimplementedTest, TodoSlotsAnswerUnimplementedWithTheirName) {
  int todo = 0;
  int real = 0;
  // Arguments of any slot fit in this block; zeroed, with a struct_size
  // that claims all of it.
  alignas(64) unsigned char block[2048];
#define KILN_PJRT_CHECK_REAL(name) ++real;
#define KILN_PJRT_CHECK_TODO(name)                                            \
  {                                                                           \
    ++todo;                                                                   \
    static_assert(sizeof(name##_Args) <= sizeof(block));                      \
    std::memset(block, 0, sizeof(block));                                     \
    auto* args = reinterpret_cast<name##_Args*>(block);                       \
    args->struct_size = sizeof(block);                                        \
    ErrorInfo error = TakeError(api_, api_->name(args));                      \
    EXPECT_EQ(error.code, PJRT_Error_Code_UNIMPLEMENTED) << #name;            \
    EXPECT_NE(error.message.find(#name), std::string::npos) << error.message; \
    /* Null args too: the stub reads nothing. */                              \
    EXPECT_EQ(TakeError(api_, api_->name(nullptr)).code,                      \
              PJRT_Error_Code_UNIMPLEMENTED)                                  \
        << #name;                                                             \
  }
#define KILN_PJRT_SLOT(name, minor, state) KILN_PJRT_CHECK_##state(name)
#include "pjrt_c_api_slots.def"
#undef KILN_PJRT_CHECK_REAL
#undef KILN_PJRT_CHECK_TODO
  EXPECT_EQ(todo + real, 138);
  std::printf("PJRT slots: %d implemented, %d answer UNIMPLEMENTED\n", real,
              todo);
}

TEST_F(UnimplementedTest, PluginInitializeCanBeCalledAgain) {
  for (int i = 0; i < 2; ++i) {
    auto args = KILN_ARGS(PJRT_Plugin_Initialize_Args);
    PJRT_EXPECT_OK(api_, api_->PJRT_Plugin_Initialize(&args));
  }
}

}  // namespace
}  // namespace kiln::testing
