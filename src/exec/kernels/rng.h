// Random numbers: rng_bit_generator (bit-exact with XLA's THREE_FRY and
// PHILOX expansions) and the deprecated rng op.
#ifndef KILN_EXEC_KERNELS_RNG_H_
#define KILN_EXEC_KERNELS_RNG_H_

#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

enum class RngAlgorithm { kThreeFry, kPhilox };

// Input: the u64 state (2 elements for THREE_FRY; 2 or 3 for PHILOX);
// outputs: the new state and the random bits in `output`'s shape (its
// element type only sets the bit width).
std::unique_ptr<Kernel> MakeRngBitGeneratorKernel(RngAlgorithm algorithm,
                                                  int64_t state_size,
                                                  ArrayShape output);

// jaxlib's threefry2x32 GPU kernel (cu_threefry2x32, hip_threefry2x32):
// inputs key0, key1, x0, x1 and outputs y0, y1, all u32 arrays of `count`
// elements; (y0[i], y1[i]) is Threefry-2x32 (20 rounds) of (x0[i], x1[i])
// under the key (key0[i], key1[i]), as jax.random's threefry computes it.
std::unique_ptr<Kernel> MakeThreefry2x32Kernel(int64_t count);

// rng: inputs a, b (scalars), output `shape`: uniform in [a, b) or normal
// with mean a and standard deviation b. The numbers are
// implementation-defined (spec); Kiln's come from Philox with a fixed key,
// so a plan gives the same numbers on every run.
std::unique_ptr<Kernel> MakeRngKernel(bool normal, ArrayShape shape);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_RNG_H_
