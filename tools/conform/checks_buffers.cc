// Buffers and events: round trips of each element type, the four host-buffer
// semantics, byte strides and host layouts, deletion, copies, ready events
// and their callbacks.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "tools/conform/checks.h"

namespace kiln::conform {
namespace {

using client::Buffer;
using client::Device;
using client::Future;
using client::HostBufferSemantics;
using client::Shape;

// Memory aligned for zero-copy (plugins alias only aligned host memory).
struct AlignedBytes {
  explicit AlignedBytes(size_t size)
      : data(static_cast<uint8_t*>(
            std::aligned_alloc(4096, (size + 4095) / 4096 * 4096))) {}
  ~AlignedBytes() { std::free(data); }
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  // Left allocated: the plugin may still read it (its event never fired).
  void Leak() { data = nullptr; }
  uint8_t* data;
};

// The element type and dimensions the plugin reports for a buffer.
StatusOr<Shape> ReportedShape(const CheckContext& context,
                              PJRT_Buffer* buffer) {
  const client::Plugin& plugin = *context.plugin;
  auto type_args = KILN_PJRT_ARGS(PJRT_Buffer_ElementType_Args);
  type_args.buffer = buffer;
  RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_Buffer_ElementType, type_args));
  auto dims_args = KILN_PJRT_ARGS(PJRT_Buffer_Dimensions_Args);
  dims_args.buffer = buffer;
  RETURN_IF_ERROR(KILN_PJRT_CALL(plugin, PJRT_Buffer_Dimensions, dims_args));
  Shape shape;
  shape.element_type = type_args.type;
  if (dims_args.num_dims > 0 && dims_args.dims == nullptr) {
    return Mismatch("PJRT_Buffer_Dimensions gave ", dims_args.num_dims,
                    " dimensions and a null list");
  }
  shape.dimensions.assign(dims_args.dims, dims_args.dims + dims_args.num_dims);
  return shape;
}

// Values for a round trip of each element type: distinct bytes, with the
// extremes of the integer types and a value past 32 bits for the 64-bit ones.
HostArray RoundTripValues(PJRT_Buffer_Type type) {
  switch (type) {
    case PJRT_Buffer_Type_F32:
      return MakeArray<float>(type, {2, 3},
                              {0.5f, -1.25f, 3e38f, -0.0f, 1e-40f, 7});
    case PJRT_Buffer_Type_F64:
      return MakeArray<double>(type, {3}, {1e300, -2.5, 1e-310});
    case PJRT_Buffer_Type_S32:
      return MakeArray<int32_t>(type, {4}, {INT32_MIN, -1, 0, INT32_MAX});
    case PJRT_Buffer_Type_S64:
      return MakeArray<int64_t>(type, {3},
                                {INT64_MIN, int64_t{1} << 40, INT64_MAX});
    case PJRT_Buffer_Type_U8:
      return MakeArray<uint8_t>(type, {5}, {0, 1, 127, 128, 255});
    case PJRT_Buffer_Type_PRED:
      return MakeArray<uint8_t>(type, {2, 2}, {1, 0, 0, 1});
    case PJRT_Buffer_Type_BF16:
      return MakeArray<uint16_t>(type, {3},
                                 {FloatToBfloat16(1.5f), FloatToBfloat16(-3.0f),
                                  FloatToBfloat16(1e30f)});
    case PJRT_Buffer_Type_F16:
      // 1.0, -2.0, 65504 (the largest f16).
      return MakeArray<uint16_t>(type, {3}, {0x3c00, 0xc000, 0x7bff});
    default:
      return {};
  }
}

