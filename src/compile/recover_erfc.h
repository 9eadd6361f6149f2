// Rebuilding erfc from its expansion.
//
// JAX lowers lax.erfc (and so jax.nn.gelu's exact form) to chlo.erfc, and
// serializing a program for a PJRT plugin expands that op, since a portable
// artifact holds no CHLO: about 70 stablehlo ops an element, two rational
// approximations, an exponential and the selects between their ranges.
// Kiln runs the chain as one fused kernel, but on a BERT layer's GELU (3 Mi
// elements, in cache) it took 2.4 ms where XLA's compiled loop takes 1.4.
// This pass finds each expansion and puts one chlo.erfc back in its place,
// marked `kiln.float_expansion`: the lowering gives it a float erfc
// (exec/kernels/fast_math.h, ErfcSingle) at least as accurate as the
// expansion it replaces, at a fraction of its operations.
//
// Finding: JAX names every op of a primitive's lowering after the primitive
// (a location such as "jit(f)/erfc" or "jit(f)/jvp(erfc)"). In each block,
// the ops so named, connected through the values they pass (constants set
// aside), make a candidate when they read exactly one value from outside
// (an f32 tensor, besides splat constants) and exactly one of their values,
// of that same type, is read outside.
//
// Proving: a location is debug information, not a promise, so a candidate
// is evaluated in double at sample points across erfc's range and must
// agree with erfc there to 1e-5 relative. It may hold only elementwise
// arithmetic, abs, exponential, comparisons, selects, min/max/clamp and
// splat constants; anything else leaves it as it is.
#ifndef KILN_COMPILE_RECOVER_ERFC_H_
#define KILN_COMPILE_RECOVER_ERFC_H_

#include "ir/operation.h"

namespace kiln::compile {

// Rebuilds every expansion of erfc in `module` as one chlo.erfc; returns
// how many it rebuilt.
int RecoverErfc(ir::Module& module);

// Whether some op of `module` is named after erfc: whether RecoverErfc may
// find anything (a cheap test, before copying a module to run it).
bool NamesErfc(const ir::Module& module);

// The attribute that marks a rebuilt chlo.erfc.
inline constexpr char kFloatExpansionAttr[] = "kiln.float_expansion";

}  // namespace kiln::compile

#endif  // KILN_COMPILE_RECOVER_ERFC_H_
