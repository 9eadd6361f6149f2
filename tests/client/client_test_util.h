// Helpers shared by the client's tests: where the test plugins and Kiln's
// own plugin are.
#ifndef KILN_TESTS_CLIENT_CLIENT_TEST_UTIL_H_
#define KILN_TESTS_CLIENT_CLIENT_TEST_UTIL_H_

#include <unistd.h>

#include <optional>
#include <string>

#include "base/strings.h"
#include "support/test_support.h"

namespace kiln::client::testing {

// A plugin built by tests/client/CMakeLists.txt ("kiln_test_plugin_v0_40").
inline std::string TestPluginPath(const std::string& name) {
  return StrCat(KILN_TEST_PLUGIN_DIR, "/lib", name, ".so");
}

// Kiln's plugin as this build tree makes it, or nullopt when the tree does
// not build it.
inline std::optional<std::string> KilnPluginPath() {
#ifdef KILN_PLUGIN_PATH
  if (access(KILN_PLUGIN_PATH, R_OK) == 0) return std::string(KILN_PLUGIN_PATH);
#endif
  std::string built = kiln::testing::BuildDir() + "/lib/libpjrt_kiln.so";
  if (access(built.c_str(), R_OK) == 0) return built;
  return std::nullopt;
}

}  // namespace kiln::client::testing

// Skips the test, with the reason, when Kiln's plugin is not built.
#define KILN_REQUIRE_KILN_PLUGIN(var)                                  \
  auto kiln_plugin_path_ = ::kiln::client::testing::KilnPluginPath();  \
  if (!kiln_plugin_path_) {                                            \
    GTEST_SKIP() << "Kiln's plugin (libpjrt_kiln.so) is not built in " \
                    "this tree (target pjrt_kiln)";                    \
  }                                                                    \
  const std::string var = *kiln_plugin_path_

#endif  // KILN_TESTS_CLIENT_CLIENT_TEST_UTIL_H_
