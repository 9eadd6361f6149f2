// The PJRT_Api table, filled from include/pjrt_c_api_slots.def.
#include "base/status.h"
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/extensions.h"
#include "pjrt_c_api.h"

namespace kiln::pjrt {
namespace {

// The slots Kiln does not implement yet answer UNIMPLEMENTED, naming
// themselves; frameworks tolerate that code where a slot is optional.
#define KILN_PJRT_STUB_REAL(name)
#define KILN_PJRT_STUB_TODO(name)                                     \
  PJRT_Error* Unimplemented_##name(name##_Args*) {                    \
    return ToPjrtError(                                               \
        UnimplementedError(#name " is not implemented by Kiln yet")); \
  }
#define KILN_PJRT_SLOT(name, minor, state) KILN_PJRT_STUB_##state(name)
#include "pjrt_c_api_slots.def"
#undef KILN_PJRT_STUB_REAL
#undef KILN_PJRT_STUB_TODO

PJRT_Api MakeApi() {
  PJRT_Api api{};
  api.struct_size = PJRT_STRUCT_SIZE(
      PJRT_Api, PJRT_TopologyDescription_GetMemorySpaceKindIds);
  api.extension_start = ExtensionChain();
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.extension_start = nullptr;
  // Exactly the version of the header Kiln is built with: frameworks read
  // the table up to what the minor version promises.
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
#define KILN_PJRT_FILL_REAL(name) api.name = &kiln::pjrt::name;
#define KILN_PJRT_FILL_TODO(name) api.name = &Unimplemented_##name;
#define KILN_PJRT_SLOT(name, minor, state) KILN_PJRT_FILL_##state(name)
#include "pjrt_c_api_slots.def"
#undef KILN_PJRT_FILL_REAL
#undef KILN_PJRT_FILL_TODO
  return api;
}

}  // namespace
}  // namespace kiln::pjrt

// The table behind GetPjrtApi (plugin_entry.c), built once on first use and
// never changed: getting it is cheap and has no other effect, as
// frameworks expect. Tests that link kiln_pjrt call this directly.
extern "C" const PJRT_Api* KilnPjrtApi(void) {
  static const PJRT_Api api = kiln::pjrt::MakeApi();
  return &api;
}
