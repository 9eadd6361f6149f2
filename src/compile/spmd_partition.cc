// The public entry points of spmd_partition.h: dead-op removal around the
// partitioner (compile/spmd/), the entry's layouts, the batch-partitionable
// registry, @InspectSharding, and StripShardy.
#include "compile/spmd_partition.h"

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>

#include "base/strings.h"
#include "compile/spmd/common.h"
#include "compile/spmd/partitioner.h"

namespace kiln::compile {
namespace {

using ir::Attribute;
using ir::AttrKind;
using ir::Operation;
using ir::Value;
using spmd::CallInspectSharding;
using spmd::CustomCallTarget;
using spmd::IsManualComputation;
using spmd::LayoutOfAttrs;
using spmd::OpList;
using spmd::Partitioner;
using spmd::ResultLayouts;

// Whether `@InspectSharding` callbacks may be called
// (AllowInspectShardingCallbacks).
std::atomic<bool> inspect_sharding_allowed{false};

// XLA's layouts for `@InspectSharding`'s backend_config (extern "C" in
// xla/python/inspect_sharding.h): the callback gets the serialized sharding
// and may leave an error, which its free_error releases.
extern "C" {
struct InspectShardingArgs {
  char* sharding_spec;
  size_t sharding_spec_size;
  const char* error_txt;  // out
  void* error_scratch;
  void (*free_error)(InspectShardingArgs* args);
};
struct InspectShardingCallback {
  void (*call)(void* data, InspectShardingArgs* args);
  void* data;
};
}

}  // namespace

namespace spmd {

Status CallInspectSharding(const Operation& op, const TileLayout& layout) {
  if (!inspect_sharding_allowed.load()) return OkStatus();
  Attribute config = op.GetAttr("backend_config");
  if (!config.is(AttrKind::kString) ||
      config.string_value().size() != sizeof(InspectShardingCallback)) {
    return InvalidArgumentError(
        op.loc().ToString(), ": @InspectSharding's backend_config must be ",
        sizeof(InspectShardingCallback),
        " bytes, the callback JAX's inspect_array_sharding writes");
  }
  InspectShardingCallback callback;
  std::memcpy(&callback, config.string_value().data(), sizeof(callback));
  if (callback.call == nullptr) {
    return InvalidArgumentError(op.loc().ToString(),
                                ": @InspectSharding names no callback");
  }
  std::string sharding = SerializeOpSharding(layout);
  InspectShardingArgs args{};
  args.sharding_spec = sharding.data();
  args.sharding_spec_size = sharding.size();
  callback.call(callback.data, &args);
  if (args.error_txt == nullptr) return OkStatus();
  Status error = InternalError(
      op.loc().ToString(),
      ": inspect_array_sharding's callback failed: ", args.error_txt);
  if (args.free_error != nullptr) args.free_error(&args);
  return error;
}

}  // namespace spmd

namespace {

// Ops the partitioner may drop when nothing uses their results: pure
// StableHLO ops, ops with regions (while, case, reduce, sort, ...) whose
// every nested op is pure, and calls of functions whose every op is.
// Collectives never go (every partition must meet at each of them), nor
// custom calls or side effects. `visiting` holds the functions being looked
// into (a recursive call counts as impure).
bool IsRemovableWhenUnused(const Operation& op, const ir::Module& module,
                           std::set<const Operation*>& visiting) {
  static const std::set<std::string_view> kKept = {
      "stablehlo.custom_call",
      "stablehlo.all_gather",
      "stablehlo.all_reduce",
      "stablehlo.all_to_all",
      "stablehlo.reduce_scatter",
      "stablehlo.collective_permute",
      "stablehlo.collective_broadcast",
      "stablehlo.send",
      "stablehlo.recv",
      "stablehlo.infeed",
      "stablehlo.outfeed",
      "stablehlo.optimization_barrier",
      "stablehlo.return",
      "stablehlo.rng",
      "stablehlo.rng_bit_generator",
  };
  auto all_pure = [&](const Operation& holder) {
    for (const auto& region : holder.regions()) {
      for (const auto& block : region->blocks()) {
        for (const auto& inner : block->operations()) {
          const std::string_view name = inner->name();
          if (name != "stablehlo.return" && name != "func.return" &&
              !IsRemovableWhenUnused(*inner, module, visiting)) {
            return false;
          }
        }
      }
    }
    return true;
  };
  if (op.name() == "func.call") {
    Attribute callee_attr = op.GetAttr("callee");
    if (!callee_attr.is(AttrKind::kSymbolRef)) return false;
    const Operation* callee = module.LookupFunction(callee_attr.symbol_root());
    if (callee == nullptr || !ir::func::HasBody(*callee) ||
        !visiting.insert(callee).second) {
      return false;
    }
    const bool pure = all_pure(*callee);
    visiting.erase(callee);
    return pure;
  }
  if (kKept.count(op.name()) ||
      (op.dialect() != "stablehlo" &&
       op.name() != "builtin.unrealized_conversion_cast")) {
    return false;
  }
  return all_pure(op);
}

bool IsRemovableWhenUnused(const Operation& op, const ir::Module& module) {
  std::set<const Operation*> visiting;
  return IsRemovableWhenUnused(op, module, visiting);
}

// Drops the ops whose results nothing uses (what partitioning leaves of
// values that were only needed whole), until none is left.
void RemoveDeadOps(ir::Module& module) {
  for (bool changed = true; changed;) {
    changed = false;
    std::map<const Value*, int> uses;
    module.op().Walk([&](Operation& op) {
      for (Value* operand : op.operands()) ++uses[operand];
    });
    std::function<void(ir::Block&)> sweep = [&](ir::Block& block) {
      OpList kept;
      for (std::unique_ptr<Operation>& op : block.TakeOperations()) {
        bool used = false;
        for (int i = 0; i < op->num_results(); ++i) {
          used |= uses.count(op->result(i)) > 0;
        }
        if (!used && op->num_results() > 0 &&
            IsRemovableWhenUnused(*op, module)) {
          changed = true;
          continue;
        }
        for (const auto& region : op->regions()) {
          for (const auto& inner : region->blocks()) sweep(*inner);
        }
        kept.push_back(std::move(op));
      }
      block.SetOperations(std::move(kept));
    };
    for (Operation* func : module.Functions()) {
      if (ir::func::HasBody(*func)) sweep(ir::func::Body(*func));
    }
  }
  // Private functions nothing refers to any more (their calls were
  // inlined). Any symbol in any attribute counts as a reference: calls'
  // `callee`, composites' `decomposition`, custom calls'
  // `called_computations`.
  std::set<std::string> called;
  std::function<void(const Attribute&)> collect = [&](const Attribute& attr) {
    if (attr.is(AttrKind::kSymbolRef)) {
      called.insert(attr.symbol_root());
    } else if (attr.is(AttrKind::kArray)) {
      for (const Attribute& element : attr.array()) collect(element);
    } else if (attr.is(AttrKind::kDictionary)) {
      for (const auto& [name, value] : attr.dictionary()) collect(value);
    }
  };
  module.op().Walk([&](Operation& op) {
    if (op.name() == "func.func") return;  // its own sym_name is not a use
    for (const auto& [name, value] : op.properties().entries()) collect(value);
    for (const auto& [name, value] : op.attributes().entries()) collect(value);
  });
  const Operation* entry = module.EntryFunction();
  OpList kept;
  for (std::unique_ptr<Operation>& op : module.body().TakeOperations()) {
    const bool unused_private = op->name() == "func.func" &&
                                op.get() != entry && !ir::func::IsPublic(*op) &&
                                !called.count(std::string(ir::func::Name(*op)));
    if (!unused_private) kept.push_back(std::move(op));
  }
  module.body().SetOperations(std::move(kept));
}

}  // namespace

StatusOr<EntryLayouts> ReadEntryLayouts(const ir::Module& module,
                                        int num_partitions) {
  EntryLayouts layouts;
  const Operation* entry = module.EntryFunction();
  if (entry == nullptr || num_partitions <= 1) return layouts;
  ASSIGN_OR_RETURN(auto meshes, ModuleMeshes(module));
  const ir::Block& body = ir::func::Body(*entry);
  for (int i = 0; i < body.num_arguments(); ++i) {
    ASSIGN_OR_RETURN(
        std::optional<TileLayout> layout,
        LayoutOfAttrs(ir::func::ArgAttrs(*entry, i), meshes,
                      body.argument(i)->type(), num_partitions,
                      StrCat("argument ", i, " of @", ir::func::Name(*entry))));
    layouts.arguments.push_back(std::move(layout));
  }
  ASSIGN_OR_RETURN(layouts.results,
                   ResultLayouts(*entry, meshes, num_partitions));
  return layouts;
}

StatusOr<bool> NeedsPartitioning(const ir::Module& module, int num_partitions) {
  if (num_partitions <= 1) return false;
  bool manual = false;
  module.op().Walk([&](Operation& op) {
    std::string target = CustomCallTarget(op);
    manual |= IsManualComputation(op) || target == "SPMDFullToShardShape" ||
              target == "SPMDShardToFullShape";
  });
  if (manual) return true;
  ASSIGN_OR_RETURN(EntryLayouts layouts,
                   ReadEntryLayouts(module, num_partitions));
  for (const auto* list : {&layouts.arguments, &layouts.results}) {
    for (const auto& layout : *list) {
      if (layout) return true;
    }
  }
  return false;
}

namespace {
std::mutex& BatchPartitionableMutex() {
  static std::mutex mutex;
  return mutex;
}
std::set<std::string, std::less<>>& BatchPartitionableTargets() {
  static auto* targets = new std::set<std::string, std::less<>>();
  return *targets;
}
}  // namespace

void RegisterBatchPartitionableTarget(std::string name) {
  std::lock_guard<std::mutex> lock(BatchPartitionableMutex());
  BatchPartitionableTargets().insert(std::move(name));
}

bool IsBatchPartitionableTarget(std::string_view name) {
  std::lock_guard<std::mutex> lock(BatchPartitionableMutex());
  return BatchPartitionableTargets().count(name) > 0;
}

void AllowInspectShardingCallbacks(bool allow) {
  inspect_sharding_allowed.store(allow);
}

Status ReportReplicatedInspections(const ir::Module& module) {
  Status status = OkStatus();
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& block) {
    for (const std::unique_ptr<Operation>& op : block.operations()) {
      if (!status.ok()) return;
      if (CustomCallTarget(*op) == "InspectSharding") {
        status = CallInspectSharding(*op, TileLayout{});
      }
      for (int r = 0; r < op->num_regions(); ++r) {
        for (const std::unique_ptr<ir::Block>& nested :
             op->region(r).blocks()) {
          walk(*nested);
        }
      }
    }
  };
  walk(module.body());
  return status;
}

