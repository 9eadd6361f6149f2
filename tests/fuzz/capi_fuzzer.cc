// Structured libFuzzer target for the plugin's C API: each input is a
// sequence of calls a careless or hostile framework could make, decoded one
// byte at a time:
//   - buffers from host memory with random types, shapes, byte strides,
//     host-buffer semantics, devices and memories (valid and not);
//   - copies between devices and memories, deletes, destroys, host reads
//     with random destination sizes, metadata queries;
//   - compiles of small programs (with random compile options bytes),
//     executes with random argument lists, donation and execute devices;
//   - events awaited, polled or dropped;
//   - every kind of argument struct with a random struct_size, null
//     pointers where handles go, and foreign handles (pointers to memory
//     that is not a Kiln object).
// Everything must succeed or return an error that says something; nothing
// may crash, trip a sanitizer or leak (everything made by one input is
// destroyed at its end). The client (4 devices) is made once.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/fuzz/pjrt_fuzz_util.h"

namespace {

#define ARGS KILN_FUZZ_ARGS

const PJRT_Api* api = nullptr;

void Check(PJRT_Error* error) { kiln::fuzz::Check(api, error); }
bool Ok(PJRT_Error* error) { return kiln::fuzz::Ok(api, error); }

// Reads the input one field at a time; past its end, every read is 0.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  // A value in [0, n).
  size_t Below(size_t n) { return n == 0 ? 0 : Byte() % n; }
  bool Bit() { return Byte() & 1; }
  // A struct_size: usually right, sometimes too small or zero.
  size_t StructSize(size_t right) {
    switch (Byte() % 16) {
      case 0: return 0;
      case 1: return right / 2;
      case 2: return right - 8;
      case 3: return right + 64;
      default: return right;
    }
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

constexpr const char* kPrograms[] = {
    // Elementwise with donation.
    "func.func @main(%x: tensor<4xf32> {jax.buffer_donor = true}, %y: "
    "tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %s = stablehlo.add %x, %y : tensor<4xf32>\n"
    "  return %s : tensor<4xf32>\n}\n",
    // A bounded loop and a reduction, two outputs.
    "func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<f32>) {\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, "
    "tensor<2x3xf32>\n"
    "   cond {\n"
    "    %three = stablehlo.constant dense<3> : tensor<i32>\n"
    "    %lt = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) "
    "-> tensor<i1>\n"
    "    stablehlo.return %lt : tensor<i1>\n"
    "  } do {\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %j = stablehlo.add %i, %one : tensor<i32>\n"
    "    %w = stablehlo.add %v, %v : tensor<2x3xf32>\n"
    "    stablehlo.return %j, %w : tensor<i32>, tensor<2x3xf32>\n"
    "  }\n"
    "  %init = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %s = stablehlo.reduce(%r#1 init: %init) applies stablehlo.add across "
    "dimensions = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>\n"
    "  return %r#1, %s : tensor<2x3xf32>, tensor<f32>\n}\n",
    // Integer and boolean types, a transpose.
    "func.func @main(%x: tensor<3x2xi32>, %p: tensor<3x2xi1>) -> "
    "tensor<2x3xi32> {\n"
    "  %z = stablehlo.constant dense<0> : tensor<3x2xi32>\n"
    "  %s = stablehlo.select %p, %x, %z : tensor<3x2xi1>, tensor<3x2xi32>\n"
    "  %t = stablehlo.transpose %s, dims = [1, 0] : (tensor<3x2xi32>) -> "
    "tensor<2x3xi32>\n"
    "  return %t : tensor<2x3xi32>\n}\n",
    // A collective over 2 replicas.
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %s = \"stablehlo.all_reduce\"(%x) ({\n"
    "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    "    %c = stablehlo.add %a, %b : tensor<f32>\n"
    "    stablehlo.return %c : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : "
    "(tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %s : tensor<4xf32>\n}\n",
    // Not a program.
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> { garbage",
};

// Serialized xla.CompileOptionsProto: none, 2 replicas, and a broken one.
const std::string kCompileOptions[] = {
    std::string(),
    // executable_build_options { num_replicas: 2 num_partitions: 1 }
    std::string("\x1a\x04\x20\x02\x28\x01", 6),
    std::string("\x1a\xff\xff", 3),
};

// As ints: a C caller may pass a value outside the enumerators (C++ may
// not hold one in the enum type, so it is copied into the field's bytes).
constexpr int kTypes[] = {
    PJRT_Buffer_Type_F32, PJRT_Buffer_Type_S32,  PJRT_Buffer_Type_PRED,
    PJRT_Buffer_Type_BF16, PJRT_Buffer_Type_F64, PJRT_Buffer_Type_S4,
    PJRT_Buffer_Type_C64, PJRT_Buffer_Type_INVALID, 1000,
};

struct HeldBuffer {
  PJRT_Buffer* buffer = nullptr;
  // Host memory lent to the plugin, freed after `done` fires.
  std::shared_ptr<std::vector<uint8_t>> host;
  PJRT_Event* done = nullptr;
};

struct Session {
  PJRT_Client* client = nullptr;
  std::vector<PJRT_Device*> devices;
  std::vector<PJRT_Memory*> memories;
  std::vector<HeldBuffer> buffers;
  std::vector<HeldBuffer> lent;
  // Host reads in flight: their destinations and events.
  std::vector<HeldBuffer> reads;
  std::vector<PJRT_LoadedExecutable*> executables;
  std::vector<PJRT_Event*> events;
  // Memory that is not a Kiln object, passed where handles go.
  alignas(64) uint8_t foreign[512] = {};

  PJRT_Buffer* PickBuffer(Input& in) {
    switch (in.Byte() % 16) {
      case 0: return nullptr;
      case 1: return reinterpret_cast<PJRT_Buffer*>(foreign);
      default:
        return buffers.empty() ? nullptr
                               : buffers[in.Below(buffers.size())].buffer;
    }
  }
  PJRT_Device* PickDevice(Input& in) {
    switch (in.Byte() % 16) {
      case 0: return nullptr;
      case 1: return reinterpret_cast<PJRT_Device*>(foreign);
      default: return devices[in.Below(devices.size())];
    }
  }
  PJRT_Memory* PickMemory(Input& in) {
    switch (in.Byte() % 16) {
      case 0: return nullptr;
      case 1: return reinterpret_cast<PJRT_Memory*>(foreign);
      default: return memories[in.Below(memories.size())];
    }
  }

  void Keep(PJRT_Event* event) {
    if (event != nullptr) events.push_back(event);
  }

  void Upload(Input& in) {
    const int type = kTypes[in.Below(std::size(kTypes))];
    const size_t rank = in.Below(4);
    std::vector<int64_t> dims(rank);
    int64_t elements = 1;
    for (int64_t& d : dims) {
      d = static_cast<int64_t>(in.Below(6));
      if (in.Byte() == 255) d = -1;
      elements *= d < 0 ? 1 : d;
    }
    std::vector<int64_t> strides;
    const bool strided = in.Byte() % 4 == 0;
    if (strided) {
      for (size_t i = 0; i < rank; ++i) {
        strides.push_back(static_cast<int64_t>(in.Below(64)) - 8);
      }
    }
    // Enough host bytes on both sides of the data pointer for any stride
    // chosen above (up to 16 bytes per element, strides from -8 to 55, 5
    // elements a dimension), so that a layout Kiln accepts stays in
    // bounds: PJRT takes no host buffer size, so the caller keeps
    // negative strides above the allocation's start. (The fuzzer's first
    // find was its own data pointer at the start.)
    constexpr size_t kMargin = 64 * 6 * 4;
    auto host = std::make_shared<std::vector<uint8_t>>(
        static_cast<size_t>(elements) * 16 + 2 * kMargin + 64, 0);
    for (size_t i = 0; i < host->size() && !in.done(); i += 7) {
      (*host)[i] = in.Byte();
    }
    auto args = ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.struct_size = in.StructSize(args.struct_size);
    args.client = client;
    args.data = in.Byte() == 0 ? nullptr : host->data() + kMargin;
    std::memcpy(&args.type, &type, sizeof(type));
    args.dims = dims.data();
    args.num_dims = rank;
    if (strided) {
      args.byte_strides = strides.data();
      args.num_byte_strides = in.Byte() == 0 ? rank + 1 : rank;
    }
    int semantics = static_cast<int>(in.Below(5));
    std::memcpy(&args.host_buffer_semantics, &semantics, sizeof(semantics));
    if (in.Bit()) {
      args.memory = PickMemory(in);
    } else {
      args.device = PickDevice(in);
    }
    if (!Ok(api->PJRT_Client_BufferFromHostBuffer(&args))) return;
    buffers.push_back({args.buffer, std::move(host), args.done_with_host_buffer});
  }

  void Copy(Input& in) {
    PJRT_Buffer* source = PickBuffer(in);
    if (in.Bit()) {
      auto args = ARGS(PJRT_Buffer_CopyToDevice_Args);
      args.struct_size = in.StructSize(args.struct_size);
      args.buffer = source;
      args.dst_device = PickDevice(in);
      if (Ok(api->PJRT_Buffer_CopyToDevice(&args))) {
        buffers.push_back({args.dst_buffer, nullptr, nullptr});
      }
    } else {
      auto args = ARGS(PJRT_Buffer_CopyToMemory_Args);
      args.struct_size = in.StructSize(args.struct_size);
      args.buffer = source;
      args.dst_memory = PickMemory(in);
      if (Ok(api->PJRT_Buffer_CopyToMemory(&args))) {
        buffers.push_back({args.dst_buffer, nullptr, nullptr});
      }
    }
  }

  void Read(Input& in) {
    auto args = ARGS(PJRT_Buffer_ToHostBuffer_Args);
    args.struct_size = in.StructSize(args.struct_size);
    args.src = PickBuffer(in);
    // Ask for the size first, or give a destination of a random size.
    std::vector<uint8_t> host;
    if (in.Bit()) {
      args.dst = nullptr;
      if (!Ok(api->PJRT_Buffer_ToHostBuffer(&args))) return;
      host.resize(args.dst_size);
    } else {
      host.resize(in.Below(256));
      args.dst_size = host.size();
    }
    args.dst = host.data();
    if (!Ok(api->PJRT_Buffer_ToHostBuffer(&args))) return;
    // The destination stays valid until the copy is done (the buffer may
    // wait on a launch that is never complete: awaited in Clear, after the
    // executables are gone).
    reads.push_back({nullptr, std::make_shared<std::vector<uint8_t>>(std::move(host)),
                     args.event});
  }

  void Query(Input& in) {
    PJRT_Buffer* buffer = PickBuffer(in);
    switch (in.Below(7)) {
      case 0: {
        auto args = ARGS(PJRT_Buffer_Dimensions_Args);
        args.struct_size = in.StructSize(args.struct_size);
        args.buffer = buffer;
        Check(api->PJRT_Buffer_Dimensions(&args));
        break;
      }
      case 1: {
        auto args = ARGS(PJRT_Buffer_ElementType_Args);
        args.buffer = buffer;
        Check(api->PJRT_Buffer_ElementType(&args));
        break;
      }
      case 2: {
        auto args = ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
        args.buffer = buffer;
        Check(api->PJRT_Buffer_OnDeviceSizeInBytes(&args));
        break;
      }
      case 3: {
        auto args = ARGS(PJRT_Buffer_ReadyEvent_Args);
        args.buffer = buffer;
        if (Ok(api->PJRT_Buffer_ReadyEvent(&args))) Keep(args.event);
        break;
      }
      case 4: {
        auto args = ARGS(PJRT_Buffer_IsDeleted_Args);
        args.buffer = buffer;
        Check(api->PJRT_Buffer_IsDeleted(&args));
        break;
      }
      case 5: {
        auto args = ARGS(PJRT_Buffer_GetMemoryLayout_Args);
        args.buffer = buffer;
        Check(api->PJRT_Buffer_GetMemoryLayout(&args));
        break;
      }
      default: {
        auto args = ARGS(PJRT_Buffer_Memory_Args);
        args.buffer = buffer;
        Check(api->PJRT_Buffer_Memory(&args));
        break;
      }
    }
  }

  void Compile(Input& in) {
    const char* code = kPrograms[in.Below(std::size(kPrograms))];
    const std::string& options = kCompileOptions[in.Below(3)];
    auto program = ARGS(PJRT_Program);
    program.code = const_cast<char*>(code);
    program.code_size = std::strlen(code);
    const char* format = in.Byte() == 0 ? "hlo" : "mlir";
    program.format = format;
    program.format_size = std::strlen(format);
    auto args = ARGS(PJRT_Client_Compile_Args);
    args.struct_size = in.StructSize(args.struct_size);
    args.client = client;
    args.program = in.Byte() == 0 ? nullptr : &program;
    args.compile_options = options.data();
    args.compile_options_size = options.size();
    if (Ok(api->PJRT_Client_Compile(&args))) {
      executables.push_back(args.executable);
    }
  }

  void Execute(Input& in) {
    if (executables.empty()) return;
    PJRT_LoadedExecutable* executable =
        executables[in.Below(executables.size())];
    const size_t num_devices = 1 + in.Below(2);
    const size_t num_args = in.Below(4);
    std::vector<std::vector<PJRT_Buffer*>> arguments(
        num_devices, std::vector<PJRT_Buffer*>(num_args));
    for (auto& list : arguments) {
      for (PJRT_Buffer*& buffer : list) buffer = PickBuffer(in);
    }
    // Room for the most outputs a program above has.
    std::vector<std::vector<PJRT_Buffer*>> outputs(
        num_devices, std::vector<PJRT_Buffer*>(2, nullptr));
    std::vector<PJRT_Buffer* const*> argument_lists;
    std::vector<PJRT_Buffer**> output_lists;
    for (size_t d = 0; d < num_devices; ++d) {
      argument_lists.push_back(arguments[d].data());
      output_lists.push_back(outputs[d].data());
    }
    std::vector<PJRT_Event*> complete(num_devices, nullptr);
    std::vector<int64_t> non_donatable;
    if (in.Bit()) non_donatable.push_back(static_cast<int64_t>(in.Below(4)) - 1);
    auto options = ARGS(PJRT_ExecuteOptions);
    options.struct_size = in.StructSize(options.struct_size);
    options.non_donatable_input_indices = non_donatable.data();
    options.num_non_donatable_input_indices = non_donatable.size();
    options.launch_id = in.Byte();
    auto args = ARGS(PJRT_LoadedExecutable_Execute_Args);
    args.struct_size = in.StructSize(args.struct_size);
    args.executable = executable;
    args.options = in.Byte() == 0 ? nullptr : &options;
    args.argument_lists = argument_lists.data();
    args.num_devices = num_devices;
    args.num_args = num_args;
    args.output_lists = output_lists.data();
    args.device_complete_events = in.Bit() ? complete.data() : nullptr;
    args.execute_device = in.Bit() ? PickDevice(in) : nullptr;
    if (!Ok(api->PJRT_LoadedExecutable_Execute(&args))) return;
    // Outputs a successful call wrote are ours to destroy. How many it
    // wrote: the executable's output count.
    auto get = ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
    get.loaded_executable = executable;
    size_t num_outputs = 0;
    if (Ok(api->PJRT_LoadedExecutable_GetExecutable(&get))) {
      auto count = ARGS(PJRT_Executable_NumOutputs_Args);
      count.executable = get.executable;
      if (Ok(api->PJRT_Executable_NumOutputs(&count))) num_outputs = count.num_outputs;
      auto destroy = ARGS(PJRT_Executable_Destroy_Args);
      destroy.executable = get.executable;
      Check(api->PJRT_Executable_Destroy(&destroy));
    }
    if (num_outputs > 2) __builtin_trap();  // wrote past the lists
    for (size_t d = 0; d < num_devices; ++d) {
      for (size_t o = 0; o < num_outputs; ++o) {
        if (outputs[d][o] != nullptr) buffers.push_back({outputs[d][o], nullptr, nullptr});
      }
      if (args.device_complete_events != nullptr) Keep(complete[d]);
    }
  }

  void DropBuffer(Input& in, bool delete_first) {
    if (buffers.empty()) return;
    size_t i = in.Below(buffers.size());
    if (delete_first) {
      auto args = ARGS(PJRT_Buffer_Delete_Args);
      args.buffer = buffers[i].buffer;
      Check(api->PJRT_Buffer_Delete(&args));
      return;  // the handle stays, deleted
    }
    Destroy(buffers[i]);
    buffers.erase(buffers.begin() + static_cast<std::ptrdiff_t>(i));
  }

  // Destroys the handle; lent host memory waits in `lent` until Clear (a
  // donated zero-copy buffer's bytes may live on in an output).
  void Destroy(HeldBuffer& held) {
    auto args = ARGS(PJRT_Buffer_Destroy_Args);
    args.buffer = held.buffer;
    Check(api->PJRT_Buffer_Destroy(&args));
    if (held.done != nullptr) lent.push_back({nullptr, std::move(held.host), held.done});
  }

  void Events(Input& in) {
    if (events.empty()) return;
    size_t i = in.Below(events.size());
    switch (in.Below(3)) {
      case 0: {
        auto args = ARGS(PJRT_Event_IsReady_Args);
        args.event = events[i];
        Check(api->PJRT_Event_IsReady(&args));
        return;
      }
      case 1: {
        // Awaited only when ready: an event of a launch that some device
        // never joins fires only when its executable goes.
        auto ready = ARGS(PJRT_Event_IsReady_Args);
        ready.event = events[i];
        if (!Ok(api->PJRT_Event_IsReady(&ready)) || !ready.is_ready) return;
        auto args = ARGS(PJRT_Event_Await_Args);
        args.event = events[i];
        Check(api->PJRT_Event_Await(&args));
        return;
      }
      default: {
        auto args = ARGS(PJRT_Event_Destroy_Args);
        args.event = events[i];
        Check(api->PJRT_Event_Destroy(&args));
        events.erase(events.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
    }
  }

  // Calls with only nulls and foreign pointers for handles.
  void Hostile(Input& in) {
    void* handle = in.Bit() ? nullptr : foreign;
    switch (in.Below(6)) {
      case 0: {
        auto args = ARGS(PJRT_Client_Devices_Args);
        args.struct_size = in.StructSize(args.struct_size);
        args.client = static_cast<PJRT_Client*>(handle);
        Check(api->PJRT_Client_Devices(&args));
        break;
      }
      case 1: {
        auto args = ARGS(PJRT_Device_GetDescription_Args);
        args.device = static_cast<PJRT_Device*>(handle);
        Check(api->PJRT_Device_GetDescription(&args));
        break;
      }
      case 2: {
        auto args = ARGS(PJRT_Event_IsReady_Args);
        args.event = static_cast<PJRT_Event*>(handle);
        Check(api->PJRT_Event_IsReady(&args));
        break;
      }
      case 3: {
        auto args = ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
        args.loaded_executable = static_cast<PJRT_LoadedExecutable*>(handle);
        Check(api->PJRT_LoadedExecutable_GetExecutable(&args));
        break;
      }
      case 4: {
        auto args = ARGS(PJRT_Memory_Kind_Args);
        args.struct_size = in.StructSize(args.struct_size);
        args.memory = static_cast<PJRT_Memory*>(handle);
        Check(api->PJRT_Memory_Kind(&args));
        break;
      }
      default: {
        auto args = ARGS(PJRT_Buffer_Destroy_Args);
        args.buffer = static_cast<PJRT_Buffer*>(handle);
        Check(api->PJRT_Buffer_Destroy(&args));
        break;
      }
    }
  }

  void Clear() {
    for (PJRT_Event* event : events) {
      auto args = ARGS(PJRT_Event_Destroy_Args);
      args.event = event;
      Check(api->PJRT_Event_Destroy(&args));
    }
    events.clear();
    for (PJRT_LoadedExecutable* executable : executables) {
      auto args = ARGS(PJRT_LoadedExecutable_Destroy_Args);
      args.executable = executable;
      Check(api->PJRT_LoadedExecutable_Destroy(&args));
    }
    executables.clear();
    // Zero-copy host memory may back a donated output: every buffer goes
    // before any lent memory is freed.
    for (HeldBuffer& held : buffers) Destroy(held);
    lent.insert(lent.end(), reads.begin(), reads.end());
    reads.clear();
    for (HeldBuffer& held : lent) {
      auto await = ARGS(PJRT_Event_Await_Args);
      await.event = held.done;
      Check(api->PJRT_Event_Await(&await));
      auto destroy = ARGS(PJRT_Event_Destroy_Args);
      destroy.event = held.done;
      Check(api->PJRT_Event_Destroy(&destroy));
    }
    lent.clear();
    buffers.clear();
  }
};

Session& MakeSession() {
  static Session* session = [] {
    api = KilnPjrtApi();
    auto* s = new Session();
    PJRT_NamedValue option;
    std::memset(&option, 0, sizeof(option));
    option.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    option.name = "cpu_device_count";
    option.name_size = std::strlen(option.name);
    option.type = PJRT_NamedValue_kInt64;
    option.int64_value = 4;
    option.value_size = 1;
    // A launch some devices never join fails fast.
    PJRT_NamedValue timeout = option;
    timeout.name = "collective_timeout_seconds";
    timeout.name_size = std::strlen(timeout.name);
    timeout.type = PJRT_NamedValue_kFloat;
    timeout.float_value = 0.5f;
    PJRT_NamedValue options[] = {option, timeout};
    auto create = ARGS(PJRT_Client_Create_Args);
    create.create_options = options;
    create.num_options = 2;
    if (!Ok(api->PJRT_Client_Create(&create))) __builtin_trap();
    s->client = create.client;
    auto devices = ARGS(PJRT_Client_AddressableDevices_Args);
    devices.client = s->client;
    if (!Ok(api->PJRT_Client_AddressableDevices(&devices))) __builtin_trap();
    s->devices.assign(devices.addressable_devices,
                      devices.addressable_devices + devices.num_addressable_devices);
    auto memories = ARGS(PJRT_Client_AddressableMemories_Args);
    memories.client = s->client;
    if (!Ok(api->PJRT_Client_AddressableMemories(&memories))) __builtin_trap();
    s->memories.assign(memories.addressable_memories,
                       memories.addressable_memories + memories.num_addressable_memories);
    return s;
  }();
  return *session;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Session& session = MakeSession();
  Input in(data, size);
  for (int step = 0; step < 64 && !in.done(); ++step) {
    switch (in.Below(11)) {
      case 0: case 1: session.Upload(in); break;
      case 2: session.Copy(in); break;
      case 3: session.Read(in); break;
      case 4: session.Query(in); break;
      case 5: session.Compile(in); break;
      case 6: case 7: session.Execute(in); break;
      case 8: session.DropBuffer(in, in.Bit()); break;
      case 9: session.Events(in); break;
      default: session.Hostile(in); break;
    }
  }
  session.Clear();
  return 0;
}
