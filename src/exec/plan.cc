#include "exec/plan.h"

#include <cxxabi.h>

#include <cstdlib>
#include <new>
#include <typeinfo>

#if defined(__linux__)
#include <sys/sysinfo.h>
#endif

#include "base/strings.h"

namespace kiln::exec {
namespace {

// The most bytes one buffer may take: the machine's memory (RAM and swap),
// or 64 TiB where that is unknown. A larger request can never be filled;
// refusing it before asking the allocator makes it an error on every
// allocator (sanitizer allocators abort on such sizes instead of throwing
// bad_alloc, and an overcommitting one would crash later instead).
int64_t MaxBufferBytes() {
  static const int64_t max_bytes = [] {
    constexpr uint64_t kUnknown = uint64_t{1} << 46;
#if defined(__linux__)
    struct sysinfo info;
    if (sysinfo(&info) == 0) {
      uint64_t total = (static_cast<uint64_t>(info.totalram) +
                        static_cast<uint64_t>(info.totalswap)) *
                       info.mem_unit;
      if (total > 0 && total < kUnknown) return static_cast<int64_t>(total);
    }
#endif
    return static_cast<int64_t>(kUnknown);
  }();
  return max_bytes;
}

}  // namespace

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  // Never zero bytes, so data() is a valid, aligned, non-null pointer even
  // for empty arrays.
  data_ = static_cast<std::byte*>(
      ::operator new(bytes == 0 ? kBufferAlignment : bytes,
                     std::align_val_t(kBufferAlignment)));
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    this->~AlignedBuffer();
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() {
  if (data_ != nullptr) {
    ::operator delete(data_, std::align_val_t(kBufferAlignment));
  }
  data_ = nullptr;
}

StatusOr<AlignedBuffer> AllocateAligned(int64_t bytes) {
  if (bytes < 0) {
    return ResourceExhaustedError("cannot allocate ", bytes, " bytes");
  }
  if (bytes > MaxBufferBytes()) {
    return ResourceExhaustedError(
        "cannot allocate ", HumanBytes(static_cast<uint64_t>(bytes)),
        ": more than this machine's memory (",
        HumanBytes(static_cast<uint64_t>(MaxBufferBytes())), ")");
  }
  try {
    return AlignedBuffer(static_cast<size_t>(bytes));
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError("out of memory allocating ",
                                  HumanBytes(static_cast<uint64_t>(bytes)));
  }
}

StatusOr<AlignedBuffer> ArenaCache::Take(int64_t bytes) {
  // A plan without scratch (a small elementwise program) takes no arena.
  if (bytes == 0) return AlignedBuffer();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < kept_.size(); ++i) {
      if (static_cast<int64_t>(kept_[i].size()) >= bytes) {
        AlignedBuffer arena = std::move(kept_[i]);
        kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i));
        return arena;
      }
    }
  }
  return AllocateAligned(bytes);
}

void ArenaCache::Give(AlignedBuffer arena) {
  if (arena.size() == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (kept_.size() < kMaxKept) kept_.push_back(std::move(arena));
}

namespace {

// A kernel's class name without Kiln's namespaces: "ElementwiseKernel".
std::string KernelName(const Kernel& kernel) {
  const char* mangled = typeid(kernel).name();
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : mangled;
  std::free(demangled);
  for (std::string_view prefix :
       {"kiln::exec::", "kernels::", "(anonymous namespace)::"}) {
    while (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
  }
  return name;
}

std::string SlotList(const std::vector<SlotId>& slots) {
  return StrJoin(slots, ", ",
                 [](std::string& out, SlotId id) { out += StrCat("s", id); });
}

}  // namespace

std::string DescribePlan(const Plan& plan) {
  int64_t constant_bytes = 0;
  for (const AlignedBuffer& constant : plan.constants()) {
    constant_bytes += static_cast<int64_t>(constant.size());
  }
  std::string text =
      StrCat("plan: ", plan.main().steps.size(), " steps in the entry, ",
             plan.arguments().size(), " arguments, ", plan.outputs().size(),
             " outputs, arena ", plan.arena_bytes(), " bytes (live peak ",
             plan.live_peak_bytes(), "), ", plan.constants().size(),
             " constants of ", constant_bytes, " bytes\n");
  text += StrCat("params (", SlotList(plan.main().params), ")\n");
  for (size_t i = 0; i < plan.main().steps.size(); ++i) {
    const Step& step = plan.main().steps[i];
    text += StrCat("  ", i, ": (", SlotList(step.outputs),
                   ") = ", step.kernel ? KernelName(*step.kernel) : "(none)",
                   "(", SlotList(step.inputs), ")  ", step.where, "\n");
  }
  text += StrCat("results (", SlotList(plan.main().results), ")\n");
  for (size_t id = 0; id < plan.slots().size(); ++id) {
    const Slot& slot = plan.slots()[id];
    std::string place;
    switch (slot.kind) {
      case SlotKind::kTemp:
        place = StrCat("arena +", slot.offset);
        break;
      case SlotKind::kArgument:
        place = StrCat("argument ", slot.index);
        break;
      case SlotKind::kOutput:
        place = StrCat("output ", slot.index);
        break;
      case SlotKind::kConstant:
        place = StrCat("constant ", slot.index);
        break;
    }
    text += StrCat(
        "  s", id, ": ",
        slot.is_token ? std::string("!stablehlo.token") : slot.shape.ToString(),
        "  ", place, "\n");
  }
  return text;
}

}  // namespace kiln::exec