StatusOr<std::string> RoundTrip(CheckContext& context, PJRT_Buffer_Type type) {
  HostArray values = RoundTripValues(type);
  const Device& device = FirstDevice(context);
  ASSIGN_OR_RETURN(auto buffer, Upload(context, values, device));
  ASSIGN_OR_RETURN(Shape reported, ReportedShape(context, buffer->handle()));
  if (reported != values.shape) {
    return Mismatch("the plugin reports ", reported.ToString(),
                    " for an upload of ", values.shape.ToString());
  }
  RETURN_IF_ERROR(ExpectContents("the downloaded buffer", *buffer, values));
  return FormatArray(values);
}

template <PJRT_Buffer_Type kType>
StatusOr<std::string> RoundTripOf(CheckContext& context) {
  return RoundTrip(context, kType);
}

StatusOr<std::string> ScalarAndEmpty(CheckContext& context) {
  const Device& device = FirstDevice(context);
  HostArray scalar = MakeArray<float>(PJRT_Buffer_Type_F32, {}, {42.5f});
  ASSIGN_OR_RETURN(auto buffer, Upload(context, scalar, device));
  RETURN_IF_ERROR(ExpectContents("a scalar", *buffer, scalar));
  HostArray empty = MakeArray<float>(PJRT_Buffer_Type_F32, {0, 3}, {});
  ASSIGN_OR_RETURN(auto empty_buffer, Upload(context, empty, device));
  ASSIGN_OR_RETURN(Shape reported,
                   ReportedShape(context, empty_buffer->handle()));
  if (reported != empty.shape) {
    return Mismatch("an empty f32[0,3] reports ", reported.ToString());
  }
  return std::string("f32[] and f32[0,3]");
}

// --- Host-buffer semantics

const std::vector<float> kSemanticsValues = {1, 2, 3, 4, 5, 6, 7, 8};

StatusOr<std::string> ImmutableOnlyDuringCall(CheckContext& context) {
  std::vector<float> host = kSemanticsValues;
  HostArray expected = MakeArray(PJRT_Buffer_Type_F32, {8}, kSemanticsValues);
  ASSIGN_OR_RETURN(auto buffer,
                   context.client->BufferFromHost(
                       host.data(), expected.shape, &FirstDevice(context),
                       nullptr, HostBufferSemantics::kImmutableOnlyDuringCall));
  // The plugin had the bytes only during the call.
  std::fill(host.begin(), host.end(), -1.0f);
  RETURN_IF_ERROR(ExpectContents("the buffer, after the host copy changed",
                                 *buffer, expected));
  return std::string("copied before the call returned");
}

StatusOr<std::string> ImmutableUntilTransferCompletes(CheckContext& context) {
  std::vector<float> host = kSemanticsValues;
  HostArray expected = MakeArray(PJRT_Buffer_Type_F32, {8}, kSemanticsValues);
  Future done;
  ASSIGN_OR_RETURN(
      auto buffer,
      context.client->BufferFromHost(
          host.data(), expected.shape, &FirstDevice(context), nullptr,
          HostBufferSemantics::kImmutableUntilTransferCompletes, &done));
  if (done.empty()) {
    return Mismatch(
        "no done_with_host_buffer event for "
        "kImmutableUntilTransferCompletes");
  }
  RETURN_IF_ERROR(AwaitWithin(done, 30, "done_with_host_buffer"));
  std::fill(host.begin(), host.end(), -1.0f);
  RETURN_IF_ERROR(
      ExpectContents("the buffer, after done_with_host_buffer and a "
                     "change to the host copy",
                     *buffer, expected));
  return std::string("done_with_host_buffer fired; the buffer kept its bytes");
}

