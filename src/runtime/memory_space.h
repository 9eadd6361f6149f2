// Memory spaces: where a buffer's bytes live, as PJRT names them.
//
// Every device has three. On a CPU they are all host memory; they differ in
// what frameworks expect of them (the default `device` space for computation,
// `pinned_host` and `unpinned_host` for host offloading), so Kiln keeps them
// apart in names, ids and buffer placement, and copies between them for real.
#ifndef KILN_RUNTIME_MEMORY_SPACE_H_
#define KILN_RUNTIME_MEMORY_SPACE_H_

#include <optional>
#include <string>
#include <string_view>

namespace kiln::runtime {

class Device;

// X(enumerator, kind name, kind id). Kind ids are stable and nonzero (the
// conformance suites treat 0 as "unset").
#define KILN_MEMORY_KINDS(X)       \
  X(kDevice, "device", 1)          \
  X(kPinnedHost, "pinned_host", 2) \
  X(kUnpinnedHost, "unpinned_host", 3)

enum class MemoryKind : int {
#define KILN_MEMORY_KIND_ENUM(e, name, id) e,
  KILN_MEMORY_KINDS(KILN_MEMORY_KIND_ENUM)
#undef KILN_MEMORY_KIND_ENUM
};

inline constexpr int kNumMemoryKinds = 0
#define KILN_MEMORY_KIND_COUNT(e, name, id) +1
    KILN_MEMORY_KINDS(KILN_MEMORY_KIND_COUNT)
#undef KILN_MEMORY_KIND_COUNT
    ;

std::string_view MemoryKindName(MemoryKind kind);
int MemoryKindId(MemoryKind kind);
std::optional<MemoryKind> MemoryKindFromName(std::string_view name);
std::optional<MemoryKind> MemoryKindFromId(int kind_id);

class MemorySpace {
 public:
  MemorySpace(int id, MemoryKind kind, Device* device);

  // Unique among the client's memory spaces.
  int id() const { return id_; }
  MemoryKind kind() const { return kind_; }
  std::string_view kind_name() const { return MemoryKindName(kind_); }
  int kind_id() const { return MemoryKindId(kind_); }
  // The one device that can address this memory space.
  Device* device() const { return device_; }

  // "kiln:cpu:0:device" (for logs).
  const std::string& debug_string() const { return debug_string_; }
  // "MemorySpace(id=0, kind=device, device=0)".
  const std::string& to_string() const { return to_string_; }

 private:
  int id_;
  MemoryKind kind_;
  Device* device_;
  std::string debug_string_;
  std::string to_string_;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_MEMORY_SPACE_H_
