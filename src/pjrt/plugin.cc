// PJRT_Plugin_Initialize and PJRT_Plugin_Attributes.
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/named_values.h"

namespace kiln::pjrt {
namespace {

// The plugin's attributes live as long as the process: frameworks keep the
// pointers PJRT_Plugin_Attributes hands out.
const NamedValueList& PluginAttributes() {
  static const NamedValueList* attributes = [] {
    auto* list = new NamedValueList();
    // What XLA's plugins report and frameworks read: the XLA version the
    // plugin speaks, and the StableHLO versions it reads. jax serializes
    // programs for min(its own version, stablehlo_current_version).
    list->AddInt64("xla_version", 2);
    list->AddInt64List("stablehlo_current_version", {1, 20, 0});
    list->AddInt64List("stablehlo_minimum_version", {0, 9, 0});
    // Kiln has no cross-host transfers extension.
    list->AddBool("supports_cross_host_transfers", false);
    return list;
  }();
  return *attributes;
}

}  // namespace

PJRT_Error* PJRT_Plugin_Initialize(PJRT_Plugin_Initialize_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Plugin_Initialize_Args, extension_start);
    // Nothing to set up: clients carry all state. Safe to call again.
    return OkStatus();
  });
}

PJRT_Error* PJRT_Plugin_Attributes(PJRT_Plugin_Attributes_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Plugin_Attributes_Args, num_attributes);
    const NamedValueList& attributes = PluginAttributes();
    args->attributes = attributes.data();
    args->num_attributes = attributes.size();
    return OkStatus();
  });
}

}  // namespace kiln::pjrt
