#include "exec/ffi.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "base/strings.h"
#include "exec/kernels/ffi_call.h"

// The opaque handles of the table.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  std::string message;
};

namespace kiln::exec {
namespace {

// A struct from a caller is at least as large as the fields Kiln reads.
bool SizeAtLeast(const void* args, size_t struct_size, size_t needed) {
  return args != nullptr && struct_size >= needed;
}

XLA_FFI_Error* NewError(XLA_FFI_Error_Code code, std::string message) {
  return new XLA_FFI_Error{code, std::move(message)};
}

XLA_FFI_Error* StructTooSmall(const char* name, size_t given, size_t needed) {
  return NewError(
      XLA_FFI_Error_Code_INVALID_ARGUMENT,
      StrCat(name, " has struct_size ", given, "; Kiln needs ", needed,
             " (XLA FFI API ", XLA_FFI_API_MAJOR, ".", XLA_FFI_API_MINOR, ")"));
}

#define KILN_FFI_CHECK_ARGS(args, type, last)                                 \
  do {                                                                        \
    if ((args) == nullptr) {                                                  \
      return NewError(XLA_FFI_Error_Code_INVALID_ARGUMENT, #type " is null"); \
    }                                                                         \
    if (!SizeAtLeast(args, (args)->struct_size,                               \
                     XLA_FFI_STRUCT_SIZE(type, last))) {                      \
      return StructTooSmall(#type, (args)->struct_size,                       \
                            XLA_FFI_STRUCT_SIZE(type, last));                 \
    }                                                                         \
  } while (false)

std::string_view View(const XLA_FFI_ByteSpan& span) {
  return span.ptr == nullptr ? std::string_view()
                             : std::string_view(span.ptr, span.len);
}

// --- Registries -------------------------------------------------------------

struct HandlerRegistry {
  std::mutex mutex;
  // By target name, then platform.
  std::map<std::string, std::map<std::string, FfiHandler>, std::less<>>
      handlers;
};

HandlerRegistry& Handlers() {
  static HandlerRegistry* registry = new HandlerRegistry();
  return *registry;
}

struct TypeRegistry {
  std::mutex mutex;
  std::map<std::string, int64_t, std::less<>> ids;
  std::map<int64_t, void (*)(void*)> deleters;
  int64_t next_id = 1;
};

TypeRegistry& Types() {
  static TypeRegistry* registry = new TypeRegistry();
  return *registry;
}

// The platforms whose handlers Kiln runs, in order of preference.
constexpr const char* kPlatforms[] = {"kiln", "Host", "cpu"};

StatusOr<std::string> CanonicalPlatform(std::string_view platform) {
  std::string lower;
  for (char c : platform) {
    lower.push_back(
        static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (lower == "kiln") return std::string("kiln");
  if (lower == "host") return std::string("Host");
  if (lower == "cpu") return std::string("cpu");
  return InvalidArgumentError(
      "FFI handler for platform \"", platform,
      "\": Kiln runs handlers registered for \"kiln\" (or \"Host\"/\"cpu\")");
}

// Asks the handler for its metadata (a call frame carrying the metadata
// extension). Handlers older than the metadata extension answer with an
// error; those are accepted as they are.
Status CheckHandlerVersion(std::string_view name, XLA_FFI_Handler* handler) {
  XLA_FFI_Metadata metadata{};
  metadata.struct_size = sizeof(XLA_FFI_Metadata);
  metadata.api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension extension{};
  extension.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  extension.extension_base.type = XLA_FFI_Extension_Metadata;
  extension.metadata = &metadata;
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.extension_start = &extension.extension_base;
  frame.api = FfiApi();
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  frame.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  frame.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  Status status = TakeFfiError(handler(&frame));
  if (!status.ok()) return OkStatus();
  if (metadata.api_version.major_version != XLA_FFI_API_MAJOR) {
    return FailedPreconditionError(
        "FFI handler \"", name, "\" was built for XLA FFI API ",
        metadata.api_version.major_version, ".",
        metadata.api_version.minor_version, "; Kiln implements ",
        XLA_FFI_API_MAJOR, ".", XLA_FFI_API_MINOR);
  }
  return OkStatus();
}

// --- The table's functions --------------------------------------------------

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  if (args == nullptr) {
    return NewError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    "XLA_FFI_Error_Create_Args is null");
  }
  XLA_FFI_Error_Code code = args->errc;
  if (code == XLA_FFI_Error_Code_OK) code = XLA_FFI_Error_Code_UNKNOWN;
  return NewError(code, args->message != nullptr ? args->message : "");
}

void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) {
  if (args == nullptr) return;
  args->message = args->error != nullptr ? args->error->message.c_str() : "";
}

void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) {
  if (args != nullptr) delete args->error;
}

XLA_FFI_Error* HandlerRegister(XLA_FFI_Handler_Register_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_Handler_Register_Args, traits);
  return MakeFfiError(RegisterFfiHandler(View(args->name), View(args->platform),
                                         args->bundle, args->traits));
}

