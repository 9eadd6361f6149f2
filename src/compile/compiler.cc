#include "compile/compiler.h"

#include "compile/custom_call.h"
#include "compile/lowering.h"
#include "compile/recover_erfc.h"
#include "ir/verifier.h"

namespace kiln::compile {

StatusOr<std::unique_ptr<exec::Plan>> Compile(const ir::Module& module,
                                              const CompileOptions& options) {
  // Lowering trusts the verifier's guarantees (operand counts, attribute
  // kinds, shape rules), so an invalid program stops here.
  RETURN_IF_ERROR(ir::VerifyModule(module));
  const ir::Operation* entry = options.entry.empty()
                                   ? module.EntryFunction()
                                   : module.LookupFunction(options.entry);
  if (entry != nullptr && !ir::func::HasBody(*entry)) entry = nullptr;
  if (entry == nullptr) {
    return InvalidArgumentError(
        "the module has no entry function",
        options.entry.empty()
            ? std::string(" (@main or a single public function)")
            : StrCat(" @", options.entry));
  }
  const CustomCallRegistry& custom_calls = options.custom_calls != nullptr
                                               ? *options.custom_calls
                                               : CustomCallRegistry::Builtin();
  // Expansions of erfc, rebuilt on a copy (recover_erfc.h): the entry
  // found above is the copy's function of the same name.
  std::unique_ptr<ir::Module> rebuilt;
  if (options.recover_erfc && NamesErfc(module)) {
    rebuilt = module.Clone();
    if (RecoverErfc(*rebuilt) == 0) {
      rebuilt.reset();
    } else {
      RETURN_IF_ERROR(ir::VerifyModule(*rebuilt));
      entry = rebuilt->LookupFunction(ir::func::Name(*entry));
      if (entry == nullptr) return InternalError("the entry function is gone");
    }
  }
  const ir::Module& program = rebuilt ? *rebuilt : module;
  auto plan = std::make_unique<exec::Plan>();
  Lowering lowering(program, custom_calls, *plan);
  lowering.set_fold_constants(options.fold_constants);
  lowering.set_fuse_elementwise(options.fuse_elementwise);
  lowering.set_use_onednn(options.use_onednn,
                          options.onednn_min_multiply_adds);
  lowering.set_position(options.position);
  lowering.set_host_transfers_between_participants(
      options.host_transfers_between_participants);
  RETURN_IF_ERROR(lowering.LowerEntry(*entry, options.argument_types,
                                      options.argument_values));
  RETURN_IF_ERROR(lowering.Finish());
  return plan;
}

}  // namespace kiln::compile
