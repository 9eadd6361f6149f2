// The Layouts extension: the device layout of a buffer, the default layout
// of a shape, and the layouts an executable takes and gives. JAX reads the
// executable's to check the layouts it was asked for (`Format`) and to
// give its outputs theirs; without the extension it would read them from
// OptimizedProgram converted to HLO, which is not where Kiln keeps them.
//
// A layout serializes to XLA's layout text, "{1,0}" (minor-to-major),
// which is what PjRtLayout::Deserialize parses.
#include <memory>
#include <string>

#include "base/status.h"
#include "base/strings.h"
#include "pjrt/args.h"
#include "pjrt/error.h"
#include "pjrt/extensions.h"
#include "pjrt/handles.h"
#include "runtime/host_layout.h"
#include "runtime/shape.h"

struct PJRT_Layouts_SerializedLayout {
  std::string text;
};

namespace kiln::pjrt {
namespace {

std::unique_ptr<PJRT_Layouts_MemoryLayout> RowMajor(size_t rank) {
  auto layout = std::make_unique<PJRT_Layouts_MemoryLayout>();
  for (size_t d = rank; d-- > 0;) {
    layout->minor_to_major.push_back(static_cast<int64_t>(d));
  }
  return layout;
}

Status CheckDims(const int64_t* dims, size_t num_dims, std::string_view what) {
  if (dims == nullptr && num_dims > 0) {
    return InvalidArgumentError(what, ".dims is null");
  }
  if (num_dims > runtime::kMaxRank) {
    return InvalidArgumentError(what, ".num_dims is ", num_dims,
                                "; a buffer has at most ", runtime::kMaxRank,
                                " dimensions");
  }
  return OkStatus();
}

PJRT_Error* Destroy(PJRT_Layouts_MemoryLayout_Destroy_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Layouts_MemoryLayout_Destroy_Args, layout);
    delete args->layout;
    return OkStatus();
  });
}

PJRT_Error* Serialize(PJRT_Layouts_MemoryLayout_Serialize_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Layouts_MemoryLayout_Serialize_Args,
                         serialized_layout_deleter);
    if (args->layout == nullptr) {
      return InvalidArgumentError(
          "PJRT_Layouts_MemoryLayout_Serialize_Args.layout is null");
    }
    auto* serialized = new PJRT_Layouts_SerializedLayout{
        runtime::LayoutToString(args->layout->minor_to_major)};
    args->serialized_layout = serialized;
    args->serialized_bytes = serialized->text.data();
    args->serialized_bytes_size = serialized->text.size();
    args->serialized_layout_deleter = [](PJRT_Layouts_SerializedLayout* s) {
      delete s;
    };
    return OkStatus();
  });
}

PJRT_Error* ClientDefaultLayout(
    PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args* args) {
  return RunEntry([&]() -> Status {
    constexpr std::string_view kWhat =
        "PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args";
    KILN_PJRT_CHECK_ARGS(args, PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args,
                         layout);
    RETURN_IF_ERROR(
        CheckClient(args->client, StrCat(kWhat, ".client")).status());
    RETURN_IF_ERROR(CheckDims(args->dims, args->num_dims, kWhat));
    args->layout = RowMajor(args->num_dims).release();
    return OkStatus();
  });
}

PJRT_Error* TopologyDefaultLayout(
    PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args* args) {
  return RunEntry([&]() -> Status {
    constexpr std::string_view kWhat =
        "PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args";
    KILN_PJRT_CHECK_ARGS(args, PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args,
                         layout);
    RETURN_IF_ERROR(CheckTopology(args->topology_description,
                                  StrCat(kWhat, ".topology_description"))
                        .status());
    RETURN_IF_ERROR(CheckDims(args->dims, args->num_dims, kWhat));
    args->layout = RowMajor(args->num_dims).release();
    return OkStatus();
  });
}

PJRT_Error* BufferLayout(PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args,
                         layout);
    ASSIGN_OR_RETURN(
        PJRT_Buffer * buffer,
        CheckBuffer(args->buffer,
                    "PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args.buffer"));
    args->layout = new PJRT_Layouts_MemoryLayout{buffer->minor_to_major()};
    return OkStatus();
  });
}

PJRT_Error* OutputLayouts(
    PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(
        args, PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args, layouts);
    ASSIGN_OR_RETURN(
        PJRT_Executable * executable,
        CheckExecutable(
            args->executable,
            "PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args.executable"));
    const ExecutableState& state = *executable->state;
    args->num_outputs = state.output_layout_handles.size();
    args->layouts = const_cast<PJRT_Layouts_MemoryLayout**>(
        state.output_layout_handles.data());
    return OkStatus();
  });
}

PJRT_Error* ParameterLayouts(
    PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(
        args, PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args, layouts);
    ASSIGN_OR_RETURN(
        PJRT_Executable * executable,
        CheckExecutable(args->executable,
                        "PJRT_Layouts_PJRT_Executable_GetParameterLayouts_"
                        "Args.executable"));
    const ExecutableState& state = *executable->state;
    args->num_parameters = state.parameter_layout_handles.size();
    args->layouts = const_cast<PJRT_Layouts_MemoryLayout**>(
        state.parameter_layout_handles.data());
    return OkStatus();
  });
}

}  // namespace

PJRT_Extension_Base* LayoutsExtension() {
  static PJRT_Layouts_Extension layouts = [] {
    PJRT_Layouts_Extension extension{};
    extension.base.struct_size = PJRT_Layouts_Extension_STRUCT_SIZE;
    extension.base.type = PJRT_Extension_Type_Layouts;
    extension.base.next = nullptr;
    extension.PJRT_Layouts_MemoryLayout_Destroy = &Destroy;
    extension.PJRT_Layouts_MemoryLayout_Serialize = &Serialize;
    extension.PJRT_Layouts_PJRT_Client_GetDefaultLayout = &ClientDefaultLayout;
    extension.PJRT_Layouts_PJRT_Buffer_MemoryLayout = &BufferLayout;
    extension.PJRT_Layouts_PJRT_Topology_GetDefaultLayout =
        &TopologyDefaultLayout;
    extension.PJRT_Layouts_PJRT_Executable_GetOutputLayouts = &OutputLayouts;
    extension.PJRT_Layouts_PJRT_Executable_GetParameterLayouts =
        &ParameterLayouts;
    return extension;
  }();
  return &layouts.base;
}

}  // namespace kiln::pjrt
