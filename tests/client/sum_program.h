// The programs the execute tests and the cache child share. They are named
// @sum: the test plugin "compiles" exactly such modules (output = the
// elementwise sum of the inputs), and Kiln's plugin compiles them for real,
// so one suite runs against both.
#ifndef KILN_TESTS_CLIENT_SUM_PROGRAM_H_
#define KILN_TESTS_CLIENT_SUM_PROGRAM_H_

#include <string>
#include <vector>

#include "kiln/builder.h"

namespace kiln::client::testing {

// @sum of `count` f32 parameters of `dims`; with `donate_first`, parameter
// 0 is aliased to the output.
inline std::string SumProgram(std::vector<int64_t> dims, int count,
                              bool donate_first = false) {
  ProgramBuilder b("sum");
  Shape shape(PJRT_Buffer_Type_F32, std::move(dims));
  Value total = b.Parameter(shape);
  Value first = total;
  for (int i = 1; i < count; ++i) {
    Value next = b.Parameter(shape);
    total = total + next;
  }
  if (donate_first) b.Donate(first, 0);
  Value outputs[] = {total};
  return *b.Build(outputs);
}

// The same computation on the host.
inline std::vector<float> SumExpected(
    const std::vector<std::vector<float>>& inputs) {
  std::vector<float> sum(inputs[0].size(), 0.0f);
  for (const std::vector<float>& input : inputs) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += input[i];
  }
  return sum;
}

// The inputs the cache child uses.
inline std::vector<float> ChildX() { return {1, 2, 3, 4, 5, 6}; }
inline std::vector<float> ChildW() { return {0.5f, -1, 2, 0.25f, -3, 1}; }

}  // namespace kiln::client::testing

#endif  // KILN_TESTS_CLIENT_SUM_PROGRAM_H_
