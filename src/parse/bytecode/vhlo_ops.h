// VHLO ops and their conversion to the StableHLO / func ops they stand for.
//
// A VHLO op stores every attribute of its StableHLO op, in VHLO's own
// shapes: struct attributes flattened into fields (dot, gather, scatter and
// convolution dimension numbers, channel handles, dot algorithms), dense
// arrays as tensors, symbol references as strings, unit flags as booleans,
// and absent attributes as their defaults. The conversion undoes all of
// that, so the result is what the StableHLO text of the program parses to.
#ifndef KILN_PARSE_BYTECODE_VHLO_OPS_H_
#define KILN_PARSE_BYTECODE_VHLO_OPS_H_

#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/attributes.h"
#include "ir/location.h"
#include "ir/operation.h"

namespace kiln::parse::bytecode {

struct VhloOpInfo {
  std::string_view name;    // "compare_v1"
  std::string_view target;  // "stablehlo.compare"
  // The VHLO attributes in bytecode order (sorted by name).
  std::vector<std::string_view> properties;
};

// The VHLO op named `name` (without the "vhlo." prefix), or null.
const VhloOpInfo* LookupVhloOp(std::string_view name);

// A VHLO op as decoded, before conversion.
struct VhloOp {
  const VhloOpInfo* info = nullptr;
  ir::Location loc;
  ir::NamedAttrList attributes;   // its VHLO attributes, by name
  ir::NamedAttrList discardable;  // any other attributes
  std::vector<ir::Type> result_types;
};

// Builds the op `op` stands for (without operands or regions).
// `in_function` says whether the op sits directly in a func.func body,
// where `return_v1` is func.return rather than stablehlo.return.
StatusOr<std::unique_ptr<ir::Operation>> ConvertVhloOp(VhloOp op,
                                                       bool in_function);

}  // namespace kiln::parse::bytecode

#endif  // KILN_PARSE_BYTECODE_VHLO_OPS_H_
