// FFT, IFFT, RFFT and IRFFT through DUCC's FFT (docs/exec.md, "Libraries"):
// every length (DUCC factors into radices 2 to 11 and uses Bluestein's
// algorithm for large prime factors), in the operands' own precision (f32
// and c64 in single precision, as XLA:CPU computes them).
//
// A transform of several dimensions runs one dimension at a time, each a
// pass over all lines along that dimension. Kiln splits a pass's lines into
// chunks chosen from the shape alone and runs the chunks on its own
// threads, each through DUCC on one thread: so no second pool of threads,
// and the same bits at any thread count (DUCC is built without
// contraction, so a line gets the same operations in its vector and scalar
// paths, whichever lines share its chunk).
#include "exec/kernels/fft.h"

#include <algorithm>
#include <complex>
#include <exception>
#include <utility>
#include <vector>

#include "ducc0/fft/fft.h"
#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/parallel.h"

namespace kiln::exec {
namespace {

namespace ducc = DUCC0_NAMESPACE;

// About this many elements per chunk of a pass: enough work to pay for a
// hand-off to another thread, few enough chunks to share among the cores.
constexpr int64_t kChunkElements = int64_t{1} << 15;

// A pass's lines: the array seen as [outer, length, inner] around the
// transformed dimension. A chunk is a range of outer indices with every
// inner one, or, where there is one outer index, a range of inner ones.
struct Lines {
  int64_t outer = 1, length = 1, inner = 1;
};

Lines LinesAlong(const std::vector<int64_t>& dims, int64_t dim) {
  Lines lines;
  for (int64_t d = 0; d < dim; ++d) lines.outer *= dims[d];
  lines.length = dims[dim];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(dims.size()); ++d) {
    lines.inner *= dims[d];
  }
  return lines;
}

// Calls `body(outer_begin, outer_end, inner_begin, inner_end)` over the
// chunks of `lines` (for a real transform, the real side's, the longer),
// the chunks over the cores.
template <typename Body>
void ForEachChunk(const Lines& lines, Body&& body) {
  const int64_t per_chunk = std::max<int64_t>(
      1, kChunkElements / std::max<int64_t>(1, lines.length));
  if (lines.outer > 1 || lines.inner == 1) {
    const int64_t outer_per_chunk =
        std::max<int64_t>(1, per_chunk / std::max<int64_t>(1, lines.inner));
    const int64_t chunks = (lines.outer + outer_per_chunk - 1) / outer_per_chunk;
    ParallelFor(chunks, 1, [&](int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c) {
        const int64_t begin = c * outer_per_chunk;
        body(begin, std::min(lines.outer, begin + outer_per_chunk), int64_t{0},
             lines.inner);
      }
    });
    return;
  }
  // One outer index: columns of a 2-D or 3-D transform. DUCC runs a vector
  // of adjacent columns at a time, so chunks keep at least 64 of them.
  const int64_t inner_per_chunk = std::max<int64_t>(64, per_chunk);
  const int64_t chunks = (lines.inner + inner_per_chunk - 1) / inner_per_chunk;
  ParallelFor(chunks, 1, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) {
      const int64_t begin = c * inner_per_chunk;
      body(int64_t{0}, int64_t{1}, begin,
           std::min(lines.inner, begin + inner_per_chunk));
    }
  });
}

// The [outer, length, inner] view of a chunk of an array of `lines` (whose
// line length along the pass is `length`), from its first element.
struct ChunkView {
  ducc::fmav_info::shape_t shape;
  ducc::fmav_info::stride_t strides;
  int64_t offset = 0;
};

ChunkView ViewOf(const Lines& lines, int64_t length, int64_t outer_begin,
                 int64_t outer_end, int64_t inner_begin, int64_t inner_end) {
  ChunkView view;
  view.shape = {static_cast<size_t>(outer_end - outer_begin),
                static_cast<size_t>(length),
                static_cast<size_t>(inner_end - inner_begin)};
  view.strides = {static_cast<ptrdiff_t>(length * lines.inner),
                  static_cast<ptrdiff_t>(lines.inner), 1};
  view.offset = outer_begin * length * lines.inner + inner_begin;
  return view;
}

template <typename T>
using Complex = std::complex<T>;

