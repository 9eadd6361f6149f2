#include "exec/executor.h"

#include <cstring>
#include <functional>
#include <optional>
#include <thread>

#include "exec/float_mode.h"

namespace kiln::exec {
namespace {

// Where empty arrays and tokens point: never read or written, but non-null
// and aligned so kernels may form pointers from it.
alignas(kBufferAlignment) std::byte empty_storage[kBufferAlignment];

}  // namespace

StatusOr<void*> OwningOutputAllocator::Allocate(int index,
                                                const ValueSpec& spec) {
  if (buffers_.size() <= static_cast<size_t>(index)) {
    buffers_.resize(index + 1);
  }
  ASSIGN_OR_RETURN(buffers_[index], AllocateAligned(spec.byte_size()));
  return static_cast<void*>(buffers_[index].data());
}

RunContext::RunContext(const std::vector<Slot>& slots,
                       const RunOptions& options)
    : slot_infos_(slots), options_(options), slots_(slots.size(), nullptr) {}

Status RunContext::CancelledStatus() const {
  return CancelledError("the run was cancelled");
}

Status RunContext::RunRegion(const Region& region) {
  Profile* profile = options_.profile;
  for (const Step& step : region.steps) {
    if (cancelled()) return CancelledStatus();
    int64_t begin = profile != nullptr ? profile->Now() : 0;
    ++depth_;
    Status status = step.kernel->Run(*this, step);
    --depth_;
    if (profile != nullptr) {
      profile->Add({step.where, begin, profile->Now(), depth_,
                    std::hash<std::thread::id>()(std::this_thread::get_id())});
    }
    if (!status.ok()) {
      if (status.code() == StatusCode::kCancelled) return status;
      return status.WithContext(step.where);
    }
  }
  return OkStatus();
}

void RunContext::CopySlot(SlotId from, SlotId to) const {
  std::byte* source = slots_[from];
  std::byte* target = slots_[to];
  if (source == target) return;
  int64_t bytes = slot_infos_[to].byte_size();
  if (bytes > 0) std::memmove(target, source, bytes);
}

StatusOr<std::vector<void*>> Execute(const Plan& plan,
                                     std::span<const void* const> arguments,
                                     OutputAllocator& allocator,
                                     const RunOptions& options) {
  // A local class has the access of its function (a friend of RunContext).
  auto run = [&]() -> StatusOr<std::vector<void*>> {
    if (arguments.size() != plan.arguments().size()) {
      return InvalidArgumentError("the program takes ", plan.arguments().size(),
                                  " arguments; ", arguments.size(),
                                  " were given");
    }
    std::optional<ScopedFlushDenormals> flush_denormals;
    if (options.flush_denormals) flush_denormals.emplace();
    RunContext ctx(plan.slots(), options);
    ASSIGN_OR_RETURN(ctx.arena_, plan.arena_cache().Take(plan.arena_bytes()));
    std::vector<void*> outputs(plan.outputs().size(), nullptr);
    for (size_t i = 0; i < outputs.size(); ++i) {
      const ValueSpec& spec = plan.outputs()[i];
      ASSIGN_OR_RETURN(outputs[i],
                       allocator.Allocate(static_cast<int>(i), spec));
      if (outputs[i] == nullptr && spec.byte_size() > 0) {
        return InternalError("the output allocator returned null for output ",
                             i);
      }
    }
    const std::vector<Slot>& slots = plan.slots();
    for (size_t id = 0; id < slots.size(); ++id) {
      const Slot& slot = slots[id];
      std::byte* address = nullptr;
      switch (slot.kind) {
        case SlotKind::kTemp:
          // Values fusion keeps in registers still have slots; a plan
          // whose every temporary went that way has no arena at all.
          address = ctx.arena_.size() > 0 ? ctx.arena_.data() + slot.offset
                                          : empty_storage;
          break;
        case SlotKind::kArgument:
          address = const_cast<std::byte*>(
              static_cast<const std::byte*>(arguments[slot.index]));
          break;
        case SlotKind::kOutput:
          address = static_cast<std::byte*>(outputs[slot.index]);
          break;
        case SlotKind::kConstant:
          address = plan.constants()[slot.index].data();
          break;
      }
      if (address == nullptr || slot.byte_size() == 0) {
        if (slot.byte_size() > 0) {
          return InvalidArgumentError("argument ", slot.index,
                                      " is null but holds ",
                                      slot.shape.ToString());
        }
        if (address == nullptr) address = empty_storage;
      }
      ctx.slots_[id] = address;
    }
    Status status = ctx.RunRegion(plan.main());
    plan.arena_cache().Give(std::move(ctx.arena_));
    RETURN_IF_ERROR(status);
    return outputs;
  };
  auto outputs = run();
  if (options.communicator != nullptr) {
    if (outputs.ok()) {
      options.communicator->Finish(options.participant);
    } else {
      options.communicator->Abort(options.participant, outputs.status());
    }
  }
  return outputs;
}

}  // namespace kiln::exec
