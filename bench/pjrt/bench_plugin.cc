#include "bench_plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

namespace kiln::bench {

const PJRT_Api* Api() {
  static const PJRT_Api* api = [] {
    char self[PATH_MAX] = {};
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    std::string dir = n > 0 ? std::string(self, n) : std::string("./x");
    dir = dir.substr(0, dir.rfind('/'));
    std::string path = dir + "/../lib/libpjrt_kiln.so";
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "dlopen(%s): %s\n", path.c_str(), dlerror());
      std::exit(1);
    }
    auto get =
        reinterpret_cast<const PJRT_Api* (*)()>(dlsym(library, "GetPjrtApi"));
    return get();
  }();
  return api;
}

std::string TakeMessage(PJRT_Error* error) {
  if (error == nullptr) return "";
  PJRT_Error_Message_Args message{PJRT_Error_Message_Args_STRUCT_SIZE, nullptr,
                                  error, nullptr, 0};
  Api()->PJRT_Error_Message(&message);
  std::string text(message.message, message.message_size);
  PJRT_Error_Destroy_Args destroy{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr,
                                  error};
  Api()->PJRT_Error_Destroy(&destroy);
  return text.empty() ? "(error without a message)" : text;
}

void Check(PJRT_Error* error) {
  std::string message = TakeMessage(error);
  if (message.empty()) return;
  std::fprintf(stderr, "PJRT error: %s\n", message.c_str());
  std::exit(1);
}

void AwaitAndDestroy(PJRT_Event* event) {
  PJRT_Event_Await_Args await{PJRT_Event_Await_Args_STRUCT_SIZE, nullptr,
                              event};
  Check(Api()->PJRT_Event_Await(&await));
  PJRT_Event_Destroy_Args destroy{PJRT_Event_Destroy_Args_STRUCT_SIZE, nullptr,
                                  event};
  Check(Api()->PJRT_Event_Destroy(&destroy));
}

void Destroy(PJRT_Buffer* buffer) {
  PJRT_Buffer_Destroy_Args args{PJRT_Buffer_Destroy_Args_STRUCT_SIZE, nullptr,
                                buffer};
  Check(Api()->PJRT_Buffer_Destroy(&args));
}

PluginClient::PluginClient(int device_count) {
  PJRT_NamedValue option{};
  option.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  option.name = "cpu_device_count";
  option.name_size = 16;
  option.type = PJRT_NamedValue_kInt64;
  option.int64_value = device_count;
  option.value_size = 1;
  PJRT_Client_Create_Args args{};
  args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  args.create_options = &option;
  args.num_options = 1;
  Check(Api()->PJRT_Client_Create(&args));
  client = args.client;
  PJRT_Client_Devices_Args list{};
  list.struct_size = PJRT_Client_Devices_Args_STRUCT_SIZE;
  list.client = client;
  Check(Api()->PJRT_Client_Devices(&list));
  devices.assign(list.devices, list.devices + list.num_devices);
}

PluginClient::~PluginClient() {
  PJRT_Client_Destroy_Args args{PJRT_Client_Destroy_Args_STRUCT_SIZE, nullptr,
                                client};
  Check(Api()->PJRT_Client_Destroy(&args));
}

}  // namespace kiln::bench