// Complex to complex along `dim` of `dims`, from `in` to `out` (which may
// be the same array), scaled by `scale`.
template <typename T>
void ComplexPass(const Complex<T>* in, Complex<T>* out,
                 const std::vector<int64_t>& dims, int64_t dim, bool forward,
                 T scale) {
  const Lines lines = LinesAlong(dims, dim);
  ForEachChunk(lines, [&](int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    ChunkView v = ViewOf(lines, lines.length, o0, o1, i0, i1);
    ducc::c2c(ducc::cfmav<Complex<T>>(in + v.offset, v.shape, v.strides),
              ducc::vfmav<Complex<T>>(out + v.offset, v.shape, v.strides),
              {1}, forward, scale, 1);
  });
}

// Calls `body(real, spectrum)` with the views of each chunk of a pass along
// the last dimension of `dims` (the real side's), from the real array's
// lines and the half-spectrum's (length / 2 + 1 bins).
template <typename Body>
void ForEachHalfSpectrumChunk(const std::vector<int64_t>& dims, Body&& body) {
  const Lines lines = LinesAlong(dims, static_cast<int64_t>(dims.size()) - 1);
  const int64_t half = lines.length / 2 + 1;
  ForEachChunk(lines, [&](int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
    body(ViewOf(lines, lines.length, o0, o1, i0, i1),
         ViewOf(lines, half, o0, o1, i0, i1));
  });
}

// Real to half-spectrum along the last dimension of `dims` (the real side).
template <typename T>
void RealToComplexPass(const T* in, Complex<T>* out,
                       const std::vector<int64_t>& dims) {
  ForEachHalfSpectrumChunk(dims, [&](const ChunkView& real,
                                     const ChunkView& spectrum) {
    ducc::r2c(ducc::cfmav<T>(in + real.offset, real.shape, real.strides),
              ducc::vfmav<Complex<T>>(out + spectrum.offset, spectrum.shape,
                                      spectrum.strides),
              size_t{1}, /*forward=*/true, T(1), 1);
  });
}

// Half-spectrum to real along the last dimension of `dims` (the real
// side's), scaled by `scale`. DUCC reads the imaginary parts of the zero
// and (for even lengths) the last bin as zero, as XLA does.
template <typename T>
void ComplexToRealPass(const Complex<T>* in, T* out,
                       const std::vector<int64_t>& dims, T scale) {
  ForEachHalfSpectrumChunk(dims, [&](const ChunkView& real,
                                     const ChunkView& spectrum) {
    ducc::c2r(ducc::cfmav<Complex<T>>(in + spectrum.offset, spectrum.shape,
                                      spectrum.strides),
              ducc::vfmav<T>(out + real.offset, real.shape, real.strides),
              size_t{1}, /*forward=*/false, scale, 1);
  });
}

// Whether a transform of `type` (on either side) computes in double
// precision; f32 and c64 transforms, and types staged through them,
// compute in single.
bool IsDoublePrecision(ElementType type) {
  return type == ElementType::kF64 || type == ElementType::kC128;
}

// The element type whose arrays are E's: f32, f64, c64 or c128. A side of
// another type is staged through an array of E.
template <typename E>
constexpr ElementType NativeType() {
  if constexpr (std::is_floating_point_v<E>) {
    return sizeof(E) == 8 ? ElementType::kF64 : ElementType::kF32;
  } else {
    return sizeof(E) == 16 ? ElementType::kC128 : ElementType::kC64;
  }
}

class FftKernel : public Kernel {
 public:
  FftKernel(FftKind kind, ArrayShape input, ArrayShape output,
            std::vector<int64_t> lengths)
      : kind_(kind),
        input_(std::move(input)),
        output_(std::move(output)),
        lengths_(std::move(lengths)) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const std::byte* in = ctx.slot(step.inputs[0]);
    std::byte* out = ctx.slot(step.outputs[0]);
    if (NumElements(input_.dims) == 0 || NumElements(output_.dims) == 0) {
      return OkStatus();
    }
    try {
      if (IsDoublePrecision(input_.type) || IsDoublePrecision(output_.type)) {
        Transform<double>(in, out);
      } else {
        Transform<float>(in, out);
      }
    } catch (const std::exception& e) {
      return InternalError("fft of ", input_.ToString(), ": ", e.what());
    }
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  // The first transformed dimension.
  int64_t first_dim() const {
    return input_.rank() - static_cast<int64_t>(lengths_.size());
  }

  // 1 / the product of the transformed lengths (an inverse's scale).
  template <typename T>
  T InverseScale() const {
    double count = 1;
    for (int64_t n : lengths_) count *= static_cast<double>(n);
    return static_cast<T>(1.0 / count);
  }

