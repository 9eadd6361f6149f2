// FFI calls: a step that builds an XLA_FFI_CallFrame over its buffers and
// calls a handler registered through XLA's FFI (exec/ffi.h).
//
// The frame's attributes are encoded once, when the step is made; the
// buffers' addresses each run. A handler that finishes later returns an
// XLA_FFI_Future, which the step waits for: the device's queue moves on
// when the handler's work is done, as after any other step.
#ifndef KILN_EXEC_KERNELS_FFI_CALL_H_
#define KILN_EXEC_KERNELS_FFI_CALL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/ffi.h"
#include "exec/plan.h"

namespace kiln::exec {

// The attributes of one call (or one dictionary inside them), in the
// layout XLA_FFI_Attrs points into. Entries are kept sorted by name.
class FfiAttributes {
 public:
  FfiAttributes() = default;
  FfiAttributes(const FfiAttributes&) = delete;
  FfiAttributes& operator=(const FfiAttributes&) = delete;

  // `value` holds one element of `dtype` (its bytes).
  void AddScalar(std::string name, XLA_FFI_DataType dtype,
                 std::string_view value);
  // `data` holds `count` elements of `dtype`.
  void AddArray(std::string name, XLA_FFI_DataType dtype, std::string_view data,
                size_t count);
  void AddString(std::string name, std::string value);
  void AddDictionary(std::string name, std::unique_ptr<FfiAttributes> value);

  // The C view; valid while this object lives and is not added to.
  const XLA_FFI_Attrs& Encode();

 private:
  struct Entry {
    std::string name;
    XLA_FFI_ByteSpan name_span{};
    XLA_FFI_AttrType type{};
    std::vector<uint64_t> storage;  // scalar and array bytes, aligned
    std::string text;               // string bytes
    XLA_FFI_Scalar scalar{};
    XLA_FFI_Array array{};
    XLA_FFI_ByteSpan string{};
    std::unique_ptr<FfiAttributes> dictionary;
  };
  Entry& NewEntry(std::string name, XLA_FFI_AttrType type);
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<XLA_FFI_AttrType> types_;
  std::vector<XLA_FFI_ByteSpan*> names_;
  std::vector<void*> values_;
  XLA_FFI_Attrs attrs_{};
};

// One buffer of an FFI call: its element type and dimensions; tokens have
// no data (dtype TOKEN, rank 0).
struct FfiBufferSpec {
  XLA_FFI_DataType dtype = XLA_FFI_DataType_INVALID;
  std::vector<int64_t> dims;
};

// A step calling `handler` for custom-call target `target` with the step's
// inputs as arguments and its outputs as results. Runs the handler's
// instantiate stage at once (its error is returned); the state it sets is
// destroyed with the kernel.
StatusOr<std::unique_ptr<Kernel>> MakeFfiCallKernel(
    std::string target, const FfiHandler& handler,
    std::unique_ptr<FfiAttributes> attributes, std::vector<FfiBufferSpec> args,
    std::vector<FfiBufferSpec> rets);

// Futures (exec/ffi.cc's table creates and completes them).
XLA_FFI_Future* NewFfiFuture();
Status CompleteFfiFuture(XLA_FFI_Future* future, Status status);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_FFI_CALL_H_
