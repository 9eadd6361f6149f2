// The `kiln` commands that go through the client, run as a user would,
// against the test plugin: info, run --plugin, bench.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "client_test_util.h"

namespace kiln::client {
namespace {

#ifdef KILN_BINARY

struct Result {
  std::string out;
  int exit_code;
};

Result RunKiln(const std::string& arguments) {
  std::string command = StrCat("'", KILN_BINARY, "' ", arguments, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {"popen failed", -1};
  std::string out;
  char chunk[4096];
  size_t read;
  while ((read = std::fread(chunk, 1, sizeof(chunk), pipe)) > 0) {
    out.append(chunk, read);
  }
  int status = pclose(pipe);
  return {out, WEXITSTATUS(status)};
}

// A little-endian f32 .npy file of `values` with shape `dims`.
std::string Npy(const std::vector<float>& values, const std::string& dims) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()),
             values.size() * sizeof(float));
  return out;
}

void WriteText(const std::string& path, const std::string& bytes) {
  FILE* file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  std::fwrite(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
}

// Skips the test when the `kiln` command is not built.
#define KILN_REQUIRE_KILN_BINARY()                                           \
  if (access(KILN_BINARY, X_OK) != 0) {                                      \
    GTEST_SKIP() << "the kiln command is not built (" << KILN_BINARY << ")"; \
  }

const std::string& Plugin() {
  static const std::string path =
      testing::TestPluginPath("kiln_test_plugin_v0_40");
  return path;
}

TEST(CliTest, InfoListsDevicesAndMemoriesOfAnyPlugin) {
  KILN_REQUIRE_KILN_BINARY();
  Result result = RunKiln("info --plugin '" + Plugin() + "'");
  ASSERT_EQ(result.exit_code, 0) << result.out;
  for (const char* line :
       {"PJRT C API: 0.40 (PJRT_Api of 848 bytes", "platform: kiln_test",
        "  stablehlo_current_version = [1, 0, 0]", "devices: 2 (2 addressable)",
        "  device 1: kind \"test device\", process 0, local hardware id 1, "
        "addressable",
        "      memory 1: kind \"device\" (default)"}) {
    EXPECT_NE(result.out.find(line), std::string::npos) << line << "\n"
                                                        << result.out;
  }
  Result missing = RunKiln("info --plugin /nonexistent/plugin.so");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("NOT_FOUND"), std::string::npos) << missing.out;
  EXPECT_EQ(RunKiln("info --devices zero").exit_code, 2);
}

TEST(CliTest, RunGoesThroughThePlugin) {
  KILN_REQUIRE_KILN_BINARY();
  std::string dir =
      StrCat(kiln::testing::BuildDir(), "/client_cli_test_", getpid());
  ASSERT_EQ(system(("mkdir -p '" + dir + "'").c_str()), 0);
  WriteText(dir + "/sum.mlir",
            "module @sum {\n"
            "  func.func public @main(%arg0: tensor<2x2xf32>, %arg1: "
            "tensor<2x2xf32>) -> tensor<2x2xf32> {\n"
            "    %0 = stablehlo.add %arg0, %arg1 : tensor<2x2xf32>\n"
            "    return %0 : tensor<2x2xf32>\n"
            "  }\n"
            "}\n");
  WriteText(dir + "/a.npy", Npy({1, 2, 3, 4}, "2, 2"));
  WriteText(dir + "/b.npy", Npy({10, 20, 30, 40.5f}, "2, 2"));
  Result result =
      RunKiln(StrCat("run '", dir, "/sum.mlir' --inputs '", dir, "/a.npy' '",
                     dir, "/b.npy' --plugin '", Plugin(), "' --metrics"));
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(result.out.find("tensor<2x2xf32> [[11, 22], [33, 44.5]]"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("Metric: ExecuteTime\n  TotalSamples: 1"),
            std::string::npos)
      << result.out;
  Result wrong_device = RunKiln(
      StrCat("run '", dir, "/sum.mlir' --inputs '", dir, "/a.npy' '", dir,
             "/b.npy' --plugin '", Plugin(), "' --device KILN_TEST:5"));
  EXPECT_EQ(wrong_device.exit_code, 1);
  EXPECT_NE(wrong_device.out.find("'KILN_TEST:5' does not exist"),
            std::string::npos)
      << wrong_device.out;
  ASSERT_EQ(system(("rm -rf '" + dir + "'").c_str()), 0);
}

TEST(CliTest, BenchReportsTransfersAndSkipsWhatThePluginCannotDo) {
  KILN_REQUIRE_KILN_BINARY();
  Result result =
      RunKiln("bench --iterations 3 --bytes 4096 --plugin '" + Plugin() + "'");
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(result.out.find("transfer round trip of 4.00KB"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("compile and execute: skipped (UNIMPLEMENTED"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("Metric: TransferToDeviceTime\n  TotalSamples: 3"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(RunKiln("bench --iterations 0").exit_code, 2);
}

#else
TEST(CliTest, Skipped) { GTEST_SKIP() << "the kiln command is not built"; }
#endif

}  // namespace
}  // namespace kiln::client
