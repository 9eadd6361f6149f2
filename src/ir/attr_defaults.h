// Default values of inherent attributes: the value an op means when the
// attribute is absent (StableHLO's optional attributes with defaults, and
// the values the portable format writes for absent ones).
//
// Kiln's IR keeps such attributes absent: front ends call
// EraseDefaultAttributes on every op they build, so that `api_version = 1`
// written out, `api_version` left out, and a portable artifact (which
// always stores every attribute) all give the same IR.
#ifndef KILN_IR_ATTR_DEFAULTS_H_
#define KILN_IR_ATTR_DEFAULTS_H_

#include <string_view>

#include "ir/attributes.h"
#include "ir/operation.h"

namespace kiln::ir {

// Whether `value` is the default of inherent attribute `name` of ops with
// `code`.
bool IsDefaultAttribute(OpCode code, std::string_view name,
                        const Attribute& value);

// Removes the inherent attributes of `op` (not of nested ops) that hold
// their default value.
void EraseDefaultAttributes(Operation& op);

}  // namespace kiln::ir

#endif  // KILN_IR_ATTR_DEFAULTS_H_