// Zero-copy (immutable or mutable): the buffer reads the host bytes, and
// done_with_host_buffer fires at the latest once the buffer is gone. With
// `mutable_semantics`, writes to the host memory may show in the buffer
// (aliased) or not (copied); both conform.
StatusOr<std::string> ZeroCopy(CheckContext& context, bool mutable_semantics) {
  HostArray expected = MakeArray(PJRT_Buffer_Type_F32, {8}, kSemanticsValues);
  AlignedBytes host(expected.bytes.size());
  std::memcpy(host.data, expected.bytes.data(), expected.bytes.size());
  PJRT_HostBufferSemantics semantics =
      mutable_semantics ? PJRT_HostBufferSemantics_kMutableZeroCopy
                        : PJRT_HostBufferSemantics_kImmutableZeroCopy;
  auto upload =
      RawBufferFromHost(context, host.data, expected.shape, semantics, nullptr,
                        *context.client, FirstDevice(context));
  if (!upload.ok()) return upload.status();
  std::string detail;
  {
    ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                     RawToHost(context, upload->buffer.handle(),
                               expected.bytes.size(), nullptr));
    RETURN_IF_ERROR(ExpectEqual("the zero-copy buffer",
                                HostArray{expected.shape, bytes}, expected));
    detail = "reads the host bytes";
    if (mutable_semantics) {
      float changed = 99;
      std::memcpy(host.data, &changed, sizeof(changed));
      ASSIGN_OR_RETURN(bytes, RawToHost(context, upload->buffer.handle(),
                                        expected.bytes.size(), nullptr));
      float first;
      std::memcpy(&first, bytes.data(), sizeof(first));
      detail += first == changed ? ", aliases them" : ", holds a copy";
    }
  }
  upload->buffer.Reset();
  if (upload->done_with_host_buffer.empty()) {
    return StrCat(detail, "; no done_with_host_buffer event");
  }
  Status done =
      AwaitWithin(upload->done_with_host_buffer, 30,
                  "done_with_host_buffer, after the buffer was destroyed,");
  if (!done.ok()) {
    host.Leak();
    return done;
  }
  return StrCat(detail,
                "; done_with_host_buffer fired once the buffer was gone");
}

StatusOr<std::string> ImmutableZeroCopy(CheckContext& context) {
  return ZeroCopy(context, false);
}

StatusOr<std::string> MutableZeroCopy(CheckContext& context) {
  return ZeroCopy(context, true);
}

// --- Strides and host layouts: a 2x3 f32 matrix whose element (i, j) is
// 10 i + j.

float MatrixValue(int i, int j) { return 10.0f * i + j; }

HostArray RowMajorMatrix() {
  std::vector<float> values;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) values.push_back(MatrixValue(i, j));
  return MakeArray(PJRT_Buffer_Type_F32, {2, 3}, values);
}

StatusOr<std::string> StridedUpload(CheckContext& context,
                                    const std::vector<float>& host,
                                    const std::vector<int64_t>& byte_strides) {
  HostArray expected = RowMajorMatrix();
  ASSIGN_OR_RETURN(
      RawUpload upload,
      RawBufferFromHost(context, host.data(), expected.shape,
                        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                        &byte_strides, *context.client, FirstDevice(context)));
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                   RawToHost(context, upload.buffer.handle(),
                             expected.bytes.size(), nullptr));
  RETURN_IF_ERROR(ExpectEqual(
      StrCat("the upload with byte strides [", StrJoin(byte_strides, ","), "]"),
      HostArray{expected.shape, bytes}, expected));
  return StrCat("byte strides [", StrJoin(byte_strides, ","),
                "] read as row-major ", FormatArray(expected));
}

StatusOr<std::string> ColumnMajorUpload(CheckContext& context) {
  std::vector<float> column_major(6);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) column_major[j * 2 + i] = MatrixValue(i, j);
  return StridedUpload(context, column_major, {4, 8});
}

StatusOr<std::string> PaddedRowsUpload(CheckContext& context) {
  std::vector<float> padded(10, -1.0f);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) padded[i * 5 + j] = MatrixValue(i, j);
  return StridedUpload(context, padded, {20, 4});
}

