#include "exec/kernels/ffi_call.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "exec/executor.h"

// A future a handler completes from any thread; the step that got it
// waits for it and then destroys it.
struct XLA_FFI_Future {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  kiln::Status status;
};

namespace kiln::exec {

XLA_FFI_Future* NewFfiFuture() { return new XLA_FFI_Future(); }

Status CompleteFfiFuture(XLA_FFI_Future* future, Status status) {
  if (future == nullptr) return InvalidArgumentError("the FFI future is null");
  std::lock_guard<std::mutex> lock(future->mutex);
  if (future->done) {
    return FailedPreconditionError("the FFI future is already complete");
  }
  future->done = true;
  future->status = std::move(status);
  future->done_cv.notify_all();
  return OkStatus();
}

namespace {

Status AwaitFuture(XLA_FFI_Future* future) {
  Status status;
  {
    std::unique_lock<std::mutex> lock(future->mutex);
    future->done_cv.wait(lock, [&] { return future->done; });
    status = future->status;
  }
  delete future;
  return status;
}

class FfiCallKernel : public Kernel {
 public:
  FfiCallKernel(std::string target, const FfiHandler& handler,
                std::unique_ptr<FfiAttributes> attributes,
                std::vector<FfiBufferSpec> args,
                std::vector<FfiBufferSpec> rets)
      : target_(std::move(target)),
        handler_(handler),
        attributes_(std::move(attributes)),
        args_(std::move(args)),
        rets_(std::move(rets)) {}

  ~FfiCallKernel() override {
    if (state_ == nullptr) return;
    if (void (*deleter)(void*) = FfiTypeDeleter(state_type_id_)) {
      deleter(state_);
    }
  }

  // The instantiate stage: attributes only, no buffers.
  Status Instantiate() {
    if (handler_.bundle.instantiate == nullptr) return OkStatus();
    XLA_FFI_ExecutionContext context;
    context.state = &state_;
    context.state_type_id = &state_type_id_;
    XLA_FFI_CallFrame frame =
        Frame(&context, XLA_FFI_ExecutionStage_INSTANTIATE);
    return Called(TakeFfiError(handler_.bundle.instantiate(&frame)));
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    // Buffers of this run: the frame points into these.
    std::vector<XLA_FFI_Buffer> buffers(args_.size() + rets_.size());
    std::vector<std::vector<int64_t>> dims(buffers.size());
    std::vector<XLA_FFI_ArgType> arg_types(args_.size(),
                                           XLA_FFI_ArgType_BUFFER);
    std::vector<XLA_FFI_RetType> ret_types(rets_.size(),
                                           XLA_FFI_RetType_BUFFER);
    std::vector<void*> arg_pointers(args_.size());
    std::vector<void*> ret_pointers(rets_.size());
    auto fill = [&](size_t index, const FfiBufferSpec& spec, void* data) {
      XLA_FFI_Buffer& buffer = buffers[index];
      dims[index] = spec.dims;
      buffer.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
      buffer.dtype = spec.dtype;
      buffer.data = spec.dtype == XLA_FFI_DataType_TOKEN ? nullptr : data;
      buffer.rank = static_cast<int64_t>(spec.dims.size());
      buffer.dims = dims[index].data();
      return static_cast<void*>(&buffer);
    };
    for (size_t i = 0; i < args_.size(); ++i) {
      arg_pointers[i] = fill(i, args_[i], ctx.slot(step.inputs[i]));
    }
    for (size_t i = 0; i < rets_.size(); ++i) {
      ret_pointers[i] =
          fill(args_.size() + i, rets_[i], ctx.slot(step.outputs[i]));
    }
    XLA_FFI_ExecutionContext context;
    context.user_data = ctx.options().ffi_user_data;
    // Handlers read state during a run; they never set it then.
    void* state = state_;
    int64_t state_type_id = state_type_id_;
    context.state = &state;
    context.state_type_id = &state_type_id;
    context.device_ordinal = ctx.options().device_ordinal;
    context.run_id = ctx.options().run_id;

    for (auto [stage, handler] :
         {std::pair{XLA_FFI_ExecutionStage_PREPARE, handler_.bundle.prepare},
          std::pair{XLA_FFI_ExecutionStage_INITIALIZE,
                    handler_.bundle.initialize},
          std::pair{XLA_FFI_ExecutionStage_EXECUTE, handler_.bundle.execute}}) {
      if (handler == nullptr) continue;
      XLA_FFI_CallFrame frame = Frame(&context, stage);
      frame.args.size = static_cast<int64_t>(args_.size());
      frame.args.types = arg_types.data();
      frame.args.args = arg_pointers.data();
      frame.rets.size = static_cast<int64_t>(rets_.size());
      frame.rets.types = ret_types.data();
      frame.rets.rets = ret_pointers.data();
      Status status = TakeFfiError(handler(&frame));
      if (status.ok() && frame.future != nullptr) {
        status = AwaitFuture(frame.future);
      }
      RETURN_IF_ERROR(Called(std::move(status)));
    }
    return OkStatus();
  }

