// Uses an installed Kiln: loads the installed plugin through the client,
// moves a tensor to a device and back, and writes a program with the
// builder. Prints one line per check.
#include <cstdio>

#include "kiln/builder.h"
#include "kiln/pjrt_computation_client.h"

int main() {
  using namespace kiln::client;
  std::printf("kiln %s\n", KILN_FOUND_VERSION);
  PjrtComputationClientOptions options;
  options.plugin_path = KILN_PLUGIN;
  auto client = PjrtComputationClient::Create(options);
  if (!client.ok()) {
    std::printf("error: %s\n", client.status().ToString().c_str());
    return 1;
  }
  std::printf("platform %s, default device %s\n",
              (*client)->GetPlatformName().c_str(),
              (*client)->GetDefaultDevice().c_str());
  const float values[3] = {1.5f, -2.0f, 4.0f};
  TensorSource source{Shape(PJRT_Buffer_Type_F32, {3}), values,
                      (*client)->GetDefaultDevice()};
  auto data = (*client)->TransferToDevice({&source, 1});
  if (!data.ok()) return 1;
  auto back = (*client)->TransferFromDevice(*data);
  if (!back.ok()) return 1;
  std::vector<float> read = (*back)[0].ToVector<float>();
  std::printf("round trip %s\n",
              read == std::vector<float>{1.5f, -2.0f, 4.0f} ? "ok" : "wrong");
  ProgramBuilder b("outside");
  Value x = b.Parameter(Shape(PJRT_Buffer_Type_F32, {3}));
  Value outputs[] = {x + x};
  auto program = b.Build(outputs);
  std::printf("builder %s\n", program.ok() ? "ok" : "failed");
  return 0;
}