StatusOr<std::string> ColumnMajorDownload(CheckContext& context) {
  HostArray matrix = RowMajorMatrix();
  ASSIGN_OR_RETURN(auto buffer, Upload(context, matrix, FirstDevice(context)));
  std::vector<int64_t> minor_to_major = {0, 1};
  PJRT_Buffer_MemoryLayout layout{};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = minor_to_major.size();
  ASSIGN_OR_RETURN(
      std::vector<uint8_t> bytes,
      RawToHost(context, buffer->handle(), matrix.bytes.size(), &layout));
  std::vector<float> expected(6);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) expected[j * 2 + i] = MatrixValue(i, j);
  RETURN_IF_ERROR(
      ExpectEqual("the column-major download", HostArray{matrix.shape, bytes},
                  MakeArray(PJRT_Buffer_Type_F32, {2, 3}, expected)));
  return std::string("minor_to_major [0,1] gives the columns in order");
}

// --- Lifetime and copies

StatusOr<std::string> DeleteBuffer(CheckContext& context) {
  HostArray values = MakeArray<float>(PJRT_Buffer_Type_F32, {4}, {1, 2, 3, 4});
  ASSIGN_OR_RETURN(auto buffer, Upload(context, values, FirstDevice(context)));
  ASSIGN_OR_RETURN(bool deleted, buffer->IsDeleted());
  if (deleted) return Mismatch("a new buffer reads as deleted");
  RETURN_IF_ERROR(NamingSlot(buffer->Delete(), "PJRT_Buffer_Delete"));
  ASSIGN_OR_RETURN(deleted, buffer->IsDeleted());
  if (!deleted) return Mismatch("PJRT_Buffer_IsDeleted is false after Delete");
  std::vector<float> host(4);
  Status read = buffer->ToHost(host.data(), host.size() * sizeof(float));
  if (read.ok()) return Mismatch("reading a deleted buffer succeeded");
  return StrCat("deleted; reading it: ", read.ToString());
}

StatusOr<std::string> OnDeviceSize(CheckContext& context) {
  HostArray values = MakeArray<float>(PJRT_Buffer_Type_F32, {4}, {1, 2, 3, 4});
  ASSIGN_OR_RETURN(auto buffer, Upload(context, values, FirstDevice(context)));
  ASSIGN_OR_RETURN(size_t size, buffer->OnDeviceSizeInBytes());
  if (size < values.bytes.size()) {
    return Mismatch(size, " bytes on the device for ", values.shape.ToString(),
                    ", which needs ", values.bytes.size());
  }
  return StrCat(size, " bytes for f32[4]");
}

StatusOr<std::string> CopyToDevice(CheckContext& context) {
  const auto& devices = context.client->addressable_devices();
  if (devices.size() < 2) {
    return NotApplicable("needs 2 addressable devices, the client has ",
                         devices.size());
  }
  HostArray values = MakeArray<int32_t>(PJRT_Buffer_Type_S32, {3}, {7, 8, 9});
  ASSIGN_OR_RETURN(auto buffer, Upload(context, values, *devices[0]));
  ASSIGN_OR_RETURN(auto copy, buffer->CopyToDevice(*devices[1]));
  RETURN_IF_ERROR(copy->AwaitReady());
  if (copy->device() != devices[1]) {
    return Mismatch("the copy is on device ",
                    copy->device() ? copy->device()->id() : -1, ", expected ",
                    devices[1]->id());
  }
  RETURN_IF_ERROR(ExpectContents("the copy", *copy, values));
  RETURN_IF_ERROR(ExpectContents("the source after the copy", *buffer, values));
  return StrCat("device ", devices[0]->id(), " -> ", devices[1]->id());
}

