// Argument checking for the PJRT entry points.
//
// Every argument struct starts with `struct_size`, which the caller sets to
// the size its header declares. Kiln follows PJRT's versioning: a caller
// built against an older header passes a smaller size, so fields past it
// are absent (inputs treated as unset, outputs not written); a larger size
// is a newer caller, whose unknown tail is ignored. Only a size too small
// for the fields a call cannot do without is an error.
#ifndef KILN_PJRT_ARGS_H_
#define KILN_PJRT_ARGS_H_

#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <string_view>

#include "base/status.h"
#include "pjrt/extensions.h"
#include "pjrt_c_api.h"

namespace kiln::pjrt {

// The name and current size of each struct Kiln checks.
template <typename T>
struct StructInfo;

#define KILN_PJRT_STRUCT_INFO(T)                     \
  template <>                                        \
  struct StructInfo<T> {                             \
    static constexpr std::string_view kName = #T;    \
    static constexpr size_t kSize = T##_STRUCT_SIZE; \
  };
#define KILN_PJRT_SLOT(name, minor, state) KILN_PJRT_STRUCT_INFO(name##_Args)
#include "pjrt_c_api_slots.def"
KILN_PJRT_STRUCT_INFO(PJRT_NamedValue)
KILN_PJRT_STRUCT_INFO(PJRT_Program)
KILN_PJRT_STRUCT_INFO(PJRT_ExecuteOptions)
KILN_PJRT_STRUCT_INFO(PJRT_Buffer_MemoryLayout)
KILN_PJRT_STRUCT_INFO(PJRT_Buffer_MemoryLayout_Tiled)
KILN_PJRT_STRUCT_INFO(PJRT_Buffer_MemoryLayout_Strides)
KILN_PJRT_STRUCT_INFO(PJRT_Buffer_CopyRawToHostFuture_Callback_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Shardings_PJRT_Executable_ParameterShardings_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Shardings_PJRT_Executable_OutputShardings_Args)
KILN_PJRT_STRUCT_INFO(PJRT_FFI_TypeID_Register_Args)
KILN_PJRT_STRUCT_INFO(PJRT_FFI_UserData_Add_Args)
KILN_PJRT_STRUCT_INFO(PJRT_FFI_Register_Handler_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Register_Custom_Partitioner_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Register_Batch_Partitionable_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Layouts_MemoryLayout_Destroy_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Layouts_MemoryLayout_Serialize_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args)
KILN_PJRT_STRUCT_INFO(PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args)
#undef KILN_PJRT_STRUCT_INFO

// Checks that `s` is not null and that its struct_size covers the first
// `needed` bytes (see PJRT_STRUCT_SIZE). `what` names it in errors; by
// default the struct's type name.
template <typename T>
Status CheckStruct(const T* s, size_t needed,
                   std::string_view what = StructInfo<T>::kName) {
  if (s == nullptr) return InvalidArgumentError(what, " is null");
  if (s->struct_size < needed) {
    return InvalidArgumentError(what, ".struct_size is ", s->struct_size,
                                ", too small: this call needs at least ",
                                needed, " bytes of ", StructInfo<T>::kName,
                                " (whose full size, ", StructInfo<T>::kName,
                                "_STRUCT_SIZE, is ", StructInfo<T>::kSize, ")");
  }
  return OkStatus();
}

// Whether `s` (a pointer to struct T) includes `field`.
#define KILN_PJRT_HAS_FIELD(s, T, field) \
  ((s)->struct_size >= PJRT_STRUCT_SIZE(T, field))

// Checks the args of an entry point: not null, and struct_size covering
// everything up to `last_needed_field`.
#define KILN_PJRT_CHECK_ARGS(args, T, last_needed_field) \
  RETURN_IF_ERROR(::kiln::pjrt::CheckStruct<T>(          \
      args, PJRT_STRUCT_SIZE(T, last_needed_field)))

// The integer in an enum field a caller filled. C lets any int through an
// enum; C++ must not load a value outside the enumerators' range, so the
// bytes are copied out instead.
template <typename Enum>
int RawEnumValue(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int));
  int value;
  std::memcpy(&value, &field, sizeof(value));
  return value;
}

// Turns a failed status into an error the caller owns; OK into null.
PJRT_Error* ToPjrtError(Status status);

// Runs an entry point's body (a callable returning Status) and converts
// the result. No exception crosses the C ABI: running out of memory becomes
// RESOURCE_EXHAUSTED, anything else INTERNAL.
template <typename Body>
PJRT_Error* RunEntry(Body&& body) noexcept {
  try {
    return ToPjrtError(body());
  } catch (const std::bad_alloc&) {
    return ToPjrtError(ResourceExhaustedError("out of memory"));
  } catch (const std::exception& e) {
    return ToPjrtError(InternalError("unexpected exception: ", e.what()));
  }
}

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_ARGS_H_
