// Compile and execute: the fixed programs against results computed by the
// suite, every device, replicas, the completion event's callback, donation,
// and the serialize/deserialize round trip.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "tools/conform/programs.h"

namespace kiln::conform {
namespace {

using client::Buffer;
using client::Device;
using client::Executable;

using Buffers = std::vector<std::unique_ptr<Buffer>>;

StatusOr<Buffers> UploadAll(const CheckContext& context,
                            const std::vector<HostArray>& arrays,
                            const Device& device) {
  Buffers buffers;
  for (const HostArray& array : arrays) {
    ASSIGN_OR_RETURN(auto buffer, Upload(context, array, device));
    buffers.push_back(std::move(buffer));
  }
  return buffers;
}

std::vector<Buffer*> Pointers(const Buffers& buffers) {
  std::vector<Buffer*> pointers;
  for (const auto& buffer : buffers) pointers.push_back(buffer.get());
  return pointers;
}

Status ExpectOutputs(const Buffers& outputs,
                     const std::vector<HostArray>& expected) {
  if (outputs.size() != expected.size()) {
    return Mismatch(outputs.size(), " outputs, expected ", expected.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    RETURN_IF_ERROR(
        ExpectContents(StrCat("output ", i), *outputs[i], expected[i]));
  }
  return OkStatus();
}

// Compiles `program` for `device`, runs it on its inputs there, and checks
// the outputs (and that they live on that device).
Status RunProgramOn(const CheckContext& context, const TestProgram& program,
                    const Device& device,
                    const Executable* compiled = nullptr) {
  std::unique_ptr<Executable> owned;
  if (compiled == nullptr) {
    ASSIGN_OR_RETURN(owned, CompileFor(context, program.text, device));
    compiled = owned.get();
  }
  if (compiled->num_outputs() !=
      static_cast<int64_t>(program.expected.size())) {
    return Mismatch("PJRT_Executable_NumOutputs is ", compiled->num_outputs(),
                    ", expected ", program.expected.size());
  }
  ASSIGN_OR_RETURN(Buffers inputs, UploadAll(context, program.inputs, device));
  ASSIGN_OR_RETURN(Buffers outputs, RunAndAwait(*compiled, Pointers(inputs)));
  RETURN_IF_ERROR(ExpectOutputs(outputs, program.expected));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i]->device() != nullptr && outputs[i]->device() != &device) {
      return Mismatch("output ", i, " is on device ",
                      outputs[i]->device()->id(),
                      ", the program ran on device ", device.id());
    }
  }
  return OkStatus();
}

std::string Outputs(const TestProgram& program) {
  std::vector<std::string> shapes;
  for (const HostArray& array : program.expected)
    shapes.push_back(array.shape.ToString());
  return StrJoin(shapes, ", ");
}

StatusOr<std::string> OutputShapes(CheckContext& context) {
  const TestProgram& program = TestPrograms()[4];  // multiple_outputs
  ASSIGN_OR_RETURN(auto executable,
                   CompileFor(context, program.text, FirstDevice(context)));
  ASSIGN_OR_RETURN(std::vector<client::Shape> shapes,
                   executable->OutputShapes());
  if (shapes.size() != program.expected.size()) {
    return Mismatch(shapes.size(), " output shapes, expected ",
                    program.expected.size());
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i] != program.expected[i].shape) {
      return Mismatch("output ", i, " is ", shapes[i].ToString(), ", expected ",
                      program.expected[i].shape.ToString());
    }
  }
  return StrCat("multiple_outputs: ", Outputs(program));
}

StatusOr<std::string> EveryDevice(CheckContext& context) {
  std::vector<int> ids;
  for (const Device* device : context.client->addressable_devices()) {
    RETURN_IF_ERROR(RunProgramOn(context, AddProgram(), *device)
                        .WithContext(StrCat("on device ", device->id())));
    ids.push_back(device->id());
  }
  return StrCat("add_f32 on devices ", StrJoin(ids, ","));
}

// One executable over every addressable device, one replica each, run with
// one argument list per device.
StatusOr<std::string> Replicated(CheckContext& context) {
  const auto& devices = context.client->addressable_devices();
  if (devices.size() < 2) {
    return NotApplicable("needs 2 addressable devices, the client has ",
                         devices.size());
  }
  std::vector<int64_t> ids;
  for (const Device* device : devices) ids.push_back(device->id());
  ASSIGN_OR_RETURN(std::string options, CompileOptionsFor(ids));
  const TestProgram& program = AddProgram();
  auto compiled = context.client->Compile(program.text, "mlir", options);
  if (!compiled.ok())
    return NamingSlot(compiled.status(), "PJRT_Client_Compile");
  const Executable& executable = **compiled;
  std::vector<Buffers> inputs;
  std::vector<std::vector<Buffer*>> lists;
  for (const Device* device : devices) {
    ASSIGN_OR_RETURN(Buffers buffers,
                     UploadAll(context, program.inputs, *device));
    lists.push_back(Pointers(buffers));
    inputs.push_back(std::move(buffers));
  }
  auto result = executable.Execute(lists, {});
  if (!result.ok())
    return NamingSlot(result.status(), "PJRT_LoadedExecutable_Execute");
  if (result->outputs.size() != devices.size()) {
    return Mismatch(result->outputs.size(), " output lists for ",
                    devices.size(), " devices");
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    if (d < result->device_complete.size()) {
      RETURN_IF_ERROR(AwaitWithin(
          result->device_complete[d], 60,
          StrCat("device ", devices[d]->id(), "'s completion event")));
    }
    RETURN_IF_ERROR(ExpectOutputs(result->outputs[d], program.expected)
                        .WithContext(StrCat("replica ", d)));
    const Device* where = result->outputs[d][0]->device();
    if (where != nullptr && where != devices[d]) {
      return Mismatch("replica ", d, "'s output is on device ", where->id(),
                      ", expected ", devices[d]->id());
    }
  }
  return StrCat(devices.size(), " replicas on devices ", StrJoin(ids, ","));
}

