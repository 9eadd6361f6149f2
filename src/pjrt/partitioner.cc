// The custom partitioner extension (PJRT_Extension_Type_Custom_Partitioner):
// how JAX tells the SPMD partitioner about custom-call targets.
//
// - register_batch_partitionable (jax.ffi's
//   register_ffi_target_as_batch_partitionable): the target joins the
//   partitioner's registry, and its calls run on each partition's share of
//   the batch (compile/spmd_partition.h).
// - register_custom_partitioner (jax.experimental.custom_partitioning):
//   the registration is accepted and its callbacks kept for the life of
//   the process, as XLA keeps them, so defining a custom partitioning does
//   not fail. Kiln's partitioner does not call them yet: a program with a
//   `CustomSPMDPartitioning` call fails to compile with UNIMPLEMENTED
//   naming the target, as any unknown target does.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compile/spmd_partition.h"
#include "pjrt/args.h"
#include "pjrt/entry_points.h"
#include "pjrt/error.h"
#include "pjrt/extensions.h"

namespace kiln::pjrt {
namespace {

std::string_view NameOf(const char* name, size_t size) {
  return name == nullptr ? std::string_view() : std::string_view(name, size);
}

// The registered custom partitioners' callbacks, never destroyed: the
// framework's registry (XLA's) lives as long as the process, and jaxlib's
// callbacks hold Python objects that must not be released during exit.
struct CustomPartitioners {
  std::mutex mutex;
  std::vector<std::pair<std::string, JAX_CustomCallPartitioner_Callbacks*>>
      entries;
};

CustomPartitioners& Partitioners() {
  static auto* partitioners = new CustomPartitioners();
  return *partitioners;
}

PJRT_Error* RegisterCustomPartitioner(
    PJRT_Register_Custom_Partitioner_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Register_Custom_Partitioner_Args,
                         callbacks);
    std::string_view name = NameOf(args->name, args->name_size);
    if (name.empty()) {
      return InvalidArgumentError(
          "PJRT_Register_Custom_Partitioner_Args.name is empty");
    }
    if (args->callbacks == nullptr) {
      return InvalidArgumentError("PJRT_Register_Custom_Partitioner: target \"",
                                  name, "\" has no callbacks");
    }
    CustomPartitioners& partitioners = Partitioners();
    std::lock_guard<std::mutex> lock(partitioners.mutex);
    partitioners.entries.emplace_back(std::string(name), args->callbacks);
    return OkStatus();
  });
}

PJRT_Error* RegisterBatchPartitionable(
    PJRT_Register_Batch_Partitionable_Args* args) {
  return RunEntry([&]() -> Status {
    KILN_PJRT_CHECK_ARGS(args, PJRT_Register_Batch_Partitionable_Args,
                         name_size);
    std::string_view name = NameOf(args->name, args->name_size);
    if (name.empty()) {
      return InvalidArgumentError(
          "PJRT_Register_Batch_Partitionable_Args.name is empty");
    }
    compile::RegisterBatchPartitionableTarget(std::string(name));
    return OkStatus();
  });
}

}  // namespace

PJRT_Extension_Base* CustomPartitionerExtension() {
  static PJRT_Custom_Partitioner_Extension partitioner = [] {
    PJRT_Custom_Partitioner_Extension extension{};
    extension.struct_size = PJRT_Custom_Partitioner_Extension_STRUCT_SIZE;
    extension.type = PJRT_Extension_Type_Custom_Partitioner;
    extension.next = LayoutsExtension();
    extension.register_custom_partitioner = &RegisterCustomPartitioner;
    extension.register_batch_partitionable = &RegisterBatchPartitionable;
    return extension;
  }();
  return reinterpret_cast<PJRT_Extension_Base*>(&partitioner);
}

}  // namespace kiln::pjrt
