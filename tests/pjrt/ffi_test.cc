// The FFI and Profiler extensions through the loaded plugin: handlers
// written against Kiln's xla_ffi_c_api.h, registered with
// PJRT_FFI_Register_Handler, run inside executables with their buffers,
// attributes, user data and errors; a profiler session sees the executes
// and their steps.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pjrt/extensions.h"
#include "plugin_harness.h"
#include "proto/xplane.pb.h"
#include "xla_ffi_c_api.h"

namespace kiln::testing {
namespace {

// --- Handlers, written against the C API alone -------------------------------

// Answers the runtime's metadata query (a call frame carrying the metadata
// extension) with `major`.`minor`; true when the frame was such a query.
bool AnswerMetadata(XLA_FFI_CallFrame* frame, int major = XLA_FFI_API_MAJOR) {
  if (frame->extension_start == nullptr ||
      frame->extension_start->type != XLA_FFI_Extension_Metadata) {
    return false;
  }
  auto* extension =
      reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
  extension->metadata->api_version.major_version = major;
  extension->metadata->api_version.minor_version = XLA_FFI_API_MINOR;
  return true;
}

XLA_FFI_Error* Fail(XLA_FFI_CallFrame* frame, const char* message) {
  XLA_FFI_Error_Create_Args args{};
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.message = message;
  args.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
  return frame->api->XLA_FFI_Error_Create(&args);
}

// The attribute `name` (attributes are sorted by name), or null.
void* FindAttr(const XLA_FFI_Attrs& attrs, std::string_view name,
               XLA_FFI_AttrType type) {
  for (int64_t i = 0; i < attrs.size; ++i) {
    if (std::string_view(attrs.names[i]->ptr, attrs.names[i]->len) == name &&
        attrs.types[i] == type) {
      return attrs.attrs[i];
    }
  }
  return nullptr;
}

// Writes result 0 = argument 0 + `add` (f32 vectors).
void WriteXPlus(XLA_FFI_CallFrame* frame, float add) {
  auto* x = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* y = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  for (int64_t i = 0; i < x->dims[0]; ++i) {
    static_cast<float*>(y->data)[i] =
        static_cast<const float*>(x->data)[i] + add;
  }
}

// y = a * x + b (b an i64 array as long as x); count = k + len(label):
// attributes a (f32), b (i64 array), label (string), nested = {k = i64}.
XLA_FFI_Error* Axpb(XLA_FFI_CallFrame* frame) {
  if (AnswerMetadata(frame)) return nullptr;
  if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) {
    return Fail(frame, "wrong stage");
  }
  if (frame->args.size != 1 || frame->rets.size != 2) {
    return Fail(frame, "expected 1 argument and 2 results");
  }
  // Sorted by name.
  for (int64_t i = 1; i < frame->attrs.size; ++i) {
    std::string_view before(frame->attrs.names[i - 1]->ptr,
                            frame->attrs.names[i - 1]->len);
    std::string_view here(frame->attrs.names[i]->ptr,
                          frame->attrs.names[i]->len);
    if (!(before < here)) return Fail(frame, "attributes are not sorted");
  }
  auto* a = static_cast<XLA_FFI_Scalar*>(
      FindAttr(frame->attrs, "a", XLA_FFI_AttrType_SCALAR));
  auto* b = static_cast<XLA_FFI_Array*>(
      FindAttr(frame->attrs, "b", XLA_FFI_AttrType_ARRAY));
  auto* label = static_cast<XLA_FFI_ByteSpan*>(
      FindAttr(frame->attrs, "label", XLA_FFI_AttrType_STRING));
  auto* nested = static_cast<XLA_FFI_Attrs*>(
      FindAttr(frame->attrs, "nested", XLA_FFI_AttrType_DICTIONARY));
  if (a == nullptr || a->dtype != XLA_FFI_DataType_F32 || b == nullptr ||
      b->dtype != XLA_FFI_DataType_S64 || label == nullptr ||
      nested == nullptr) {
    return Fail(frame, "missing or mistyped attributes");
  }
  auto* k = static_cast<XLA_FFI_Scalar*>(
      FindAttr(*nested, "k", XLA_FFI_AttrType_SCALAR));
  if (k == nullptr || k->dtype != XLA_FFI_DataType_S64) {
    return Fail(frame, "nested.k missing");
  }
  auto* x = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* y = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  auto* count = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[1]);
  if (x->dtype != XLA_FFI_DataType_F32 || x->rank != 1 ||
      y->dtype != XLA_FFI_DataType_F32 ||
      count->dtype != XLA_FFI_DataType_S32 || count->rank != 0 ||
      static_cast<int64_t>(b->size) != x->dims[0]) {
    return Fail(frame, "unexpected buffers");
  }
  const float scale = *static_cast<float*>(a->value);
  const auto* offsets = static_cast<const int64_t*>(b->data);
  for (int64_t i = 0; i < x->dims[0]; ++i) {
    static_cast<float*>(y->data)[i] =
        scale * static_cast<const float*>(x->data)[i] +
        static_cast<float>(offsets[i]);
  }
  *static_cast<int32_t*>(count->data) = static_cast<int32_t>(
      *static_cast<int64_t*>(k->value) + static_cast<int64_t>(label->len));
  return nullptr;
}

