// The `check` targets of the StableHLO test corpus, for Kiln's test tooling
// only (the plugin never registers them): custom calls @check.expect_eq,
// @check.expect_close, @check.expect_almost_eq, @check.eq and the `check`
// dialect's ops, with the tolerances of ../shared/corpus/README.md, plus
// the reference interpreter's `interpreter.print` / `interpreter.probe`.
#ifndef KILN_TOOLS_CHECK_CHECK_TARGETS_H_
#define KILN_TOOLS_CHECK_CHECK_TARGETS_H_

#include <cstddef>
#include <cstdint>

#include "base/status.h"
#include "compile/custom_call.h"
#include "exec/array_shape.h"

namespace kiln::check {

// Adds the check targets to `registry`. A failed check makes the run fail
// with a message naming the first differing element.
void RegisterCheckTargets(compile::CustomCallRegistry& registry);

// Tolerances of the corpus (see ../shared/corpus/README.md).
inline constexpr int kExpectCloseUlps = 3;  // @check.expect_close
inline constexpr double kExpectAlmostEqTolerance =
    1e-3;  // @check.expect_almost_eq
inline constexpr double kCheckOpDefaultTolerance =
    1e-4;  // check.*_almost_eq*, check.eq

// How a check compares an actual value with the expected one.
struct Comparison {
  enum class Mode { kExact, kUlps, kAbsolute };
  Mode mode = Mode::kExact;
  uint64_t max_ulps = 0;
  uint64_t min_ulps = 0;  // expect_close's min_ulp_difference
  double tolerance = 0;
  bool expected_first = false;  // operand 0 is the expected value
};

// Compares `actual` with `expected` (dense row-major data of `shape`,
// Kiln's storage: one byte per i1 and sub-byte element) element by element
// as the check targets do: complex values per component, NaN equal to NaN.
// The error names the first differing element and counts the others.
Status Compare(const exec::ArrayShape& shape, const std::byte* actual,
               const std::byte* expected, const Comparison& c);

}  // namespace kiln::check

#endif  // KILN_TOOLS_CHECK_CHECK_TARGETS_H_