StatusOr<std::string> CopyToMemory(CheckContext& context) {
  const Device& device = FirstDevice(context);
  if (device.memories().empty()) {
    return NotApplicable("the plugin reports no memories");
  }
  // Into the first memory that is not the default, else the default.
  const client::Memory* target = device.memories().front();
  for (const client::Memory* memory : device.memories()) {
    if (memory != device.default_memory()) {
      target = memory;
      break;
    }
  }
  HostArray values = MakeArray<float>(PJRT_Buffer_Type_F32, {2}, {-1, 1});
  ASSIGN_OR_RETURN(auto buffer, Upload(context, values, device));
  ASSIGN_OR_RETURN(auto copy, buffer->CopyToMemory(*target));
  RETURN_IF_ERROR(copy->AwaitReady());
  RETURN_IF_ERROR(ExpectContents("the copy", *copy, values));
  ASSIGN_OR_RETURN(client::Memory * memory, copy->GetMemory());
  if (memory != target) {
    return Mismatch("the copy is in ", memory ? memory->kind() : "(unknown)",
                    ", expected ", target->kind());
  }
  return StrCat("into ", target->kind());
}

// --- Events

StatusOr<std::string> AwaitReadyEvent(CheckContext& context) {
  HostArray values = MakeArray<float>(PJRT_Buffer_Type_F32, {4}, {1, 2, 3, 4});
  ASSIGN_OR_RETURN(auto buffer, context.client->BufferFromHost(
                                    values.bytes.data(), values.shape,
                                    &FirstDevice(context)));
  ASSIGN_OR_RETURN(Future ready, buffer->ReadyEvent());
  if (ready.empty()) return Mismatch("PJRT_Buffer_ReadyEvent gave no event");
  RETURN_IF_ERROR(AwaitWithin(ready, 30, "the buffer's ready event"));
  ASSIGN_OR_RETURN(bool is_ready, ready.IsReady());
  if (!is_ready) return Mismatch("PJRT_Event_IsReady is false after Await");
  return std::string("awaited; IsReady after");
}

// Waits for a callback registered with OnReady: it must run exactly once.
class CallbackProbe {
 public:
  std::function<void(Status)> Callback() {
    return [this](Status status) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++calls_;
      status_ = std::move(status);
      fired_.notify_all();
    };
  }
  // The callback's status; an error when it never ran or ran twice.
  Status Wait(double seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!fired_.wait_for(lock, std::chrono::duration<double>(seconds),
                         [this] { return calls_ > 0; })) {
      return DeadlineExceededError("the OnReady callback did not run within ",
                                   seconds, " s");
    }
    lock.unlock();
    // A second call would come soon after the first.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    lock.lock();
    if (calls_ != 1)
      return Mismatch("the OnReady callback ran ", calls_, " times");
    return status_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable fired_;
  int calls_ = 0;
  Status status_;
};

StatusOr<std::string> OnReadyOfReadyEvent(CheckContext& context) {
  HostArray values = MakeArray<float>(PJRT_Buffer_Type_F32, {4}, {1, 2, 3, 4});
  ASSIGN_OR_RETURN(auto buffer, Upload(context, values, FirstDevice(context)));
  ASSIGN_OR_RETURN(Future ready, buffer->ReadyEvent());
  // Heap-held: a late call after a timeout must not touch a dead frame.
  auto probe = std::make_shared<CallbackProbe>();
  RETURN_IF_ERROR(
      std::move(ready).OnReady([probe, callback = probe->Callback()](
                                   Status status) { callback(status); }));
  RETURN_IF_ERROR(probe->Wait(30).WithContext("OnReady's status"));
  return std::string("called once, with OK");
}

StatusOr<std::string> ToHostAsync(CheckContext& context) {
  HostArray values =
      MakeArray<int32_t>(PJRT_Buffer_Type_S32, {4}, {4, 3, 2, 1});
  ASSIGN_OR_RETURN(auto buffer, Upload(context, values, FirstDevice(context)));
  std::vector<uint8_t> bytes(values.bytes.size());
  ASSIGN_OR_RETURN(Future done,
                   buffer->ToHostAsync(bytes.data(), bytes.size()));
  RETURN_IF_ERROR(AwaitWithin(done, 30, "the ToHostBuffer event"));
  RETURN_IF_ERROR(
      ExpectEqual("the download", HostArray{values.shape, bytes}, values));
  return std::string("the event fired with the bytes in place");
}

}  // namespace