Status PartitionModule(ir::Module& module, const PartitionTarget& target,
                       std::vector<std::optional<TileLayout>>* result_layouts) {
  if (target.partition_id < 0 || target.partition_id >= target.num_partitions) {
    return InvalidArgumentError("partition ", target.partition_id,
                                " is outside the program's ",
                                target.num_partitions, " partitions");
  }
  // What nothing uses goes first, as XLA's DCE runs before its SPMD
  // partitioner: a dead loop (the permutation JAX's lu computes beside the
  // pivots, say) would otherwise make the partitioner assemble its operands.
  // Every partition starts from the same program, so all drop the same ops.
  RemoveDeadOps(module);
  ASSIGN_OR_RETURN(auto meshes, ModuleMeshes(module));
  Partitioner partitioner(module, target, std::move(meshes));
  RETURN_IF_ERROR(partitioner.Run());
  if (result_layouts != nullptr) *result_layouts = partitioner.result_layouts();
  RemoveDeadOps(module);
  return OkStatus();
}

}  // namespace kiln::compile

namespace kiln::compile {
namespace {

// A dictionary without its `sdy.` entries (null when nothing is left).
Attribute WithoutShardy(const Attribute& dictionary) {
  if (!dictionary.is(AttrKind::kDictionary)) return dictionary;
  std::vector<ir::NamedAttribute> kept;
  for (const ir::NamedAttribute& entry : dictionary.dictionary()) {
    if (entry.first.rfind("sdy.", 0) != 0) kept.push_back(entry);
  }
  return Attribute::Dictionary(std::move(kept));
}

}  // namespace

void StripShardy(ir::Module& module) {
  ir::Block& body = module.body();
  std::vector<std::unique_ptr<Operation>> kept;
  for (std::unique_ptr<Operation>& op : body.TakeOperations()) {
    if (op->dialect() != "sdy") kept.push_back(std::move(op));
  }
  body.SetOperations(std::move(kept));
  for (Operation* func : module.Functions()) {
    for (const char* list : {"arg_attrs", "res_attrs"}) {
      Attribute attrs = func->GetAttr(list);
      if (!attrs.is(AttrKind::kArray)) continue;
      std::vector<Attribute> stripped;
      for (const Attribute& dictionary : attrs.array()) {
        stripped.push_back(WithoutShardy(dictionary));
      }
      func->SetAttr(list, Attribute::Array(std::move(stripped)));
    }
  }
  module.op().Walk([](Operation& op) { op.RemoveAttr("sdy.sharding"); });
}

}  // namespace kiln::compile
