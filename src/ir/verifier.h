// The StableHLO verifier: checks that a module is a well-formed program
// before any later layer relies on it.
//
// It checks structure (function signatures against bodies and returns,
// region terminators, values defined before use, calls to existing functions
// with matching types) and, for every op of ops.def, the constraints of the
// StableHLO specification: operand and result counts, element types, shape
// rules and type inference (the inferred result type must be compatible with
// the declared one, where `?` dimensions and bounds make types compatible),
// attribute presence, kinds and ranges, and region signatures. Ops of other
// dialects (OpCode::kUnknown) are accepted as they are; their regions are
// still verified.
//
// The verifier runs on untrusted programs: it never indexes out of range,
// never trusts an attribute's kind, and never overflows on dimensions.
#ifndef KILN_IR_VERIFIER_H_
#define KILN_IR_VERIFIER_H_

#include "base/status.h"
#include "ir/operation.h"

namespace kiln::ir {

// Verifies a whole module: its structure, every function and every op. The
// first problem found is returned as an INVALID_ARGUMENT status whose message
// reads `file:line:col: 'stablehlo.X' op <what is wrong>`.
Status VerifyModule(const Module& module);

// Verifies one op on its own (its attributes, operand and result types and
// region signatures) and, recursively, the ops nested in its regions. Checks
// that need the whole module (symbol references of func.call) are skipped
// when the op is not inside a module.
Status VerifyOperation(const Operation& op);

}  // namespace kiln::ir

#endif  // KILN_IR_VERIFIER_H_
