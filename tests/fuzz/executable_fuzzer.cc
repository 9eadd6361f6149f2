// libFuzzer target for serialized executables
// (PJRT_Executable_DeserializeAndLoad): any bytes load or give an error,
// through the plugin's C API as a framework calls it. Inputs whose first
// byte is odd are edits of a valid serialized executable (so that mutations
// reach past the header): the rest of the input is (offset, xor) pairs of
// two bytes and one, and the second byte, when even, truncates the result
// there.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "tests/fuzz/pjrt_fuzz_util.h"

namespace {

using kiln::fuzz::Check;
using kiln::fuzz::Ok;
#define ARGS KILN_FUZZ_ARGS

constexpr const char* kProgram = R"(
func.func @main(%x: tensor<8xf32>, %n: tensor<i32>) -> (tensor<8xf32>, tensor<f32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<8xf32>
   cond {
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %w = stablehlo.multiply %v, %v : tensor<8xf32>
    stablehlo.return %j, %w : tensor<i32>, tensor<8xf32>
  }
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%r#1 init: %init) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
  return %r#1, %s : tensor<8xf32>, tensor<f32>
}
)";

struct Fixture {
  const PJRT_Api* api = KilnPjrtApi();
  PJRT_Client* client = nullptr;
  std::string valid;  // a serialized executable of kProgram

  Fixture() {
    auto create = ARGS(PJRT_Client_Create_Args);
    if (!Ok(api, api->PJRT_Client_Create(&create))) __builtin_trap();
    client = create.client;
    auto program = ARGS(PJRT_Program);
    program.code = const_cast<char*>(kProgram);
    program.code_size = std::strlen(kProgram);
    program.format = "mlir";
    program.format_size = 4;
    auto compile = ARGS(PJRT_Client_Compile_Args);
    compile.client = client;
    compile.program = &program;
    if (!Ok(api, api->PJRT_Client_Compile(&compile))) __builtin_trap();
    auto get = ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
    get.loaded_executable = compile.executable;
    if (!Ok(api, api->PJRT_LoadedExecutable_GetExecutable(&get))) __builtin_trap();
    auto serialize = ARGS(PJRT_Executable_Serialize_Args);
    serialize.executable = get.executable;
    if (!Ok(api, api->PJRT_Executable_Serialize(&serialize))) __builtin_trap();
    valid.assign(serialize.serialized_bytes, serialize.serialized_bytes_size);
    serialize.serialized_executable_deleter(serialize.serialized_executable);
    auto destroy = ARGS(PJRT_Executable_Destroy_Args);
    destroy.executable = get.executable;
    Check(api, api->PJRT_Executable_Destroy(&destroy));
    auto destroy_loaded = ARGS(PJRT_LoadedExecutable_Destroy_Args);
    destroy_loaded.executable = compile.executable;
    Check(api, api->PJRT_LoadedExecutable_Destroy(&destroy_loaded));
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();
  const PJRT_Api* api = fixture->api;
  std::string bytes;
  if (size > 0 && (data[0] & 1) != 0) {
    bytes = fixture->valid;
    size_t at = 2;
    for (; at + 3 <= size; at += 3) {
      size_t offset = (size_t{data[at]} << 8 | data[at + 1]) % bytes.size();
      bytes[offset] = static_cast<char>(bytes[offset] ^ data[at + 2]);
    }
    if (size > 1 && (data[1] & 1) == 0) {
      bytes.resize((size_t{data[1]} * bytes.size()) / 256);
    }
  } else {
    bytes.assign(reinterpret_cast<const char*>(data), size);
  }
  auto load = ARGS(PJRT_Executable_DeserializeAndLoad_Args);
  load.client = fixture->client;
  load.serialized_executable = bytes.data();
  load.serialized_executable_size = bytes.size();
  if (!Ok(api, api->PJRT_Executable_DeserializeAndLoad(&load))) return 0;
  // What loads answers the questions a framework asks next.
  auto get = ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get.loaded_executable = load.loaded_executable;
  if (Ok(api, api->PJRT_LoadedExecutable_GetExecutable(&get))) {
    auto outputs = ARGS(PJRT_Executable_NumOutputs_Args);
    outputs.executable = get.executable;
    Check(api, api->PJRT_Executable_NumOutputs(&outputs));
    auto fingerprint = ARGS(PJRT_Executable_Fingerprint_Args);
    fingerprint.executable = get.executable;
    Check(api, api->PJRT_Executable_Fingerprint(&fingerprint));
    auto destroy = ARGS(PJRT_Executable_Destroy_Args);
    destroy.executable = get.executable;
    Check(api, api->PJRT_Executable_Destroy(&destroy));
  }
  auto destroy = ARGS(PJRT_LoadedExecutable_Destroy_Args);
  destroy.executable = load.loaded_executable;
  Check(api, api->PJRT_LoadedExecutable_Destroy(&destroy));
  return 0;
}
