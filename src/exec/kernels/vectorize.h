// Vector width chosen at run time. A function marked KILN_VECTORIZED is
// compiled three times, for x86-64-v4 (AVX-512), x86-64-v3 (AVX2, FMA)
// and the baseline (SSE2), and the loader picks the widest the CPU has
// (GCC/Clang function multiversioning through an ifunc). Virtual functions
// cannot be multiversioned: kernels call a static loop marked with it.
//
// Kernels are built with -ffp-contract=off (src/exec/CMakeLists.txt), so
// no version fuses a multiply and an add that another does not: every
// version gives the same bits.
#ifndef KILN_EXEC_KERNELS_VECTORIZE_H_
#define KILN_EXEC_KERNELS_VECTORIZE_H_

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(KILN_NO_MULTIVERSIONING)
#define KILN_VECTORIZED \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KILN_VECTORIZED
#endif

#endif  // KILN_EXEC_KERNELS_VECTORIZE_H_
