// Inputs for programs run without given arguments: random arrays of the
// plan's argument shapes, and concrete shapes for programs with dynamic
// shapes.
#ifndef KILN_TOOLS_CHECK_INPUTS_H_
#define KILN_TOOLS_CHECK_INPUTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "exec/plan.h"
#include "ir/operation.h"

namespace kiln::check {

// Fills `buffer` (of `spec`) with deterministic pseudo-random values:
// floats in [-2, 2], integers in [-8, 8] (unsigned: [0, 8]), booleans.
void FillRandom(const exec::ValueSpec& spec, uint64_t seed, std::byte* buffer);

// Random buffers for every argument of `plan`.
StatusOr<std::vector<exec::AlignedBuffer>> RandomArguments(
    const exec::Plan& plan, uint64_t seed);

// For an entry function with dynamic shapes: its argument types with every
// dynamic dimension set to `size`, and the value `size` for each of the
// leading scalar integer arguments (JAX's dimension variables). Empty when the
// entry's types are all static.
struct ConcreteArguments {
  std::vector<ir::Type> types;
  std::map<int, std::string> values;
};
ConcreteArguments ConcretizeArguments(const ir::Operation& entry, int64_t size);

}  // namespace kiln::check

#endif  // KILN_TOOLS_CHECK_INPUTS_H_
