#include "exec/kernels/two_branch.h"

#include "exec/kernels/elementwise_ops.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

namespace kiln::exec {

bool TwoBranchSplitAvailable() {
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
}

namespace {

#define KILN_AVX512 __attribute__((target("avx512f")))

// The vector of lanes [i, i + 16) of `in` that lie below `n` (`valid`),
// and which of them take the small branch.
KILN_AVX512 inline __attribute__((always_inline)) __m512 LoadLanes(
    const float* in, int64_t i, int64_t n, __mmask16& valid,
    __mmask16& is_small) {
  valid = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
  __m512 x = _mm512_maskz_loadu_ps(valid, in + i);
  __m512 ax = _mm512_castsi512_ps(
      _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
  is_small =
      _mm512_mask_cmp_ps_mask(valid, ax, _mm512_set1_ps(1.0f), _CMP_LT_OQ);
  return x;
}

// One chunk of n <= kTwoBranchChunk elements; `out` may be `in`.
template <typename Branches>
KILN_AVX512 void TwoBranchChunk(const float* in, float* out, int64_t n) {
  constexpr int kLanes = 16;
  alignas(64) float small[kTwoBranchChunk + kLanes];
  alignas(64) float large[kTwoBranchChunk + kLanes];
  // Compress: each list is stored a whole vector at a time (a compress
  // straight to memory is microcoded and slow on some CPUs); the next
  // store starts where this one's elements end.
  int64_t num_small = 0;
  int64_t num_large = 0;
  for (int64_t i = 0; i < n; i += kLanes) {
    __mmask16 valid, is_small;
    __m512 x = LoadLanes(in, i, n, valid, is_small);
    __mmask16 is_large = valid & ~is_small;
    _mm512_storeu_ps(small + num_small, _mm512_maskz_compress_ps(is_small, x));
    _mm512_storeu_ps(large + num_large, _mm512_maskz_compress_ps(is_large, x));
    num_small += __builtin_popcount(is_small);
    num_large += __builtin_popcount(is_large);
  }
  for (int64_t k = 0; k < num_small; ++k) small[k] = Branches::Small(small[k]);
  for (int64_t k = 0; k < num_large; ++k) large[k] = Branches::Large(large[k]);
  // Expand: the lists' leading elements go back to their lanes (lanes
  // past a list's end are loaded but not used); a NaN is its own result.
  num_small = 0;
  num_large = 0;
  for (int64_t i = 0; i < n; i += kLanes) {
    __mmask16 valid, is_small;
    __m512 x = LoadLanes(in, i, n, valid, is_small);
    __mmask16 is_large = valid & ~is_small;
    __m512 r =
        _mm512_maskz_expand_ps(is_small, _mm512_loadu_ps(small + num_small));
    r = _mm512_mask_expand_ps(r, is_large, _mm512_loadu_ps(large + num_large));
    r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
    _mm512_mask_storeu_ps(out + i, valid, r);
    num_small += __builtin_popcount(is_small);
    num_large += __builtin_popcount(is_large);
  }
}

}  // namespace

template <typename Branches>
void RunTwoBranchSplit(const float* in, float* out, int64_t n) {
  for (int64_t begin = 0; begin < n; begin += kTwoBranchChunk) {
    int64_t count = n - begin < kTwoBranchChunk ? n - begin : kTwoBranchChunk;
    TwoBranchChunk<Branches>(in + begin, out + begin, count);
  }
}

#undef KILN_AVX512

#else  // not x86-64: no split form

namespace kiln::exec {

bool TwoBranchSplitAvailable() { return false; }

template <typename Branches>
void RunTwoBranchSplit(const float*, float*, int64_t) {
  __builtin_trap();  // callers check TwoBranchSplitAvailable first
}

#endif

template void RunTwoBranchSplit<ops::Erf::Branches>(const float*, float*,
                                                    int64_t);
template void RunTwoBranchSplit<ops::Erfc::Branches>(const float*, float*,
                                                     int64_t);
template void RunTwoBranchSplit<ops::ErfcSingle::Branches>(const float*, float*,
                                                           int64_t);

}  // namespace kiln::exec
