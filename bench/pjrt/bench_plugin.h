// What the plugin benchmarks share: libpjrt_kiln.so loaded with dlopen from
// ../lib next to the benchmark binary (as a framework loads it), errors
// that end the run with their message, and a client with N devices.
#ifndef KILN_BENCH_PJRT_BENCH_PLUGIN_H_
#define KILN_BENCH_PJRT_BENCH_PLUGIN_H_

#include <string>
#include <vector>

#include "pjrt_c_api.h"

namespace kiln::bench {

// The plugin's table, loaded on first use (exits when loading fails).
const PJRT_Api* Api();

// The error's message (and destroys it); "" for no error.
std::string TakeMessage(PJRT_Error* error);

// Exits with the message when `error` is not null.
void Check(PJRT_Error* error);

void AwaitAndDestroy(PJRT_Event* event);
void Destroy(PJRT_Buffer* buffer);

// A client of the plugin with `device_count` devices, destroyed with it.
struct PluginClient {
  explicit PluginClient(int device_count = 1);
  ~PluginClient();
  PluginClient(const PluginClient&) = delete;
  PluginClient& operator=(const PluginClient&) = delete;

  PJRT_Client* client = nullptr;
  std::vector<PJRT_Device*> devices;
};

}  // namespace kiln::bench

#endif  // KILN_BENCH_PJRT_BENCH_PLUGIN_H_
