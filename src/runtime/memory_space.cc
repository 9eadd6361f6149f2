#include "runtime/memory_space.h"

#include "base/strings.h"
#include "runtime/device.h"

namespace kiln::runtime {
namespace {

struct MemoryKindInfo {
  std::string_view name;
  int id;
};

constexpr MemoryKindInfo kKinds[] = {
#define KILN_MEMORY_KIND_INFO(e, name, id) {name, id},
    KILN_MEMORY_KINDS(KILN_MEMORY_KIND_INFO)
#undef KILN_MEMORY_KIND_INFO
};

}  // namespace

std::string_view MemoryKindName(MemoryKind kind) {
  return kKinds[static_cast<int>(kind)].name;
}

int MemoryKindId(MemoryKind kind) { return kKinds[static_cast<int>(kind)].id; }

std::optional<MemoryKind> MemoryKindFromName(std::string_view name) {
  for (int i = 0; i < kNumMemoryKinds; ++i) {
    if (kKinds[i].name == name) return static_cast<MemoryKind>(i);
  }
  return std::nullopt;
}

std::optional<MemoryKind> MemoryKindFromId(int kind_id) {
  for (int i = 0; i < kNumMemoryKinds; ++i) {
    if (kKinds[i].id == kind_id) return static_cast<MemoryKind>(i);
  }
  return std::nullopt;
}

MemorySpace::MemorySpace(int id, MemoryKind kind, Device* device)
    : id_(id), kind_(kind), device_(device) {
  debug_string_ = StrCat(device->debug_string(), ":", MemoryKindName(kind));
  to_string_ = StrCat("MemorySpace(id=", id, ", kind=", MemoryKindName(kind),
                      ", device=", device->id(), ")");
}

}  // namespace kiln::runtime
