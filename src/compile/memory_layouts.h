// Memory layouts of an entry's arguments and results: which of the
// program's values arrive and leave in a layout other than row-major, and
// the rewrite that makes the rest of the compiler see only row-major
// arrays.
//
// A framework asks for layouts per argument and result: JAX writes
// `mhlo.layout_mode` on the entry's arguments and results ("default",
// "auto", or a layout in XLA's text, "{0,1}", minor-to-major), and XLA's
// compile options may carry `argument_layouts`. Kiln keeps every array
// dense; a layout is only a permutation of the order its elements lie in
// (tiles and other memory spaces are refused). "auto" lets the compiler
// choose: Kiln chooses row-major, except for a result that is a transpose
// of an argument, which leaves in the layout that makes the transpose a
// reinterpretation of the argument's bytes (what XLA's layout assignment
// chooses there).
//
// ApplyMemoryLayouts then rewrites the entry so that each such argument is
// taken as the row-major array of its bytes and transposed to the value
// the program reads, and each such result transposed to the row-major
// array of the bytes it leaves as: the plan's parameters and outputs are
// the physical arrays, and the runtime keeps the layout beside them.
#ifndef KILN_COMPILE_MEMORY_LAYOUTS_H_
#define KILN_COMPILE_MEMORY_LAYOUTS_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/operation.h"

namespace kiln::compile {

// One minor-to-major permutation per entry argument and result; empty for
// row-major.
struct MemoryLayouts {
  std::vector<std::vector<int64_t>> arguments;
  std::vector<std::vector<int64_t>> results;

  bool AllRowMajor() const;
};

// The layouts the entry of `module` takes and gives. `argument_overrides`
// (from compile options; an empty entry or list: none) win over the
// program's own `mhlo.layout_mode`. INVALID_ARGUMENT for a layout that does
// not parse or is not a permutation of its value's dimensions;
// UNIMPLEMENTED for a tiled layout or one asked of a value that is not a
// static tensor.
StatusOr<MemoryLayouts> ChooseMemoryLayouts(
    const ir::Module& module,
    const std::vector<std::vector<int64_t>>& argument_overrides = {});

// Rewrites the entry of `module` (see the file comment) for `layouts`,
// which ChooseMemoryLayouts gave for it or for the program it was
// partitioned from (the ranks are the same).
Status ApplyMemoryLayouts(ir::Module& module, const MemoryLayouts& layouts);

// The layout text `layout_mode` names ("{1,0}"): its permutation, empty for
// "default" or row-major; nullopt for "auto".
StatusOr<std::optional<std::vector<int64_t>>> ParseLayoutMode(
    std::string_view layout_mode, int64_t rank);

}  // namespace kiln::compile

#endif  // KILN_COMPILE_MEMORY_LAYOUTS_H_