 private:
  XLA_FFI_CallFrame Frame(XLA_FFI_ExecutionContext* context,
                          XLA_FFI_ExecutionStage stage) const {
    XLA_FFI_CallFrame frame{};
    frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
    frame.api = FfiApi();
    frame.ctx = context;
    frame.stage = stage;
    frame.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
    frame.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
    frame.attrs = attributes_->Encode();
    frame.future = nullptr;
    return frame;
  }

  // The handler's error, naming the target.
  Status Called(Status status) const {
    if (status.ok()) return status;
    return Status(status.code(),
                  StrCat("FFI handler of custom_call target \"", target_,
                         "\" failed: ", status.message()));
  }

  std::string target_;
  FfiHandler handler_;
  // Encoded once, before any run; read-only afterwards.
  std::unique_ptr<FfiAttributes> attributes_;
  std::vector<FfiBufferSpec> args_;
  std::vector<FfiBufferSpec> rets_;
  void* state_ = nullptr;
  int64_t state_type_id_ = 0;
};

}  // namespace

FfiAttributes::Entry& FfiAttributes::NewEntry(std::string name,
                                              XLA_FFI_AttrType type) {
  auto entry = std::make_unique<Entry>();
  entry->name = std::move(name);
  entry->type = type;
  entries_.push_back(std::move(entry));
  return *entries_.back();
}

void FfiAttributes::AddScalar(std::string name, XLA_FFI_DataType dtype,
                              std::string_view value) {
  Entry& entry = NewEntry(std::move(name), XLA_FFI_AttrType_SCALAR);
  entry.storage.resize((value.size() + 7) / 8 + 1);
  std::memcpy(entry.storage.data(), value.data(), value.size());
  entry.scalar.dtype = dtype;
  entry.scalar.value = entry.storage.data();
}

void FfiAttributes::AddArray(std::string name, XLA_FFI_DataType dtype,
                             std::string_view data, size_t count) {
  Entry& entry = NewEntry(std::move(name), XLA_FFI_AttrType_ARRAY);
  entry.storage.resize((data.size() + 7) / 8 + 1);
  std::memcpy(entry.storage.data(), data.data(), data.size());
  entry.array.dtype = dtype;
  entry.array.size = count;
  entry.array.data = entry.storage.data();
}

void FfiAttributes::AddString(std::string name, std::string value) {
  Entry& entry = NewEntry(std::move(name), XLA_FFI_AttrType_STRING);
  entry.text = std::move(value);
}

void FfiAttributes::AddDictionary(std::string name,
                                  std::unique_ptr<FfiAttributes> value) {
  Entry& entry = NewEntry(std::move(name), XLA_FFI_AttrType_DICTIONARY);
  entry.dictionary = std::move(value);
}

const XLA_FFI_Attrs& FfiAttributes::Encode() {
  if (attrs_.struct_size != 0) return attrs_;
  std::stable_sort(
      entries_.begin(), entries_.end(),
      [](const auto& a, const auto& b) { return a->name < b->name; });
  types_.clear();
  names_.clear();
  values_.clear();
  for (auto& entry : entries_) {
    entry->name_span = {entry->name.data(), entry->name.size()};
    types_.push_back(entry->type);
    names_.push_back(&entry->name_span);
    switch (entry->type) {
      case XLA_FFI_AttrType_SCALAR:
        values_.push_back(&entry->scalar);
        break;
      case XLA_FFI_AttrType_ARRAY:
        values_.push_back(&entry->array);
        break;
      case XLA_FFI_AttrType_STRING:
        entry->string = {entry->text.data(), entry->text.size()};
        values_.push_back(&entry->string);
        break;
      case XLA_FFI_AttrType_DICTIONARY:
        // The nested attributes' struct is their own member: stable.
        values_.push_back(
            const_cast<XLA_FFI_Attrs*>(&entry->dictionary->Encode()));
        break;
    }
  }
  attrs_.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  attrs_.extension_start = nullptr;
  attrs_.size = static_cast<int64_t>(entries_.size());
  attrs_.types = types_.data();
  attrs_.names = names_.data();
  attrs_.attrs = values_.data();
  return attrs_;
}

StatusOr<std::unique_ptr<Kernel>> MakeFfiCallKernel(
    std::string target, const FfiHandler& handler,
    std::unique_ptr<FfiAttributes> attributes, std::vector<FfiBufferSpec> args,
    std::vector<FfiBufferSpec> rets) {
  if (attributes == nullptr) attributes = std::make_unique<FfiAttributes>();
  attributes->Encode();
  auto kernel = std::make_unique<FfiCallKernel>(
      std::move(target), handler, std::move(attributes), std::move(args),
      std::move(rets));
  RETURN_IF_ERROR(kernel->Instantiate());
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace kiln::exec