XLA_FFI_Error* AlwaysFails(XLA_FFI_CallFrame* frame) {
  if (AnswerMetadata(frame)) return nullptr;
  return Fail(frame, "the handler refuses");
}

XLA_FFI_TypeId g_user_type{0};

// y = x + the float the execution's user data points to.
XLA_FFI_Error* AddUserData(XLA_FFI_CallFrame* frame) {
  if (AnswerMetadata(frame)) return nullptr;
  XLA_FFI_ExecutionContext_Get_Args get{};
  get.struct_size = XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE;
  get.ctx = frame->ctx;
  get.type_id = &g_user_type;
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_ExecutionContext_Get(&get)) {
    return error;
  }
  // No stream on a CPU device.
  XLA_FFI_Stream_Get_Args stream{};
  stream.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
  stream.ctx = frame->ctx;
  stream.stream = &stream;
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_Stream_Get(&stream)) {
    return error;
  }
  if (stream.stream != nullptr) return Fail(frame, "a stream on a CPU device");
  const float add = *static_cast<float*>(get.data);
  WriteXPlus(frame, add);
  return nullptr;
}

// The plugin's XLA_FFI_Api, as the first call frame showed it.
const XLA_FFI_Api* g_ffi_api = nullptr;

XLA_FFI_Error* RememberApi(XLA_FFI_CallFrame* frame) {
  g_ffi_api = frame->api;
  AnswerMetadata(frame);
  return nullptr;
}

// A stateful handler: the instantiate stage makes the state (a float read
// from attribute `start`), the execute stage writes x + state.
XLA_FFI_TypeId g_state_type{0};
bool g_state_deleted = false;

XLA_FFI_Error* StatefulInstantiate(XLA_FFI_CallFrame* frame) {
  if (AnswerMetadata(frame)) return nullptr;
  if (frame->stage != XLA_FFI_ExecutionStage_INSTANTIATE) {
    return Fail(frame, "instantiate called at another stage");
  }
  auto* start = static_cast<XLA_FFI_Scalar*>(
      FindAttr(frame->attrs, "start", XLA_FFI_AttrType_SCALAR));
  if (start == nullptr || start->dtype != XLA_FFI_DataType_F32) {
    return Fail(frame, "attribute start missing");
  }
  XLA_FFI_State_Set_Args set{};
  set.struct_size = XLA_FFI_State_Set_Args_STRUCT_SIZE;
  set.ctx = frame->ctx;
  set.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  set.type_id = &g_state_type;
  set.state = new float(*static_cast<float*>(start->value));
  return frame->api->XLA_FFI_State_Set(&set);
}

XLA_FFI_Error* StatefulExecute(XLA_FFI_CallFrame* frame) {
  if (AnswerMetadata(frame)) return nullptr;
  XLA_FFI_State_Get_Args get{};
  get.struct_size = XLA_FFI_State_Get_Args_STRUCT_SIZE;
  get.ctx = frame->ctx;
  get.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  get.type_id = &g_state_type;
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_State_Get(&get)) return error;
  const float add = *static_cast<float*>(get.state);
  WriteXPlus(frame, add);
  return nullptr;
}

