// The `check` targets of the StableHLO test corpus, for Kiln's test tooling
// only (the plugin never registers them): custom calls @check.expect_eq,
// @check.expect_close, @check.expect_almost_eq, @check.eq and the `check`
// dialect's ops, with the tolerances of ../shared/corpus/README.md, plus
// the reference interpreter's `interpreter.print` / `interpreter.probe`.
#ifndef KILN_TOOLS_CHECK_CHECK_TARGETS_H_
#define KILN_TOOLS_CHECK_CHECK_TARGETS_H_

#include "compile/custom_call.h"

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

}  // namespace kiln::check

#endif  // KILN_TOOLS_CHECK_CHECK_TARGETS_H_
