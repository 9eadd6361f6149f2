// The suite's fixed programs: small StableHLO modules in MLIR text, each
// with inputs and the outputs the suite computes itself (in C++, from the
// inputs) to compare a plugin's results against.
#ifndef KILN_TOOLS_CONFORM_PROGRAMS_H_
#define KILN_TOOLS_CONFORM_PROGRAMS_H_

#include <string>
#include <vector>

#include "tools/conform/checks.h"

namespace kiln::conform {

struct TestProgram {
  std::string name;  // the check is execute.<name>
  std::string summary;
  std::string text;
  std::vector<HostArray> inputs;
  std::vector<HostArray> expected;
  // execute.add_f32 is required; every other program is optional.
  bool required = false;
};

// add_f32, dot_f32, reduce_sum, while_loop, multiple_outputs, i1_logic,
// bf16_add, i64_arithmetic, in that order.
const std::vector<TestProgram>& TestPrograms();

// add_f32, which the donation, serialization and error checks build on.
const TestProgram& AddProgram();

// out = a + b over f32[4], argument 0 donated to the output
// (tf.aliasing_output), with the inputs and sum of add_f32.
extern const char kDonatingAddProgram[];

}  // namespace kiln::conform

#endif  // KILN_TOOLS_CONFORM_PROGRAMS_H_