  // The operand as an array of T (real) or Complex<T>: the slot itself
  // where it has that type, else a converted copy in `staged`.
  template <typename E>
  const E* Operand(const std::byte* in, std::vector<E>& staged) const {
    const int64_t count = NumElements(input_.dims);
    constexpr bool kComplex = !std::is_floating_point_v<E>;
    if (input_.type == NativeType<E>()) return reinterpret_cast<const E*>(in);
    staged.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (kComplex) {
        staged[i] = E(LoadComplex(input_.type, in, i));
      } else {
        staged[i] = static_cast<E>(LoadDouble(input_.type, in, i));
      }
    }
    return staged.data();
  }

  // `values` into the result slot, converted where its type is not E's.
  template <typename E>
  void StoreResult(const E* values, std::byte* out) const {
    const int64_t count = NumElements(output_.dims);
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_floating_point_v<E>) {
        StoreDouble(output_.type, out, i, values[i]);
      } else {
        StoreComplex(output_.type, out, i, Complex<double>(values[i]));
      }
    }
  }

  // Whether the result slot holds E's type, so passes may write it.
  template <typename E>
  bool ResultIsNative() const {
    return output_.type == NativeType<E>();
  }


  template <typename T>
  void Transform(const std::byte* in, std::byte* out) const {
    const int64_t rank = input_.rank();
    switch (kind_) {
      case FftKind::kFft:
      case FftKind::kIfft: {
        const bool forward = kind_ == FftKind::kFft;
        std::vector<Complex<T>> staged, result;
        const Complex<T>* source = Operand<Complex<T>>(in, staged);
        Complex<T>* target = reinterpret_cast<Complex<T>*>(out);
        if (!ResultIsNative<Complex<T>>()) {
          result.resize(NumElements(output_.dims));
          target = result.data();
        }
        // The last dimension first, then in place; an inverse scales once,
        // in its last pass.
        for (int64_t d = rank - 1; d >= first_dim(); --d) {
          const T scale =
              !forward && d == first_dim() ? InverseScale<T>() : T(1);
          ComplexPass<T>(d == rank - 1 ? source : target, target,
                         output_.dims, d, forward, scale);
        }
        if (!result.empty()) StoreResult(result.data(), out);
        return;
      }
      case FftKind::kRfft: {
        std::vector<T> staged;
        std::vector<Complex<T>> result;
        const T* source = Operand<T>(in, staged);
        Complex<T>* target = reinterpret_cast<Complex<T>*>(out);
        if (!ResultIsNative<Complex<T>>()) {
          result.resize(NumElements(output_.dims));
          target = result.data();
        }
        RealToComplexPass<T>(source, target, input_.dims);
        for (int64_t d = rank - 2; d >= first_dim(); --d) {
          ComplexPass<T>(target, target, output_.dims, d, /*forward=*/true,
                         T(1));
        }
        if (!result.empty()) StoreResult(result.data(), out);
        return;
      }
      case FftKind::kIrfft: {
        std::vector<Complex<T>> staged, spectrum;
        std::vector<T> result;
        const Complex<T>* source = Operand<Complex<T>>(in, staged);
        // The other dimensions first, into a copy (the operand is read
        // only), then the last one to the real side.
        if (rank - 1 > first_dim()) {
          spectrum.resize(NumElements(input_.dims));
          for (int64_t d = rank - 2; d >= first_dim(); --d) {
            ComplexPass<T>(d == rank - 2 ? source : spectrum.data(),
                           spectrum.data(), input_.dims, d, /*forward=*/false,
                           T(1));
          }
          source = spectrum.data();
        }
        T* target = reinterpret_cast<T*>(out);
        if (!ResultIsNative<T>()) {
          result.resize(NumElements(output_.dims));
          target = result.data();
        }
        ComplexToRealPass<T>(source, target, output_.dims, InverseScale<T>());
        if (!result.empty()) StoreResult(result.data(), out);
        return;
      }
    }
  }

  FftKind kind_;
  ArrayShape input_, output_;
  std::vector<int64_t> lengths_;
};

}  // namespace

std::unique_ptr<Kernel> MakeFftKernel(FftKind kind, ArrayShape input,
                                      ArrayShape output,
                                      std::vector<int64_t> lengths) {
  return std::make_unique<FftKernel>(kind, std::move(input), std::move(output),
                                     std::move(lengths));
}

}  // namespace kiln::exec
