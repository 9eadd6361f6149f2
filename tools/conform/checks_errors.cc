// Error paths: what a plugin must refuse with an error (wrong arguments,
// deleted buffers, bad programs, unknown devices, short host buffers), and,
// as robustness checks, what the C API leaves undefined (null and foreign
// handles, a zero struct_size).
#include "tools/conform/programs.h"

namespace kiln::conform {
namespace {

using client::Buffer;

StatusOr<std::unique_ptr<client::Executable>> CompileAdd(
    const CheckContext& context) {
  return CompileFor(context, AddProgram().text, FirstDevice(context));
}

// An execution's own error (or OK), apart from errors setting it up.
struct ExecutionOutcome {
  Status status;
};

// Runs add_f32 (two f32[4] parameters) on `arrays`. Compiling and
// uploading must succeed: their errors are the check's.

StatusOr<ExecutionOutcome> ExecuteAddWith(
    const CheckContext& context, const std::vector<HostArray>& arrays) {
  ASSIGN_OR_RETURN(auto executable, CompileAdd(context));
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<Buffer*> arguments;
  for (const HostArray& array : arrays) {
    ASSIGN_OR_RETURN(auto buffer, Upload(context, array, FirstDevice(context)));
    arguments.push_back(buffer.get());
    buffers.push_back(std::move(buffer));
  }
  return ExecutionOutcome{ExecutionError(*executable, arguments)};
}

// What an execution on `arrays` gave, as ExpectRejected judges it.
StatusOr<std::string> ExpectExecutionRejected(
    const CheckContext& context, const std::vector<HostArray>& arrays,
    std::string_view what) {
  ASSIGN_OR_RETURN(ExecutionOutcome execution, ExecuteAddWith(context, arrays));
  return ExpectRejected(execution.status, what);
}

HostArray F32x4() {
  return MakeArray<float>(PJRT_Buffer_Type_F32, {4}, {1, 2, 3, 4});
}

StatusOr<std::string> ArgumentCount(CheckContext& context) {
  return ExpectExecutionRejected(
      context, {F32x4()}, "executing add_f32 (2 parameters) with 1 argument");
}

StatusOr<std::string> ArgumentShape(CheckContext& context) {
  // f32[2,2] has the bytes of f32[4]: only the shape is wrong.
  HostArray square =
      MakeArray<float>(PJRT_Buffer_Type_F32, {2, 2}, {1, 2, 3, 4});
  return ExpectExecutionRejected(
      context, {square, square},
      "executing add_f32 (f32[4] parameters) on f32[2,2]");
}

StatusOr<std::string> ArgumentType(CheckContext& context) {
  HostArray integers =
      MakeArray<int32_t>(PJRT_Buffer_Type_S32, {4}, {1, 2, 3, 4});
  return ExpectExecutionRejected(
      context, {integers, integers},
      "executing add_f32 (f32[4] parameters) on s32[4]");
}

StatusOr<std::string> DeletedArgument(CheckContext& context) {
  ASSIGN_OR_RETURN(auto executable, CompileAdd(context));
  ASSIGN_OR_RETURN(auto a, Upload(context, F32x4(), FirstDevice(context)));
  ASSIGN_OR_RETURN(auto b, Upload(context, F32x4(), FirstDevice(context)));
  RETURN_IF_ERROR(NamingSlot(b->Delete(), "PJRT_Buffer_Delete"));
  return ExpectRejected(ExecutionError(*executable, {a.get(), b.get()}),
                        "executing with a deleted argument");
}

StatusOr<std::string> CompileRejects(const CheckContext& context,
                                     std::string_view program,
                                     std::string_view what) {
  auto compiled = CompileFor(context, program, FirstDevice(context));
  return ExpectRejected(compiled.status().ok() ? OkStatus() : compiled.status(),
                        what);
}

StatusOr<std::string> ProgramThatDoesNotParse(CheckContext& context) {
  return CompileRejects(context, "this is not a program {",
                        "compiling text that "
                        "does not parse");
}

StatusOr<std::string> ProgramWithTypeError(CheckContext& context) {
  // The add's operands disagree with its declared type.
  constexpr char kBadTypes[] = R"mlir(module @sum {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<3xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";
  return CompileRejects(context, kBadTypes,
                        "compiling an add of f32[4] and f32[3]");
}

StatusOr<std::string> UnknownDeviceId(CheckContext& context) {
  int unknown = 0;
  for (const client::Device* device : context.client->devices()) {
    unknown = std::max(unknown, device->id() + 1);
  }
  std::vector<std::string> details;
  for (int id : {unknown, -1}) {
    auto found = context.client->LookupDevice(id);
    ASSIGN_OR_RETURN(
        std::string detail,
        ExpectRejected(found.ok() ? OkStatus() : found.status(),
                       StrCat("PJRT_Client_LookupDevice(", id, ")")));
    details.push_back(StrCat(id, ": ", StatusCodeName(found.status().code())));
  }
  return StrCat("rejected ids ", StrJoin(details, ", "));
}

StatusOr<std::string> ShortHostBuffer(CheckContext& context) {
  ASSIGN_OR_RETURN(auto buffer, Upload(context, F32x4(), FirstDevice(context)));
  auto bytes = RawToHost(context, buffer->handle(), 8, nullptr);
  return ExpectRejected(bytes.ok() ? OkStatus() : bytes.status(),
                        "PJRT_Buffer_ToHostBuffer of f32[4] into 8 bytes");
}

// --- Robustness: rejected is a PASS; accepted is UNSUPPORTED (as is a
// crash, which the runner sees).

StatusOr<std::string> Robust(const Status& status, std::string_view what) {
  if (status.ok()) {
    return NotApplicable(what, " was accepted (the C API leaves it undefined)");
  }
  return StrCat("rejected: ", status.ToString());
}

StatusOr<std::string> NullClient(CheckContext& context) {
  auto args = KILN_PJRT_ARGS(PJRT_Client_Devices_Args);
  args.client = nullptr;
  return Robust(KILN_PJRT_CALL(*context.plugin, PJRT_Client_Devices, args),
                "PJRT_Client_Devices with a null client");
}

StatusOr<std::string> NullArgument(CheckContext& context) {
  ASSIGN_OR_RETURN(auto executable, CompileAdd(context));
  ASSIGN_OR_RETURN(auto a, Upload(context, F32x4(), FirstDevice(context)));
  return Robust(RawExecutionError(context, *executable, {a->handle(), nullptr}),
                "an execution with a null argument");
}

StatusOr<std::string> ZeroStructSize(CheckContext& context) {
  auto args = KILN_PJRT_ARGS(PJRT_Client_PlatformName_Args);
  args.struct_size = 0;
  args.client = context.client->handle();
  return Robust(KILN_PJRT_CALL(*context.plugin, PJRT_Client_PlatformName, args),
                "PJRT_Client_PlatformName_Args with struct_size 0");
}

// A second client of the plugin; one that allows only one is UNSUPPORTED.
StatusOr<std::shared_ptr<client::Client>> SecondClient(
    const CheckContext& context) {
  auto other = client::Client::Create(context.plugin, context.create_options);
  if (!other.ok()) {
    return NotApplicable("a second client could not be made: ",
                         other.status().ToString());
  }
  return *other;
}

StatusOr<std::string> ForeignBuffer(CheckContext& context) {
  ASSIGN_OR_RETURN(auto other, SecondClient(context));
  ASSIGN_OR_RETURN(auto executable, CompileAdd(context));
  ASSIGN_OR_RETURN(auto mine, Upload(context, F32x4(), FirstDevice(context)));
  CheckContext other_context{context.plugin, other, context.create_options};
  ASSIGN_OR_RETURN(auto theirs, Upload(other_context, F32x4(),
                                       *other->addressable_devices().front()));
  return Robust(RawExecutionError(context, *executable,
                                  {mine->handle(), theirs->handle()}),
                "an execution with a buffer of another client");
}

StatusOr<std::string> ForeignDevice(CheckContext& context) {
  ASSIGN_OR_RETURN(auto other, SecondClient(context));
  HostArray values = F32x4();
  auto upload = RawBufferFromHost(
      context, values.bytes.data(), values.shape,
      PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, nullptr,
      *context.client, *other->addressable_devices().front());
  return Robust(upload.ok() ? OkStatus() : upload.status(),
                "BufferFromHostBuffer on a device of another client");
}

}  // namespace

void AddErrorChecks(std::vector<Check>& checks) {
  checks.push_back({"error.argument_count", CheckKind::kRequired,
                    "too few arguments", ArgumentCount});
  checks.push_back({"error.argument_shape", CheckKind::kRequired,
                    "arguments of the right size but the wrong shape",
                    ArgumentShape});
  checks.push_back({"error.argument_type", CheckKind::kRequired,
                    "arguments of the wrong element type", ArgumentType});
  checks.push_back({"error.deleted_argument", CheckKind::kRequired,
                    "an argument deleted before the call", DeletedArgument});
  checks.push_back({"error.program_does_not_parse", CheckKind::kRequired,
                    "program text that is not MLIR", ProgramThatDoesNotParse});
  checks.push_back({"error.program_type_error", CheckKind::kRequired,
                    "a program whose types disagree", ProgramWithTypeError});
  checks.push_back({"error.unknown_device_id", CheckKind::kRequired,
                    "LookupDevice of an id past the last, and of -1",
                    UnknownDeviceId});
  checks.push_back({"error.short_host_buffer", CheckKind::kRequired,
                    "ToHostBuffer into fewer bytes than the array",
                    ShortHostBuffer});
  checks.push_back({"robustness.null_client", CheckKind::kRobustness,
                    "a null client handle", NullClient});
  checks.push_back({"robustness.null_argument", CheckKind::kRobustness,
                    "a null buffer in an argument list", NullArgument});
  checks.push_back({"robustness.zero_struct_size", CheckKind::kRobustness,
                    "an argument struct of struct_size 0", ZeroStructSize});
  checks.push_back({"robustness.foreign_buffer", CheckKind::kRobustness,
                    "an argument buffer of another client", ForeignBuffer});
  checks.push_back({"robustness.foreign_device", CheckKind::kRobustness,
                    "an upload to a device of another client", ForeignDevice});
}

}  // namespace kiln::conform