StatusOr<std::string> OnReadyOfExecution(CheckContext& context) {
  const TestProgram& program = AddProgram();
  const Device& device = FirstDevice(context);
  ASSIGN_OR_RETURN(auto executable, CompileFor(context, program.text, device));
  ASSIGN_OR_RETURN(Buffers inputs, UploadAll(context, program.inputs, device));
  std::vector<std::vector<Buffer*>> lists = {Pointers(inputs)};
  ASSIGN_OR_RETURN(client::ExecuteResult result,
                   executable->Execute(lists, {}));
  if (result.device_complete.empty() || result.device_complete[0].empty()) {
    return Mismatch("no device_complete event");
  }
  struct Probe {
    std::mutex mutex;
    std::condition_variable fired;
    int calls = 0;
    Status status;
  };
  auto probe = std::make_shared<Probe>();
  RETURN_IF_ERROR(
      std::move(result.device_complete[0]).OnReady([probe](Status status) {
        std::lock_guard<std::mutex> lock(probe->mutex);
        ++probe->calls;
        probe->status = std::move(status);
        probe->fired.notify_all();
      }));
  {
    std::unique_lock<std::mutex> lock(probe->mutex);
    if (!probe->fired.wait_for(lock, std::chrono::seconds(60),
                               [&] { return probe->calls > 0; })) {
      return DeadlineExceededError(
          "the completion callback did not run in 60 s");
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::lock_guard<std::mutex> lock(probe->mutex);
  if (probe->calls != 1)
    return Mismatch("the callback ran ", probe->calls, " times");
  RETURN_IF_ERROR(
      probe->status.WithContext("the completion callback's status"));
  RETURN_IF_ERROR(ExpectOutputs(result.outputs[0], program.expected));
  return std::string("called once with OK; the outputs are final");
}

// --- Donation

struct DonationRun {
  Buffers inputs;
  Buffers outputs;
};

StatusOr<DonationRun> RunDonatingAdd(const CheckContext& context,
                                     const client::ExecuteOptions& options) {
  const Device& device = FirstDevice(context);
  ASSIGN_OR_RETURN(auto executable,
                   CompileFor(context, kDonatingAddProgram, device));
  DonationRun run;
  ASSIGN_OR_RETURN(run.inputs, UploadAll(context, AddProgram().inputs, device));
  ASSIGN_OR_RETURN(run.outputs,
                   RunAndAwait(*executable, Pointers(run.inputs), options));
  // Each donation check looks at what it is about before the outputs, so
  // that a plugin with wrong sums still shows whether it donates.
  return run;
}

StatusOr<std::string> DonatedInputIsDeleted(CheckContext& context) {
  ASSIGN_OR_RETURN(DonationRun run, RunDonatingAdd(context, {}));
  ASSIGN_OR_RETURN(bool donated_deleted, run.inputs[0]->IsDeleted());
  ASSIGN_OR_RETURN(bool kept_deleted, run.inputs[1]->IsDeleted());
  if (!donated_deleted) {
    return Mismatch(
        "argument 0 (tf.aliasing_output = 0) does not read as "
        "deleted after the execution");
  }
  if (kept_deleted) {
    return Mismatch("argument 1, not donated, reads as deleted");
  }
  RETURN_IF_ERROR(ExpectOutputs(run.outputs, AddProgram().expected));
  return std::string("argument 0 deleted, argument 1 kept");
}

StatusOr<std::string> DonatedInputIsUnusable(CheckContext& context) {
  ASSIGN_OR_RETURN(DonationRun run, RunDonatingAdd(context, {}));
  std::vector<float> host(4);
  Status read = run.inputs[0]->ToHost(host.data(), host.size() * sizeof(float));
  if (read.ok()) return Mismatch("reading the donated argument succeeded");
  ASSIGN_OR_RETURN(
      auto again, CompileFor(context, AddProgram().text, FirstDevice(context)));
  Status reuse = ExecutionError(*again, Pointers(run.inputs));
  if (reuse.ok()) {
    return Mismatch("executing with the donated argument succeeded");
  }
  RETURN_IF_ERROR(ExpectOutputs(run.outputs, AddProgram().expected));
  return StrCat("reading it: ", StatusCodeName(read.code()),
                "; executing with it: ", StatusCodeName(reuse.code()));
}

StatusOr<std::string> NonDonatableInputIsKept(CheckContext& context) {
  client::ExecuteOptions options;
  options.non_donatable_input_indices = {0};
  ASSIGN_OR_RETURN(DonationRun run, RunDonatingAdd(context, options));
  ASSIGN_OR_RETURN(bool deleted, run.inputs[0]->IsDeleted());
  if (deleted) {
    return Mismatch(
        "argument 0 was donated although non_donatable_input_indices "
        "held it");
  }
  RETURN_IF_ERROR(ExpectContents("argument 0 after the execution",
                                 *run.inputs[0], AddProgram().inputs[0]));
  RETURN_IF_ERROR(ExpectOutputs(run.outputs, AddProgram().expected));
  return std::string("non_donatable_input_indices {0} kept argument 0 intact");
}

// --- Serialization

StatusOr<std::string> SerializeRoundTrip(CheckContext& context) {
  const TestProgram& program = AddProgram();
  const Device& device = FirstDevice(context);
  ASSIGN_OR_RETURN(auto executable, CompileFor(context, program.text, device));
  auto bytes = executable->Serialize();
  if (!bytes.ok())
    return NamingSlot(bytes.status(), "PJRT_Executable_Serialize");
  if (bytes->empty()) return Mismatch("the serialized executable is empty");
  executable.reset();
  auto restored = context.client->DeserializeAndLoad(*bytes);
  if (!restored.ok()) {
    return NamingSlot(restored.status(), "PJRT_Executable_DeserializeAndLoad");
  }
  RETURN_IF_ERROR(RunProgramOn(context, program, device, restored->get())
                      .WithContext("the deserialized executable"));
  return StrCat(bytes->size(),
                " bytes; the loaded executable computes add_f32");
}

StatusOr<std::string> DeserializeRefusesGarbage(CheckContext& context) {
  if (context.plugin->api().PJRT_Executable_DeserializeAndLoad == nullptr) {
    return NotApplicable(
        "the plugin has no PJRT_Executable_DeserializeAndLoad");
  }
  std::mt19937 random(20261202);
  std::string noise(256, '\0');
  for (char& c : noise) c = static_cast<char>(random());
  std::vector<std::string> rejected;
  for (const auto& [what, blob] :
       std::vector<std::pair<std::string, std::string>>{
           {"random bytes", noise}, {"MLIR text", AddProgram().text}}) {
    auto restored = context.client->DeserializeAndLoad(blob);
    if (restored.ok()) return Mismatch("deserializing ", what, " succeeded");
    if (restored.status().code() == StatusCode::kUnimplemented) {
      return restored.status();
    }
    rejected.push_back(
        StrCat(what, ": ", StatusCodeName(restored.status().code())));
  }
  return StrCat("rejected ", StrJoin(rejected, ", "));
}

}  // namespace

void AddExecuteChecks(std::vector<Check>& checks) {
  for (const TestProgram& program : TestPrograms()) {
    checks.push_back(
        {StrCat("execute.", program.name),
         program.required ? CheckKind::kRequired : CheckKind::kOptional,
         program.summary,
         [&program](CheckContext& context) -> StatusOr<std::string> {
           RETURN_IF_ERROR(
               RunProgramOn(context, program, FirstDevice(context)));
           return StrCat("outputs ", Outputs(program), " as computed");
         }});
  }
  checks.push_back(
      {"execute.output_shapes", CheckKind::kOptional,
       "OutputElementTypes and OutputDimensions of multiple_outputs",
       OutputShapes});
  checks.push_back({"execute.every_device", CheckKind::kRequired,
                    "add_f32 compiled for and run on each addressable device",
                    EveryDevice});
  checks.push_back({"execute.replicated", CheckKind::kOptional,
                    "one executable, a replica per device, one call",
                    Replicated});
  checks.push_back({"event.execute_on_ready", CheckKind::kRequired,
                    "OnReady of an execution's completion event",
                    OnReadyOfExecution});
  checks.push_back({"donation.donated_input_is_deleted", CheckKind::kRequired,
                    "tf.aliasing_output: the donated argument reads as deleted",
                    DonatedInputIsDeleted});
  checks.push_back({"donation.donated_input_is_unusable", CheckKind::kRequired,
                    "reading or executing with a donated argument is an error",
                    DonatedInputIsUnusable});
  checks.push_back({"donation.non_donatable_input_is_kept",
                    CheckKind::kRequired,
                    "non_donatable_input_indices overrides the alias",
                    NonDonatableInputIsKept});
  checks.push_back({"serialize.round_trip", CheckKind::kOptional,
                    "Serialize, DeserializeAndLoad, run: the same results",
                    SerializeRoundTrip});
  checks.push_back(
      {"serialize.refuses_garbage", CheckKind::kOptional,
       "DeserializeAndLoad of bytes that are no executable is an error",
       DeserializeRefusesGarbage});
}

}  // namespace kiln::conform
