// Prints IR as MLIR text: the pretty form JAX and stablehlo-opt write, or
// the generic form, with or without locations. What it prints the text
// parser reads back to the same IR.
#ifndef KILN_IR_PRINTER_H_
#define KILN_IR_PRINTER_H_

#include <string>

#include "ir/operation.h"

namespace kiln::ir {

struct PrintOptions {
  // Every op in the generic form ("stablehlo.add"(%0, %1) : ...).
  bool generic = false;
  // `loc(...)` after every op and block argument.
  bool locations = true;
};

// The whole module, followed by its {-# dialect_resources #-} section when
// it holds dense_resource blobs.
std::string PrintModule(const Module& module, const PrintOptions& options = {});

// One op (with its regions). Values defined outside it print as
// %<<unknown>>.
std::string PrintOperation(const Operation& op,
                           const PrintOptions& options = {});

}  // namespace kiln::ir

#endif  // KILN_IR_PRINTER_H_
