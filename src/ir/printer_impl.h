// The op printer's internal class, shared by printer.cc (structure, SSA
// names, generic form) and print_pretty.cc (pretty forms).
#ifndef KILN_IR_PRINTER_IMPL_H_
#define KILN_IR_PRINTER_IMPL_H_

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/op_format.h"
#include "ir/operation.h"
#include "ir/printer.h"

namespace kiln::ir {

// Appends space-separated pieces the way MLIR's printer spaces them: no
// space before , ) ] } or after ( [ {, and none before a glued piece.
class Emitter {
 public:
  explicit Emitter(std::string& out) : out_(out) {}
  void Emit(std::string_view text, bool glued = false);

 private:
  std::string& out_;
  bool pending_space_ = true;
};

class OpPrinter {
 public:
  OpPrinter(const PrintOptions& options, std::string& out)
      : options_(options), out_(out) {}

  // Prints `op` on its own line(s) at `indent`.
  void PrintOp(const Operation& op, int indent);
  // Prints `{ ... }` (the opening brace at the current position).
  // `func_body`: the region is a func.func body, where func ops print
  // without their dialect prefix.
  void PrintRegion(const Region& region, int indent, bool print_entry_args,
                   bool func_body = false);
  void PrintModuleResources(const Module& module);

 private:
  // ---- printer.cc
  void PrintGeneric(const Operation& op, int indent);
  void PrintBlockArgument(const Value* value);
  void PrintLocation(const Location& loc);
  const std::string& NameOf(const Value* value);
  void NameResults(const Operation& op);
  void NameBlockArguments(const Block& block);
  void BeginIsolatedScope();
  void EndIsolatedScope();
  std::string OpName(const Operation& op) const;
  static std::string AttrDict(const std::vector<NamedAttribute>& entries);

  // ---- print_pretty.cc
  // Prints `op` in a pretty form into out_; false (printing nothing) when
  // it has none or cannot carry everything the op holds.
  bool PrintPretty(const Operation& op, int indent);
  bool PrintFormatted(const Operation& op, const OpFormat& format,
                      std::string& text);
  bool PrintFormatAttribute(const Operation& op, const FormatPiece& piece,
                            Emitter& emitter);
  bool PrintFormatTypes(const Operation& op, FormatTypes types,
                        Emitter& emitter);
  bool PrintFunc(const Operation& op, int indent);
  bool PrintModuleOp(const Operation& op, int indent);
  bool PrintWhile(const Operation& op, int indent);
  bool PrintReduce(const Operation& op, int indent);
  bool PrintConstant(const Operation& op);
  bool PrintOptimizationBarrier(const Operation& op);
  bool PrintScan(const Operation& op, int indent);
  // Every attribute of `op` except `skip`, sorted by name.
  std::vector<NamedAttribute> RemainingAttributes(
      const Operation& op, const std::vector<std::string>& skip) const;

  const PrintOptions& options_;
  std::string& out_;
  std::unordered_map<const Value*, std::string> names_;
  struct Counters {
    int values = 0;
    int arguments = 0;
    int loop_variables = 0;
  };
  std::vector<Counters> counters_ = {Counters()};
  // The op whose body is being printed is a func.func: func ops print
  // without their dialect prefix.
  bool in_func_body_ = false;
};

}  // namespace kiln::ir

#endif  // KILN_IR_PRINTER_IMPL_H_