XLA_FFI_Error* StreamGet(XLA_FFI_Stream_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_Stream_Get_Args, stream);
  // Kiln's devices are CPU devices: there is no stream.
  args->stream = nullptr;
  return nullptr;
}

XLA_FFI_Error* TypeRegister(XLA_FFI_Type_Register_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_Type_Register_Args, type_id);
  if (args->type_id == nullptr) {
    return NewError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    "XLA_FFI_Type_Register_Args.type_id is null");
  }
  void (*deleter)(void*) = nullptr;
  if (args->struct_size >=
          XLA_FFI_STRUCT_SIZE(XLA_FFI_Type_Register_Args, type_info) &&
      args->type_info != nullptr &&
      args->type_info->struct_size >= XLA_FFI_TypeInfo_STRUCT_SIZE) {
    deleter = args->type_info->deleter;
  }
  StatusOr<int64_t> id =
      RegisterFfiType(View(args->name), args->type_id->type_id, deleter);
  if (!id.ok()) return MakeFfiError(id.status());
  args->type_id->type_id = *id;
  return nullptr;
}

XLA_FFI_Error* ExecutionContextGet(XLA_FFI_ExecutionContext_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_ExecutionContext_Get_Args, data);
  if (args->ctx == nullptr || args->type_id == nullptr) {
    return NewError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    "XLA_FFI_ExecutionContext_Get: null ctx or type_id");
  }
  void* data = args->ctx->user_data != nullptr
                   ? args->ctx->user_data->Find(args->type_id->type_id)
                   : nullptr;
  if (data == nullptr) {
    return NewError(XLA_FFI_Error_Code_NOT_FOUND,
                    StrCat("no user data of type id ", args->type_id->type_id,
                           " in the execution context"));
  }
  args->data = data;
  return nullptr;
}

XLA_FFI_Error* StateSet(XLA_FFI_State_Set_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_State_Set_Args, state);
  if (args->ctx == nullptr || args->type_id == nullptr ||
      args->ctx->state == nullptr) {
    return NewError(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                    "XLA_FFI_State_Set: state is set at the instantiate stage");
  }
  if (args->stage != XLA_FFI_ExecutionStage_INSTANTIATE) {
    return NewError(XLA_FFI_Error_Code_UNIMPLEMENTED,
                    StrCat("XLA_FFI_State_Set at stage ", args->stage,
                           ": Kiln keeps state of the instantiate stage only"));
  }
  if (*args->ctx->state != nullptr) {
    return NewError(XLA_FFI_Error_Code_ALREADY_EXISTS,
                    "XLA_FFI_State_Set: the state is already set");
  }
  *args->ctx->state = args->state;
  *args->ctx->state_type_id = args->type_id->type_id;
  return nullptr;
}

XLA_FFI_Error* StateGet(XLA_FFI_State_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_State_Get_Args, state);
  if (args->ctx == nullptr || args->type_id == nullptr) {
    return NewError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    "XLA_FFI_State_Get: null ctx or type_id");
  }
  if (args->stage != XLA_FFI_ExecutionStage_INSTANTIATE ||
      args->ctx->state == nullptr || *args->ctx->state == nullptr) {
    return NewError(
        XLA_FFI_Error_Code_NOT_FOUND,
        StrCat("no state of stage ", args->stage, " for this call"));
  }
  if (*args->ctx->state_type_id != args->type_id->type_id) {
    return NewError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    StrCat("the state has type id ", *args->ctx->state_type_id,
                           "; asked for type id ", args->type_id->type_id));
  }
  args->state = *args->ctx->state;
  return nullptr;
}

