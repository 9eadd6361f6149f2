// The Profiler extension: a framework's profiler (jax.profiler.trace) opens
// a session through PLUGIN_Profiler_Api, runs work, stops it and collects a
// serialized tensorflow.profiler.XSpace (proto/xplane.proto) that it merges
// into its own trace. Kiln's XSpace has one plane per device that ran
// something, "/device:CUSTOM:<id>" (the prefix profilers give devices of
// other kinds), with a line of executes ("XLA Modules", one event per run,
// named after the program) and a line of steps ("XLA Ops", one event per
// step the executor ran: the same timeline as `kiln run --profile`).
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "pjrt/extensions.h"
#include "proto/xplane.pb.h"
#include "runtime/tracing.h"

struct PLUGIN_Profiler_Error {
  int code;
  std::string message;
};

struct PLUGIN_Profiler {
  kiln::runtime::TraceSession session;
  bool running = false;
  std::string bytes;  // the collected XSpace
  bool collected = false;
};

namespace kiln::pjrt {
namespace {

// absl::StatusCode numbers.
constexpr int kInvalidArgument = 3;
constexpr int kFailedPrecondition = 9;

PLUGIN_Profiler_Error* NewError(int code, std::string message) {
  return new PLUGIN_Profiler_Error{code, std::move(message)};
}

void ErrorDestroy(PLUGIN_Profiler_Error_Destroy_Args* args) {
  if (args != nullptr) delete args->error;
}

void ErrorMessage(PLUGIN_Profiler_Error_Message_Args* args) {
  if (args == nullptr) return;
  if (args->error == nullptr) {
    args->message = "";
    args->message_size = 0;
    return;
  }
  args->message = args->error->message.c_str();
  args->message_size = args->error->message.size();
}

PLUGIN_Profiler_Error* ErrorGetCode(PLUGIN_Profiler_Error_GetCode_Args* args) {
  if (args == nullptr) {
    return NewError(kInvalidArgument,
                    "PLUGIN_Profiler_Error_GetCode_Args is null");
  }
  args->code = args->error != nullptr ? args->error->code : 0;
  return nullptr;
}

#define KILN_PROFILER_CHECK(args, type, needs_profiler)             \
  do {                                                              \
    if ((args) == nullptr)                                          \
      return NewError(kInvalidArgument, #type " is null");          \
    if ((needs_profiler) && (args)->profiler == nullptr) {          \
      return NewError(kInvalidArgument, #type ".profiler is null"); \
    }                                                               \
  } while (false)

PLUGIN_Profiler_Error* Create(PLUGIN_Profiler_Create_Args* args) {
  KILN_PROFILER_CHECK(args, PLUGIN_Profiler_Create_Args, false);
  // The options (tracing levels, device types) do not change what Kiln
  // records: every run and step while the session is open.
  args->profiler = new PLUGIN_Profiler();
  return nullptr;
}

PLUGIN_Profiler_Error* Destroy(PLUGIN_Profiler_Destroy_Args* args) {
  KILN_PROFILER_CHECK(args, PLUGIN_Profiler_Destroy_Args, false);
  delete args->profiler;
  return nullptr;
}

PLUGIN_Profiler_Error* Start(PLUGIN_Profiler_Start_Args* args) {
  KILN_PROFILER_CHECK(args, PLUGIN_Profiler_Start_Args, true);
  args->profiler->session.Start();
  args->profiler->running = true;
  args->profiler->collected = false;
  return nullptr;
}

PLUGIN_Profiler_Error* Stop(PLUGIN_Profiler_Stop_Args* args) {
  KILN_PROFILER_CHECK(args, PLUGIN_Profiler_Stop_Args, true);
  args->profiler->session.Stop();
  args->profiler->running = false;
  return nullptr;
}

// The session's events as an XSpace.
std::string Serialize(const std::vector<runtime::TraceEvent>& events) {
  tensorflow::profiler::XSpace space;
  std::map<int, std::vector<const runtime::TraceEvent*>> by_device;
  for (const runtime::TraceEvent& event : events) {
    by_device[event.device].push_back(&event);
  }
  for (const auto& [device, device_events] : by_device) {
    tensorflow::profiler::XPlane* plane = space.add_planes();
    plane->set_id(device);
    plane->set_name("/device:CUSTOM:" + std::to_string(device));
    std::map<std::string, int64_t> metadata_ids;
    auto metadata_id = [&](const std::string& name) {
      auto [it, inserted] = metadata_ids.emplace(
          name, static_cast<int64_t>(metadata_ids.size()) + 1);
      if (inserted) {
        tensorflow::profiler::XEventMetadata& metadata =
            (*plane->mutable_event_metadata())[it->second];
        metadata.set_id(it->second);
        metadata.set_name(name);
      }
      return it->second;
    };
    for (int line_id : {1, 2}) {
      const bool executes = line_id == 1;
      int64_t first = 0;
      bool any = false;
      for (const runtime::TraceEvent* event : device_events) {
        if ((event->depth == 0) != executes) continue;
        first = any ? std::min(first, event->begin_ns) : event->begin_ns;
        any = true;
      }
      if (!any) continue;
      tensorflow::profiler::XLine* line = plane->add_lines();
      line->set_id(line_id);
      line->set_display_id(line_id);
      line->set_name(executes ? "XLA Modules" : "XLA Ops");
      line->set_display_name(executes ? "Kiln executes" : "Kiln steps");
      line->set_timestamp_ns(first);
      int64_t last = first;
      for (const runtime::TraceEvent* event : device_events) {
        if ((event->depth == 0) != executes) continue;
        tensorflow::profiler::XEvent* out = line->add_events();
        out->set_metadata_id(metadata_id(event->name));
        out->set_offset_ps((event->begin_ns - first) * 1000);
        out->set_duration_ps(
            std::max<int64_t>(event->end_ns - event->begin_ns, 0) * 1000);
        last = std::max(last, event->end_ns);
      }
      line->set_duration_ps((last - first) * 1000);
    }
  }
  return space.SerializeAsString();
}

PLUGIN_Profiler_Error* CollectData(PLUGIN_Profiler_CollectData_Args* args) {
  KILN_PROFILER_CHECK(args, PLUGIN_Profiler_CollectData_Args, true);
  PLUGIN_Profiler* profiler = args->profiler;
  if (profiler->running) {
    return NewError(kFailedPrecondition,
                    "PLUGIN_Profiler_CollectData: stop the profiler first");
  }
  if (!profiler->collected) {
    profiler->bytes = Serialize(profiler->session.events());
    profiler->collected = true;
  }
  if (args->buffer == nullptr) {
    // The first of the two calls: the size, and the bytes themselves,
    // owned by the profiler until it is destroyed (callers that read them
    // there need no second call).
    args->buffer = reinterpret_cast<uint8_t*>(profiler->bytes.data());
  } else if (args->buffer !=
             reinterpret_cast<uint8_t*>(profiler->bytes.data())) {
    std::memcpy(args->buffer, profiler->bytes.data(), profiler->bytes.size());
  }
  args->buffer_size_in_bytes = profiler->bytes.size();
  return nullptr;
}

#undef KILN_PROFILER_CHECK

}  // namespace

PJRT_Extension_Base* ProfilerExtension() {
  static PLUGIN_Profiler_Api api = [] {
    PLUGIN_Profiler_Api table{};
    table.struct_size =
        KILN_PROFILER_STRUCT_SIZE(PLUGIN_Profiler_Api, collect_data);
    table.priv = nullptr;
    table.error_destroy = &ErrorDestroy;
    table.error_message = &ErrorMessage;
    table.error_get_code = &ErrorGetCode;
    table.create = &Create;
    table.destroy = &Destroy;
    table.start = &Start;
    table.stop = &Stop;
    table.collect_data = &CollectData;
    return table;
  }();
  static PJRT_Profiler_Extension profiler = [] {
    PJRT_Profiler_Extension extension{};
    extension.struct_size = PJRT_Profiler_Extension_STRUCT_SIZE;
    extension.type = PJRT_Extension_Type_Profiler;
    extension.next = CustomPartitionerExtension();
    extension.profiler_api = &api;
    extension.traceme_context_id = 0;
    return extension;
  }();
  return reinterpret_cast<PJRT_Extension_Base*>(&profiler);
}

}  // namespace kiln::pjrt
