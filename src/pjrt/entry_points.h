// Declarations of the entry points Kiln implements: for each REAL slot of
// include/pjrt_c_api_slots.def, a function kiln::pjrt::<slot> of the slot's
// own function type (so a definition with the wrong signature fails to
// link, not to run).
#ifndef KILN_PJRT_ENTRY_POINTS_H_
#define KILN_PJRT_ENTRY_POINTS_H_

#include "pjrt_c_api.h"

namespace kiln::pjrt {

#define KILN_PJRT_DECLARE_REAL(name) ::name name;
#define KILN_PJRT_DECLARE_TODO(name)
#define KILN_PJRT_SLOT(name, minor, state) KILN_PJRT_DECLARE_##state(name)
#include "pjrt_c_api_slots.def"
#undef KILN_PJRT_DECLARE_REAL
#undef KILN_PJRT_DECLARE_TODO

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_ENTRY_POINTS_H_