XLA_FFI_Error* DeviceMemoryAllocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_DeviceMemory_Allocate_Args, data);
  size_t alignment =
      std::max<size_t>(args->alignment, alignof(std::max_align_t));
  if ((alignment & (alignment - 1)) != 0) {
    return NewError(
        XLA_FFI_Error_Code_INVALID_ARGUMENT,
        StrCat("alignment ", args->alignment, " is not a power of two"));
  }
  size_t size = (args->size + alignment - 1) / alignment * alignment;
  void* data = std::aligned_alloc(alignment, size == 0 ? alignment : size);
  if (data == nullptr) {
    return NewError(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                    StrCat("cannot allocate ", args->size, " bytes"));
  }
  args->data = data;
  return nullptr;
}

XLA_FFI_Error* DeviceMemoryFree(XLA_FFI_DeviceMemory_Free_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_DeviceMemory_Free_Args, data);
  std::free(args->data);
  return nullptr;
}

// Tasks run at once on the calling thread, which XLA's contract allows
// (and which cannot deadlock a handler that waits for its tasks).
XLA_FFI_Error* ThreadPoolSchedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_ThreadPool_Schedule_Args, data);
  if (args->task == nullptr) {
    return NewError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    "XLA_FFI_ThreadPool_Schedule_Args.task is null");
  }
  args->task(args->data);
  return nullptr;
}

XLA_FFI_Error* ThreadPoolNumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_ThreadPool_NumThreads_Args, num_threads);
  if (args->num_threads == nullptr) {
    return NewError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    "XLA_FFI_ThreadPool_NumThreads_Args.num_threads is null");
  }
  *args->num_threads = 1;
  return nullptr;
}

XLA_FFI_Error* FutureCreate(XLA_FFI_Future_Create_Args* args) {
  if (args == nullptr ||
      args->struct_size < XLA_FFI_Future_Create_Args_STRUCT_SIZE) {
    return NewError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    "XLA_FFI_Future_Create_Args is null or too small");
  }
  args->future = NewFfiFuture();
  return nullptr;
}

XLA_FFI_Error* FutureSetAvailable(XLA_FFI_Future_SetAvailable_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_Future_SetAvailable_Args, future);
  return MakeFfiError(CompleteFfiFuture(args->future, OkStatus()));
}

XLA_FFI_Error* FutureSetError(XLA_FFI_Future_SetError_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_Future_SetError_Args, error);
  Status status = TakeFfiError(args->error);
  if (status.ok()) status = UnknownError("the FFI future failed");
  return MakeFfiError(CompleteFfiFuture(args->future, std::move(status)));
}

XLA_FFI_Error* RunIdGet(XLA_FFI_RunId_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_RunId_Get_Args, run_id);
  args->run_id = args->ctx != nullptr ? args->ctx->run_id : 0;
  return nullptr;
}

XLA_FFI_Error* DeviceOrdinalGet(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  KILN_FFI_CHECK_ARGS(args, XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal);
  args->device_ordinal = args->ctx != nullptr ? args->ctx->device_ordinal : 0;
  return nullptr;
}

#undef KILN_FFI_CHECK_ARGS

}  // namespace

const XLA_FFI_Api* FfiApi() {
  static const XLA_FFI_Api api = [] {
    XLA_FFI_Api table{};
    table.struct_size = XLA_FFI_Api_STRUCT_SIZE;
    table.api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
    table.api_version.major_version = XLA_FFI_API_MAJOR;
    table.api_version.minor_version = XLA_FFI_API_MINOR;
    table.internal_api = nullptr;  // XLA's own internals; Kiln has none
    table.XLA_FFI_Error_Create = &ErrorCreate;
    table.XLA_FFI_Error_GetMessage = &ErrorGetMessage;
    table.XLA_FFI_Error_Destroy = &ErrorDestroy;
    table.XLA_FFI_Handler_Register = &HandlerRegister;
    table.XLA_FFI_Stream_Get = &StreamGet;
    table.XLA_FFI_Type_Register = &TypeRegister;
    table.XLA_FFI_ExecutionContext_Get = &ExecutionContextGet;
    table.XLA_FFI_State_Set = &StateSet;
    table.XLA_FFI_State_Get = &StateGet;
    table.XLA_FFI_DeviceMemory_Allocate = &DeviceMemoryAllocate;
    table.XLA_FFI_DeviceMemory_Free = &DeviceMemoryFree;
    table.XLA_FFI_ThreadPool_Schedule = &ThreadPoolSchedule;
    table.XLA_FFI_ThreadPool_NumThreads = &ThreadPoolNumThreads;
    table.XLA_FFI_Future_Create = &FutureCreate;
    table.XLA_FFI_Future_SetAvailable = &FutureSetAvailable;
    table.XLA_FFI_Future_SetError = &FutureSetError;
    table.XLA_FFI_RunId_Get = &RunIdGet;
    table.XLA_FFI_DeviceOrdinal_Get = &DeviceOrdinalGet;
    return table;
  }();
  return &api;
}