void AddBufferChecks(std::vector<Check>& checks) {
  checks.push_back({"buffer.round_trip.f32", CheckKind::kRequired,
                    "upload and download keep shape and bytes",
                    RoundTripOf<PJRT_Buffer_Type_F32>});
  struct Optional {
    const char* name;
    CheckFunction run;
  };
  for (const Optional& type :
       std::vector<Optional>{{"f64", RoundTripOf<PJRT_Buffer_Type_F64>},
                             {"s32", RoundTripOf<PJRT_Buffer_Type_S32>},
                             {"s64", RoundTripOf<PJRT_Buffer_Type_S64>},
                             {"u8", RoundTripOf<PJRT_Buffer_Type_U8>},
                             {"pred", RoundTripOf<PJRT_Buffer_Type_PRED>},
                             {"bf16", RoundTripOf<PJRT_Buffer_Type_BF16>},
                             {"f16", RoundTripOf<PJRT_Buffer_Type_F16>}}) {
    checks.push_back({StrCat("buffer.round_trip.", type.name),
                      CheckKind::kOptional,
                      "upload and download keep shape and bytes", type.run});
  }
  checks.push_back({"buffer.scalar_and_empty", CheckKind::kOptional,
                    "rank 0 and zero-element arrays", ScalarAndEmpty});
  checks.push_back({"buffer.semantics.immutable_only_during_call",
                    CheckKind::kRequired,
                    "the host copy may change once the call returns",
                    ImmutableOnlyDuringCall});
  checks.push_back(
      {"buffer.semantics.immutable_until_transfer_completes",
       CheckKind::kRequired,
       "done_with_host_buffer fires; the host copy may change after",
       ImmutableUntilTransferCompletes});
  checks.push_back({"buffer.semantics.immutable_zero_copy",
                    CheckKind::kOptional,
                    "reads aligned host memory; releases it when destroyed",
                    ImmutableZeroCopy});
  checks.push_back(
      {"buffer.semantics.mutable_zero_copy", CheckKind::kOptional,
       "reads aligned host memory (aliased or copied); releases it",
       MutableZeroCopy});
  checks.push_back({"buffer.strides.column_major", CheckKind::kOptional,
                    "byte_strides [4,8] upload a column-major 2x3",
                    ColumnMajorUpload});
  checks.push_back({"buffer.strides.padded_rows", CheckKind::kOptional,
                    "byte_strides [20,4] skip padding after each row",
                    PaddedRowsUpload});
  checks.push_back({"buffer.host_layout.column_major", CheckKind::kOptional,
                    "ToHostBuffer with minor_to_major [0,1]",
                    ColumnMajorDownload});
  checks.push_back({"buffer.delete", CheckKind::kRequired,
                    "IsDeleted after Delete; reading it is an error",
                    DeleteBuffer});
  checks.push_back({"buffer.on_device_size", CheckKind::kOptional,
                    "at least the dense size", OnDeviceSize});
  checks.push_back({"buffer.copy_to_device", CheckKind::kOptional,
                    "PJRT_Buffer_CopyToDevice between two devices",
                    CopyToDevice});
  checks.push_back({"buffer.copy_to_memory", CheckKind::kOptional,
                    "PJRT_Buffer_CopyToMemory into another memory",
                    CopyToMemory});
  checks.push_back({"event.await", CheckKind::kRequired,
                    "a buffer's ready event awaits OK and then is ready",
                    AwaitReadyEvent});
  checks.push_back({"event.on_ready", CheckKind::kRequired,
                    "OnReady of a fired event calls back once with OK",
                    OnReadyOfReadyEvent});
  checks.push_back({"event.to_host_async", CheckKind::kRequired,
                    "ToHostBuffer's event fires with the bytes written",
                    ToHostAsync});
}

}  // namespace kiln::conform
