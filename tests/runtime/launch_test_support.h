// A runtime client of eight devices and the helpers tests use to run one
// launch of a multi-device executable with host values (collectives_test.cc,
// spmd_test.cc).
#ifndef KILN_TESTS_RUNTIME_LAUNCH_TEST_SUPPORT_H_
#define KILN_TESTS_RUNTIME_LAUNCH_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/client.h"
#include "runtime/device.h"
#include "runtime/executable.h"
#include "runtime/transfer.h"

namespace kiln::runtime {

constexpr int kDevices = 8;

class LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override { MakeClient(0); }

  void MakeClient(double timeout_seconds) {
    ClientOptions options;
    options.device_count = kDevices;
    options.collective_timeout_seconds = timeout_seconds;
    auto client = Client::Create(options);
    ASSERT_TRUE(client.ok());
    client_ = std::move(*client);
  }

  StatusOr<std::shared_ptr<Executable>> Compile(const std::string& text,
                                                int replicas,
                                                int partitions = 1) {
    CompileSpec spec;
    spec.num_replicas = replicas;
    spec.num_partitions = partitions;
    return Executable::Compile(*client_, text, spec);
  }

  template <typename T>
  std::shared_ptr<Buffer> Upload(const std::vector<T>& values, DType dtype,
                                 std::vector<int64_t> dims, Device* device) {
    auto shape = Shape::Make(dtype, dims);
    EXPECT_TRUE(shape.ok());
    auto transfer =
        TransferFromHost(values.data(), *shape, std::nullopt,
                         HostBufferSemantics::kImmutableOnlyDuringCall,
                         device->default_memory_space());
    EXPECT_TRUE(transfer.ok()) << transfer.status().ToString();
    return transfer->buffer;
  }

  template <typename T>
  StatusOr<std::vector<T>> Read(const std::shared_ptr<Buffer>& buffer) {
    std::vector<T> out(buffer->shape().element_count());
    ASSIGN_OR_RETURN(auto done,
                     TransferToHost(buffer, out.data(), out.size() * sizeof(T),
                                    std::nullopt));
    RETURN_IF_ERROR(done->Await());
    return out;
  }

  // Runs one launch: arguments[position] are that position's arguments
  // (host values of one type); returns each position's outputs.
  template <typename T>
  StatusOr<std::vector<std::vector<std::vector<T>>>> Launch(
      const Executable& executable,
      const std::vector<std::vector<std::vector<T>>>& arguments) {
    std::vector<ExecuteRequest> requests;
    for (size_t p = 0; p < arguments.size(); ++p) {
      ExecuteRequest request;
      request.position = static_cast<int>(p);
      Device* device = executable.addressable_devices()[p];
      for (size_t a = 0; a < arguments[p].size(); ++a) {
        const Shape& shape = executable.parameters()[a].shape;
        request.arguments.push_back(
            Upload(arguments[p][a], shape.dtype(), shape.dims(), device));
      }
      requests.push_back(std::move(request));
    }
    ASSIGN_OR_RETURN(std::vector<ExecuteResult> results,
                     executable.ExecuteLaunch(std::move(requests)));
    std::vector<std::vector<std::vector<T>>> outputs(results.size());
    for (size_t p = 0; p < results.size(); ++p) {
      RETURN_IF_ERROR(results[p].done->Await());
      for (const auto& buffer : results[p].outputs) {
        ASSIGN_OR_RETURN(std::vector<T> values, Read<T>(buffer));
        outputs[p].push_back(std::move(values));
      }
    }
    return outputs;
  }

  std::unique_ptr<Client> client_;
};

}  // namespace kiln::runtime

#endif  // KILN_TESTS_RUNTIME_LAUNCH_TEST_SUPPORT_H_