Status RegisterFfiHandler(std::string_view name, std::string_view platform,
                          const XLA_FFI_Handler_Bundle& bundle,
                          XLA_FFI_Handler_Traits traits) {
  if (name.empty()) {
    return InvalidArgumentError("FFI handler registration without a name");
  }
  if (bundle.execute == nullptr) {
    return InvalidArgumentError("FFI handler \"", name,
                                "\" has no execute handler");
  }
  ASSIGN_OR_RETURN(std::string canonical, CanonicalPlatform(platform));
  RETURN_IF_ERROR(CheckHandlerVersion(name, bundle.execute));
  HandlerRegistry& registry = Handlers();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto& by_platform = registry.handlers[std::string(name)];
  auto it = by_platform.find(canonical);
  if (it != by_platform.end()) {
    if (it->second.bundle.execute == bundle.execute) return OkStatus();
    return AlreadyExistsError("FFI handler \"", name,
                              "\" is already registered for platform \"",
                              canonical, "\" with another function");
  }
  by_platform[canonical] = FfiHandler{bundle, traits, canonical};
  return OkStatus();
}

std::optional<FfiHandler> FindFfiHandler(std::string_view name) {
  HandlerRegistry& registry = Handlers();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.handlers.find(name);
  if (it == registry.handlers.end()) return std::nullopt;
  for (const char* platform : kPlatforms) {
    auto found = it->second.find(platform);
    if (found != it->second.end()) return found->second;
  }
  return std::nullopt;
}

StatusOr<int64_t> RegisterFfiType(std::string_view name, int64_t type_id,
                                  void (*deleter)(void*)) {
  if (name.empty()) {
    return InvalidArgumentError("FFI type registration without a name");
  }
  TypeRegistry& registry = Types();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.ids.find(name);
  if (it != registry.ids.end()) {
    if (type_id != 0 && type_id != it->second) {
      return InvalidArgumentError("FFI type \"", name, "\" has type id ",
                                  it->second, "; given ", type_id);
    }
    if (deleter != nullptr) registry.deleters[it->second] = deleter;
    return it->second;
  }
  if (type_id == 0) {
    type_id = registry.next_id;
  } else {
    for (const auto& [other, id] : registry.ids) {
      if (id == type_id) {
        return AlreadyExistsError("FFI type id ", type_id, " of \"", name,
                                  "\" is taken by \"", other, "\"");
      }
    }
  }
  registry.next_id = std::max(registry.next_id, type_id + 1);
  registry.ids.emplace(std::string(name), type_id);
  if (deleter != nullptr) registry.deleters[type_id] = deleter;
  return type_id;
}

void (*FfiTypeDeleter(int64_t type_id))(void*) {
  TypeRegistry& registry = Types();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.deleters.find(type_id);
  return it == registry.deleters.end() ? nullptr : it->second;
}

FfiUserData::~FfiUserData() {
  for (auto& [id, entry] : entries_) {
    if (entry.deleter != nullptr) entry.deleter(entry.data);
  }
}

Status FfiUserData::Add(int64_t type_id, void* data, void (*deleter)(void*)) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!entries_.emplace(type_id, Entry{data, deleter}).second) {
    return AlreadyExistsError(
        "the execute context already has user data of "
        "type id ",
        type_id);
  }
  return OkStatus();
}

void* FfiUserData::Find(int64_t type_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(type_id);
  return it == entries_.end() ? nullptr : it->second.data;
}

Status TakeFfiError(XLA_FFI_Error* error) {
  if (error == nullptr) return OkStatus();
  int code = static_cast<int>(error->code);
  if (code <= 0 || code > static_cast<int>(StatusCode::kUnauthenticated)) {
    code = static_cast<int>(StatusCode::kUnknown);
  }
  Status status(static_cast<StatusCode>(code),
                error->message.empty() ? "(no message)" : error->message);
  delete error;
  return status;
}

XLA_FFI_Error* MakeFfiError(const Status& status) {
  if (status.ok()) return nullptr;
  return NewError(static_cast<XLA_FFI_Error_Code>(status.code()),
                  std::string(status.message()));
}

}  // namespace kiln::exec