// Finishes later: y = 2 * x written by another thread, which then completes
// the future it returned (or fails it when attribute `fail` is true).
XLA_FFI_Error* Later(XLA_FFI_CallFrame* frame) {
  if (AnswerMetadata(frame)) return nullptr;
  XLA_FFI_Future_Create_Args create{};
  create.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_Future_Create(&create)) {
    return error;
  }
  auto* fail = static_cast<XLA_FFI_Scalar*>(
      FindAttr(frame->attrs, "fail", XLA_FFI_AttrType_SCALAR));
  const bool should_fail = fail != nullptr && *static_cast<bool*>(fail->value);
  auto* x = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* y = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  const XLA_FFI_Api* api = frame->api;
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int64_t i = 0; i < x->dims[0]; ++i) {
      static_cast<float*>(y->data)[i] =
          2 * static_cast<const float*>(x->data)[i];
    }
    if (should_fail) {
      XLA_FFI_Error_Create_Args error{};
      error.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
      error.message = "failed later";
      error.errc = XLA_FFI_Error_Code_ABORTED;
      XLA_FFI_Future_SetError_Args set{};
      set.struct_size = XLA_FFI_Future_SetError_Args_STRUCT_SIZE;
      set.future = create.future;
      set.error = api->XLA_FFI_Error_Create(&error);
      api->XLA_FFI_Future_SetError(&set);
    } else {
      XLA_FFI_Future_SetAvailable_Args set{};
      set.struct_size = XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE;
      set.future = create.future;
      api->XLA_FFI_Future_SetAvailable(&set);
    }
  }).detach();
  frame->future = create.future;
  return nullptr;
}

// Built for a future major version of the FFI.
XLA_FFI_Error* FromTheFuture(XLA_FFI_CallFrame* frame) {
  if (AnswerMetadata(frame, XLA_FFI_API_MAJOR + 1)) return nullptr;
  return nullptr;
}

constexpr char kAxpbProgram[] = R"mlir(
func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>) {
  %0:2 = stablehlo.custom_call @kiln_test_axpb(%arg0) {backend_config = "", mhlo.backend_config = {a = 2.000000e+00 : f32, b = array<i64: 1, 2, 3, 4>, label = "abc", nested = {k = 7 : i64}}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<i32>
}
)mlir";

std::string OneTargetProgram(const std::string& target) {
  return R"mlir(
func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @)mlir" +
         target +
         R"mlir((%arg0) {backend_config = "", mhlo.backend_config = {}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";
}

class FfiTest : public PluginTest {
 protected:
  template <typename T>
  const T* FindExtension(PJRT_Extension_Type type) {
    for (const PJRT_Extension_Base* base = api_->extension_start;
         base != nullptr; base = base->next) {
      if (base->type == type) return reinterpret_cast<const T*>(base);
    }
    return nullptr;
  }

  const PJRT_FFI_Extension* Ffi() {
    const auto* ffi =
        FindExtension<PJRT_FFI_Extension>(PJRT_Extension_Type_FFI);
    EXPECT_NE(ffi, nullptr);
    return ffi;
  }

  ErrorInfo Register(const char* name, XLA_FFI_Handler* handler,
                     const char* platform = "kiln", int api_version = 1) {
    auto args = KILN_ARGS(PJRT_FFI_Register_Handler_Args);
    args.target_name = name;
    args.target_name_size = std::strlen(name);
    args.api_version = api_version;
    args.handler = reinterpret_cast<void*>(handler);
    args.platform_name = platform;
    args.platform_name_size = std::strlen(platform);
    return TakeError(api_, Ffi()->register_handler(&args));
  }

  // Runs a one-argument program; returns the execution's error.
  ErrorInfo RunOne(PJRT_LoadedExecutable* loaded, PJRT_Buffer* x,
                   std::vector<PJRT_Buffer*>* outputs,
                   PJRT_ExecuteContext* context = nullptr) {
    PJRT_ExecuteOptions options{};
    options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
    options.context = context;
    const size_t num_outputs = NumOutputs(loaded);
    outputs->assign(num_outputs, nullptr);
    PJRT_Buffer* const arguments[] = {x};
    PJRT_Buffer* const* argument_lists[] = {arguments};
    PJRT_Buffer** output_lists[] = {outputs->data()};
    PJRT_Event* done = nullptr;
    auto args = KILN_ARGS(PJRT_LoadedExecutable_Execute_Args);
    args.executable = loaded;
    args.options = &options;
    args.argument_lists = argument_lists;
    args.num_devices = 1;
    args.num_args = 1;
    args.output_lists = output_lists;
    args.device_complete_events = &done;
    ErrorInfo error =
        TakeError(api_, api_->PJRT_LoadedExecutable_Execute(&args));
    if (error.code != PJRT_Error_Code_OK) return error;
    return AwaitAndDestroy(done);
  }
};

