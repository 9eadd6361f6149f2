// Helpers shared by Kiln's tests.
#ifndef KILN_TESTS_SUPPORT_TEST_SUPPORT_H_
#define KILN_TESTS_SUPPORT_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::testing {

// The shared data folder (abi/, corpus/): $KILN_SHARED_DIR, else the
// ../shared next to the source tree. nullopt when it does not exist.
std::optional<std::string> SharedDir();

// The build tree ($KILN_BUILD_DIR, else the one the test was built in).
std::string BuildDir();

// Every regular file under `dir` whose name ends with `suffix`, sorted.
std::vector<std::string> ListFiles(const std::string& dir,
                                   const std::string& suffix);

// Distance in units in the last place between two f32 values: the number
// of floats between them (the bit patterns of floats of one sign are
// ordered like the floats; +0 and -0 are one apart).
int64_t UlpDistance(float a, float b);

}  // namespace kiln::testing

// Skips the current test, with the reason, when the shared data is absent.
#define KILN_REQUIRE_SHARED_DIR(var)                                      \
  auto kiln_shared_dir_ = ::kiln::testing::SharedDir();                   \
  if (!kiln_shared_dir_) {                                                \
    GTEST_SKIP() << "shared data not found (set KILN_SHARED_DIR to the "  \
                    "folder holding abi/ and corpus/)";                   \
  }                                                                       \
  const std::string var = *kiln_shared_dir_

#define EXPECT_OK(expr)                                          \
  do {                                                           \
    const ::kiln::Status kiln_s_ = ::kiln::internal::AsStatus((expr)); \
    EXPECT_TRUE(kiln_s_.ok()) << kiln_s_.ToString();             \
  } while (0)
#define ASSERT_OK(expr)                                          \
  do {                                                           \
    const ::kiln::Status kiln_s_ = ::kiln::internal::AsStatus((expr)); \
    ASSERT_TRUE(kiln_s_.ok()) << kiln_s_.ToString();             \
  } while (0)

#define ASSERT_OK_AND_ASSIGN(lhs, expr)                                  \
  auto KILN_CONCAT(kiln_test_or_, __LINE__) = (expr);                    \
  ASSERT_TRUE(KILN_CONCAT(kiln_test_or_, __LINE__).ok())                 \
      << KILN_CONCAT(kiln_test_or_, __LINE__).status().ToString();       \
  lhs = std::move(KILN_CONCAT(kiln_test_or_, __LINE__)).value()

#endif  // KILN_TESTS_SUPPORT_TEST_SUPPORT_H_