TEST_F(FfiTest, HandlerGetsBuffersAndAttributes) {
  ErrorInfo registered = Register("kiln_test_axpb", &Axpb);
  ASSERT_EQ(registered.code, PJRT_Error_Code_OK) << Describe(registered);
  // Registering the same function again is fine.
  EXPECT_EQ(Register("kiln_test_axpb", &Axpb).code, PJRT_Error_Code_OK);
  // Another function under the same name is not.
  EXPECT_EQ(Register("kiln_test_axpb", &AlwaysFails).code,
            PJRT_Error_Code_ALREADY_EXISTS);

  PJRT_LoadedExecutable* loaded = Compile(kAxpbProgram);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* x = UploadF32({1, -2, 0.5f, 10}, {4});
  std::vector<PJRT_Buffer*> outputs;
  ErrorInfo ran = RunOne(loaded, x, &outputs);
  ASSERT_EQ(ran.code, PJRT_Error_Code_OK) << Describe(ran);
  // 2 * x + [1, 2, 3, 4], by hand.
  EXPECT_EQ(DownloadF32(outputs[0]), (std::vector<float>{3, -2, 4, 24}));
  std::vector<uint8_t> count = Download(outputs[1]);
  ASSERT_EQ(count.size(), 4u);
  int32_t value;
  std::memcpy(&value, count.data(), 4);
  EXPECT_EQ(value, 7 + 3);  // k + len("abc")
  DestroyBuffers(outputs);
  DestroyBuffer(x);
  DestroyLoadedExecutable(loaded);
}

TEST_F(FfiTest, ApiVersionFourSpellingRunsTheHandler) {
  ASSERT_EQ(Register("kiln_test_axpb", &Axpb).code, PJRT_Error_Code_OK);
  std::string program = kAxpbProgram;
  program.replace(program.find("backend_config = \"\", "),
                  std::strlen("backend_config = \"\", "),
                  "api_version = 4 : i32, ");
  PJRT_LoadedExecutable* loaded = Compile(program);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* x = UploadF32({0, 0, 0, 0}, {4});
  std::vector<PJRT_Buffer*> outputs;
  ErrorInfo ran = RunOne(loaded, x, &outputs);
  ASSERT_EQ(ran.code, PJRT_Error_Code_OK) << Describe(ran);
  EXPECT_EQ(DownloadF32(outputs[0]), (std::vector<float>{1, 2, 3, 4}));
  DestroyBuffers(outputs);
  DestroyBuffer(x);
  DestroyLoadedExecutable(loaded);
}

TEST_F(FfiTest, HandlerErrorFailsTheExecutionWithItsMessage) {
  ASSERT_EQ(Register("kiln_test_fails", &AlwaysFails).code, PJRT_Error_Code_OK);
  PJRT_LoadedExecutable* loaded = Compile(OneTargetProgram("kiln_test_fails"));
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* x = UploadF32({1, 2, 3, 4}, {4});
  std::vector<PJRT_Buffer*> outputs;
  ErrorInfo ran = RunOne(loaded, x, &outputs);
  EXPECT_EQ(ran.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(ran.message.find("the handler refuses"), std::string::npos)
      << ran.message;
  EXPECT_NE(ran.message.find("kiln_test_fails"), std::string::npos)
      << ran.message;
  DestroyBuffers(outputs);
  DestroyBuffer(x);
  DestroyLoadedExecutable(loaded);
}

TEST_F(FfiTest, UnregisteredTargetIsUnimplementedNamingIt) {
  PJRT_LoadedExecutable* loaded = nullptr;
  ErrorInfo error = TryCompile(OneTargetProgram("kiln_test_nobody_registered"),
                               JaxCompileOptions(), &loaded);
  EXPECT_EQ(error.code, PJRT_Error_Code_UNIMPLEMENTED);
  EXPECT_NE(error.message.find("kiln_test_nobody_registered"),
            std::string::npos)
      << error.message;
  EXPECT_EQ(loaded, nullptr);
}

TEST_F(FfiTest, RegistrationChecksPlatformVersionAndApi) {
  EXPECT_EQ(Register("kiln_test_gpu", &Axpb, "CUDA").code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(Register("kiln_test_future", &FromTheFuture).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(Register("kiln_test_legacy", &Axpb, "kiln", 0).code,
            PJRT_Error_Code_UNIMPLEMENTED);
  // A Host registration runs on Kiln too (Kiln's devices are CPUs).
  EXPECT_EQ(Register("kiln_test_host", &Axpb, "Host").code, PJRT_Error_Code_OK);
  auto null_handler = KILN_ARGS(PJRT_FFI_Register_Handler_Args);
  null_handler.target_name = "kiln_test_null";
  null_handler.target_name_size = 14;
  null_handler.api_version = 1;
  null_handler.platform_name = "kiln";
  null_handler.platform_name_size = 4;
  EXPECT_EQ(TakeError(api_, Ffi()->register_handler(&null_handler)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(TakeError(api_, Ffi()->register_handler(nullptr)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST_F(FfiTest, UserDataReachesTheHandlerThroughTheExecuteContext) {
  auto type = KILN_ARGS(PJRT_FFI_TypeID_Register_Args);
  type.type_name = "kiln_test_float";
  type.type_name_size = std::strlen(type.type_name);
  PJRT_ASSERT_OK(api_, Ffi()->type_id_register(&type));
  ASSERT_GT(type.type_id, 0);
  // The same name again: the same id.
  auto again = type;
  again.type_id = 0;
  PJRT_ASSERT_OK(api_, Ffi()->type_id_register(&again));
  EXPECT_EQ(again.type_id, type.type_id);
  g_user_type.type_id = type.type_id;

  ASSERT_EQ(Register("kiln_test_user_data", &AddUserData).code,
            PJRT_Error_Code_OK);
  auto create = KILN_ARGS(PJRT_ExecuteContext_Create_Args);
  PJRT_ASSERT_OK(api_, api_->PJRT_ExecuteContext_Create(&create));
  static bool deleted = false;
  auto* value = new float(100);
  auto add = KILN_ARGS(PJRT_FFI_UserData_Add_Args);
  add.context = create.context;
  add.user_data.type_id = type.type_id;
  add.user_data.data = value;
  add.user_data.deleter = [](void* data) {
    delete static_cast<float*>(data);
    deleted = true;
  };
  PJRT_ASSERT_OK(api_, Ffi()->user_data_add(&add));
  // One value per type.
  EXPECT_EQ(TakeError(api_, Ffi()->user_data_add(&add)).code,
            PJRT_Error_Code_ALREADY_EXISTS);

  PJRT_LoadedExecutable* loaded =
      Compile(OneTargetProgram("kiln_test_user_data"));
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* x = UploadF32({1, 2, 3, 4}, {4});
  std::vector<PJRT_Buffer*> outputs;
  ErrorInfo ran = RunOne(loaded, x, &outputs, create.context);
  ASSERT_EQ(ran.code, PJRT_Error_Code_OK) << Describe(ran);
  EXPECT_EQ(DownloadF32(outputs[0]), (std::vector<float>{101, 102, 103, 104}));
  DestroyBuffers(outputs);
  // Without the context the handler's lookup fails, and says so.
  ran = RunOne(loaded, x, &outputs);
  EXPECT_EQ(ran.code, PJRT_Error_Code_NOT_FOUND) << Describe(ran);
  EXPECT_NE(ran.message.find("user data"), std::string::npos) << ran.message;
  DestroyBuffers(outputs);

  auto destroy = KILN_ARGS(PJRT_ExecuteContext_Destroy_Args);
  destroy.context = create.context;
  PJRT_ASSERT_OK(api_, api_->PJRT_ExecuteContext_Destroy(&destroy));
  EXPECT_TRUE(deleted);
  DestroyBuffer(x);
  DestroyLoadedExecutable(loaded);
}

TEST_F(FfiTest, StatefulHandlerThroughKilnsFfiApi) {
  // Kiln's XLA_FFI_Api, from a call frame (its metadata query).
  ASSERT_EQ(Register("kiln_test_remember_api", &RememberApi).code,
            PJRT_Error_Code_OK);
  ASSERT_NE(g_ffi_api, nullptr);
  EXPECT_EQ(g_ffi_api->api_version.major_version, XLA_FFI_API_MAJOR);
  EXPECT_EQ(g_ffi_api->api_version.minor_version, XLA_FFI_API_MINOR);

  XLA_FFI_TypeInfo info{};
  info.struct_size = XLA_FFI_TypeInfo_STRUCT_SIZE;
  info.deleter = [](void* state) {
    delete static_cast<float*>(state);
    g_state_deleted = true;
  };
  XLA_FFI_Type_Register_Args type{};
  type.struct_size = sizeof(type);
  type.name = {"kiln_test_state", std::strlen("kiln_test_state")};
  type.type_id = &g_state_type;
  type.type_info = &info;
  ASSERT_EQ(g_ffi_api->XLA_FFI_Type_Register(&type), nullptr);
  ASSERT_GT(g_state_type.type_id, 0);

  XLA_FFI_Handler_Register_Args handler{};
  handler.struct_size = XLA_FFI_Handler_Register_Args_STRUCT_SIZE;
  handler.name = {"kiln_test_stateful", std::strlen("kiln_test_stateful")};
  handler.platform = {"kiln", 4};
  handler.bundle.instantiate = &StatefulInstantiate;
  handler.bundle.execute = &StatefulExecute;
  ASSERT_EQ(g_ffi_api->XLA_FFI_Handler_Register(&handler), nullptr);

  std::string program = OneTargetProgram("kiln_test_stateful");
  program.replace(program.find("mhlo.backend_config = {}"),
                  std::strlen("mhlo.backend_config = {}"),
                  "mhlo.backend_config = {start = 5.000000e-01 : f32}");
  PJRT_LoadedExecutable* loaded = Compile(program);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* x = UploadF32({1, 2, 3, 4}, {4});
  for (int i = 0; i < 2; ++i) {
    std::vector<PJRT_Buffer*> outputs;
    ErrorInfo ran = RunOne(loaded, x, &outputs);
    ASSERT_EQ(ran.code, PJRT_Error_Code_OK) << Describe(ran);
    EXPECT_EQ(DownloadF32(outputs[0]),
              (std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f}));
    DestroyBuffers(outputs);
  }
  DestroyBuffer(x);
  EXPECT_FALSE(g_state_deleted);
  // The state lives as long as the executable's plans.
  DestroyLoadedExecutable(loaded);
  EXPECT_TRUE(g_state_deleted);

  // A handler error through the table: message and code survive.
  XLA_FFI_Error_Create_Args create{};
  create.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  create.message = "kept";
  create.errc = XLA_FFI_Error_Code_OUT_OF_RANGE;
  XLA_FFI_Error* error = g_ffi_api->XLA_FFI_Error_Create(&create);
  XLA_FFI_Error_GetMessage_Args message{};
  message.struct_size = XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE;
  message.error = error;
  g_ffi_api->XLA_FFI_Error_GetMessage(&message);
  EXPECT_STREQ(message.message, "kept");
  XLA_FFI_Error_Destroy_Args destroy{};
  destroy.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
  destroy.error = error;
  g_ffi_api->XLA_FFI_Error_Destroy(&destroy);
}

TEST_F(FfiTest, FutureCompletesTheStepWhenTheHandlerIsDone) {
  ASSERT_EQ(Register("kiln_test_later", &Later).code, PJRT_Error_Code_OK);
  PJRT_Buffer* x = UploadF32({1, 2, 3, 4}, {4});
  for (bool fail : {false, true}) {
    std::string program = OneTargetProgram("kiln_test_later");
    program.replace(program.find("mhlo.backend_config = {}"),
                    std::strlen("mhlo.backend_config = {}"),
                    fail ? "mhlo.backend_config = {fail = true}"
                         : "mhlo.backend_config = {fail = false}");
    PJRT_LoadedExecutable* loaded = Compile(program);
    ASSERT_NE(loaded, nullptr);
    std::vector<PJRT_Buffer*> outputs;
    ErrorInfo ran = RunOne(loaded, x, &outputs);
    if (fail) {
      EXPECT_EQ(ran.code, PJRT_Error_Code_ABORTED) << Describe(ran);
      EXPECT_NE(ran.message.find("failed later"), std::string::npos);
    } else {
      ASSERT_EQ(ran.code, PJRT_Error_Code_OK) << Describe(ran);
      EXPECT_EQ(DownloadF32(outputs[0]), (std::vector<float>{2, 4, 6, 8}));
    }
    DestroyBuffers(outputs);
    DestroyLoadedExecutable(loaded);
  }
  DestroyBuffer(x);
}

TEST_F(FfiTest, ProfilerSessionSeesExecutesAndSteps) {
  const auto* extension =
      FindExtension<PJRT_Profiler_Extension>(PJRT_Extension_Type_Profiler);
  ASSERT_NE(extension, nullptr);
  PLUGIN_Profiler_Api* profiler_api = extension->profiler_api;
  ASSERT_NE(profiler_api, nullptr);

  PLUGIN_Profiler_Create_Args create{};
  create.struct_size = sizeof(create);
  ASSERT_EQ(profiler_api->create(&create), nullptr);
  PLUGIN_Profiler_Start_Args start{sizeof(start), create.profiler};
  ASSERT_EQ(profiler_api->start(&start), nullptr);

  constexpr char kProgram[] = R"mlir(
module @jit_profiled {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.sine %arg0 : tensor<4xf32>
    %1 = stablehlo.dot_general %0, %0, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %3 = stablehlo.add %2, %arg0 : tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}
)mlir";
  PJRT_LoadedExecutable* loaded = Compile(kProgram);
  ASSERT_NE(loaded, nullptr);
  PJRT_Buffer* x = UploadF32({1, 2, 3, 4}, {4});
  std::vector<PJRT_Buffer*> outputs;
  for (int i = 0; i < 2; ++i) {
    ErrorInfo ran = RunOne(loaded, x, &outputs);
    ASSERT_EQ(ran.code, PJRT_Error_Code_OK) << Describe(ran);
    DestroyBuffers(outputs);
  }
  PLUGIN_Profiler_Stop_Args stop{sizeof(stop), create.profiler};
  ASSERT_EQ(profiler_api->stop(&stop), nullptr);

  // The two-call protocol: the size first, then the bytes.
  PLUGIN_Profiler_CollectData_Args collect{};
  collect.struct_size = sizeof(collect);
  collect.profiler = create.profiler;
  ASSERT_EQ(profiler_api->collect_data(&collect), nullptr);
  ASSERT_GT(collect.buffer_size_in_bytes, 0u);
  std::vector<uint8_t> bytes(collect.buffer_size_in_bytes);
  collect.buffer = bytes.data();
  ASSERT_EQ(profiler_api->collect_data(&collect), nullptr);

  tensorflow::profiler::XSpace space;
  ASSERT_TRUE(
      space.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  ASSERT_EQ(space.planes_size(), 1);
  const tensorflow::profiler::XPlane& plane = space.planes(0);
  EXPECT_EQ(plane.name(), "/device:CUSTOM:0");
  std::vector<std::string> executes, steps;
  for (const auto& line : plane.lines()) {
    for (const auto& event : line.events()) {
      const std::string& name =
          plane.event_metadata().at(event.metadata_id()).name();
      (line.name() == "XLA Modules" ? executes : steps).push_back(name);
      EXPECT_GE(event.duration_ps(), 0);
    }
    EXPECT_GT(line.timestamp_ns(), 0);
  }
  EXPECT_EQ(executes,
            (std::vector<std::string>{"jit_profiled", "jit_profiled"}));
  bool saw_dot = false;
  for (const std::string& step : steps) {
    saw_dot |= step.find("dot_general") != std::string::npos;
  }
  EXPECT_TRUE(saw_dot) << "steps: " << steps.size();

  // Runs after the session do not record.
  ErrorInfo ran = RunOne(loaded, x, &outputs);
  ASSERT_EQ(ran.code, PJRT_Error_Code_OK);
  DestroyBuffers(outputs);
  PLUGIN_Profiler_Destroy_Args destroy{sizeof(destroy), create.profiler};
  EXPECT_EQ(profiler_api->destroy(&destroy), nullptr);
  DestroyBuffer(x);
  DestroyLoadedExecutable(loaded);
}

}  // namespace
}  // namespace kiln::testing
