// The oneDNN engine, the kernel that runs a primitive over a step's slots,
// and the matmul behind dot_general.
#include "exec/kernels/onednn.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "base/thread_pool.h"
#include "exec/executor.h"
#include "exec/kernels/onednn_primitive.h"
#include "exec/parallel.h"

namespace kiln::exec {
namespace onednn {

const dnnl::engine& Engine() {
  static const dnnl::engine* engine =
      new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

std::optional<dnnl::memory::data_type> DataType(ElementType type) {
  using dt = dnnl::memory::data_type;
  switch (type) {
    case ElementType::kF32:
      return dt::f32;
    case ElementType::kBF16:
      return dt::bf16;
    case ElementType::kF16:
      return dt::f16;
    case ElementType::kI8:
      return dt::s8;
    case ElementType::kUI8:
      return dt::u8;
    case ElementType::kI32:
      return dt::s32;
    default:
      return std::nullopt;
  }
}

std::optional<dnnl::memory::desc> StridedDesc(
    const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
    ElementType type) {
  std::optional<dnnl::memory::data_type> data_type = DataType(type);
  if (!data_type || dims.empty() || dims.size() > DNNL_MAX_NDIMS ||
      dims.size() != strides.size()) {
    return std::nullopt;
  }
  // A dimension of size 1 is never stepped over, so its stride is free;
  // oneDNN recognizes plain and transposed layouts by their strides, so it
  // gets the one a dense layout of the dimensions after it would have.
  dnnl::memory::dims adjusted(strides.begin(), strides.end());
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (dims[d] <= 0) return std::nullopt;
    if (dims[d] == 1) {
      adjusted[d] = 1;
      for (size_t inner = d + 1; inner < dims.size(); ++inner)
        adjusted[d] = std::max(adjusted[d], adjusted[inner] * dims[inner]);
    }
    if (adjusted[d] <= 0) return std::nullopt;
  }
  dnnl::memory::desc desc(dnnl::memory::dims(dims.begin(), dims.end()),
                          *data_type, adjusted, /*allow_empty=*/true);
  if (desc.data.ndims == 0) return std::nullopt;
  return desc;
}

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool IsOptimized(const dnnl::primitive_desc_base& pd) {
  const char* name = pd.impl_info_str();
  return name != nullptr && std::strncmp(name, "ref", 3) != 0;
}

namespace {

// Scratch buffers start at multiples of this many bytes (a cache line;
// oneDNN's own allocations use the same).
constexpr int64_t kScratchAlignment = 64;

int64_t AlignUp(int64_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment *
         kScratchAlignment;
}

class PrimitiveKernel : public Kernel {
 public:
  PrimitiveKernel(dnnl::primitive primitive, std::vector<PrimitiveArg> args,
                  dnnl::memory::desc scratchpad, int64_t scratchpad_offset)
      : primitive_(std::move(primitive)),
        args_(std::move(args)),
        scratchpad_(std::move(scratchpad)),
        scratchpad_offset_(scratchpad_offset) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    std::byte* scratch =
        step.outputs.size() > 1 ? ctx.slot(step.outputs[1]) : nullptr;
    try {
      const dnnl::engine& engine = Engine();
      std::unordered_map<int, dnnl::memory> primitive_args;
      struct Copy {
        const dnnl::reorder* reorder;
        dnnl::memory from, to;
      };
      std::vector<Copy> before, after;  // reorders into and out of scratch
      for (const PrimitiveArg& arg : args_) {
        void* user = arg.is_output ? ctx.slot(step.outputs[arg.index])
                                   : ctx.slot(step.inputs[arg.index]);
        dnnl::memory user_memory(arg.user, engine, user);
        if (!arg.reorder) {
          primitive_args.emplace(arg.dnnl_arg, user_memory);
          continue;
        }
        dnnl::memory compute_memory(arg.compute, engine, scratch + arg.offset);
        primitive_args.emplace(arg.dnnl_arg, compute_memory);
        if (arg.is_output) {
          after.push_back({&*arg.reorder, compute_memory, user_memory});
        } else {
          before.push_back({&*arg.reorder, user_memory, compute_memory});
        }
      }
      if (scratchpad_.get_size() > 0) {
        primitive_args.emplace(
            DNNL_ARG_SCRATCHPAD,
            dnnl::memory(scratchpad_, engine, scratch + scratchpad_offset_));
      }
      std::lock_guard<std::mutex> all_cores(AllCoresMutex());
      dnnl::stream stream(engine);
      for (Copy& copy : before)
        copy.reorder->execute(stream, copy.from, copy.to);
      primitive_.execute(stream, primitive_args);
      for (Copy& copy : after)
        copy.reorder->execute(stream, copy.from, copy.to);
      stream.wait();
    } catch (const dnnl::error& error) {
      return InternalError("oneDNN: ", error.what());
    }
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  dnnl::primitive primitive_;
  std::vector<PrimitiveArg> args_;
  dnnl::memory::desc scratchpad_;
  int64_t scratchpad_offset_;
};

}  // namespace

OneDnnKernel MakePrimitiveKernel(const dnnl::primitive_desc_base& pd,
                                 dnnl::primitive primitive,
                                 std::vector<PrimitiveArg> args) {
  OneDnnKernel made;
  int64_t bytes = 0;
  for (PrimitiveArg& arg : args) {
    if (arg.compute == arg.user) continue;
    dnnl::reorder::primitive_desc reorder_pd =
        arg.is_output
            ? dnnl::reorder::primitive_desc(Engine(), arg.compute, Engine(),
                                            arg.user, UserScratchpad(),
                                            /*allow_empty=*/true)
            : dnnl::reorder::primitive_desc(Engine(), arg.user, Engine(),
                                            arg.compute, UserScratchpad(),
                                            /*allow_empty=*/true);
    // Reorders between plain and blocked layouts need no scratchpad; one
    // that does is not worth a second buffer.
    if (!reorder_pd || reorder_pd.scratchpad_desc().get_size() > 0) {
      return made;
    }
    arg.reorder = dnnl::reorder(reorder_pd);
    arg.offset = bytes;
    bytes += AlignUp(static_cast<int64_t>(arg.compute.get_size()));
  }
  dnnl::memory::desc scratchpad = pd.scratchpad_desc();
  int64_t scratchpad_offset = bytes;
  bytes += AlignUp(static_cast<int64_t>(scratchpad.get_size()));
  made.scratch_bytes = bytes;
  made.implementation = pd.impl_info_str();
  made.kernel = std::make_unique<PrimitiveKernel>(
      std::move(primitive), std::move(args), std::move(scratchpad),
      scratchpad_offset);
  return made;
}

}  // namespace onednn

bool CpuHasVnni() {
  static const bool has_vnni = [] {
    if (__builtin_cpu_supports("avx512vnni")) return true;
#if defined(__clang__) && __clang_major__ < 15
    // Clang 14 (the fuzz builds') does not know the AVX-VNNI feature name;
    // those builds take the exact path on such CPUs.
    return false;
#else
    return static_cast<bool>(__builtin_cpu_supports("avxvnni"));
#endif
  }();
  return has_vnni;
}

bool CpuHasNativeBf16Matmul() {
  static const bool native = [] {
    const unsigned isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx512_core_bf16) ==
           dnnl_cpu_isa_avx512_core_bf16;
  }();
  return native;
}

namespace {

// How sgemm reads a [rows, cols] operand at element strides: as stored
// ('N', `ld` the row stride) when its columns are contiguous, transposed
// ('T', `ld` the column stride) when its rows are. A dimension of size 1
// is contiguous whatever its stride.
struct GemmOperand {
  char trans;
  int64_t ld;
};

std::optional<GemmOperand> AsGemmOperand(int64_t rows, int64_t cols,
                                         int64_t row_stride,
                                         int64_t col_stride) {
  if (cols == 1 || col_stride == 1) {
    const int64_t ld = rows == 1 ? cols : row_stride;
    if (ld >= std::max<int64_t>(1, cols)) return GemmOperand{'N', ld};
  }
  if (rows == 1 || row_stride == 1) {
    const int64_t ld = cols == 1 ? rows : col_stride;
    if (ld >= std::max<int64_t>(1, rows)) return GemmOperand{'T', ld};
  }
  return std::nullopt;
}

// An f32 matmul of two dimensions through oneDNN's sgemm, on the operands
// in place. Measured on 2 cores (bench/exec/dense_bench.cc,
// BM_MatmulShape), it beats the matmul primitive in every shape of the
// suite's models: 2.40 against 2.55 ms (1024x768x768), 9.4-9.9 against
// 10.3-10.4 (BERT's feed-forward block), 0.22 against 0.28 (128x784x512),
// with no reorder of the weights and no scratch.
//
// With a bias (input 2, [n]) every row of the result is first filled with
// it, over the pool, and sgemm accumulates onto it (beta 1): the bias
// costs one write of the result instead of a pass that reads the product
// back and writes the sum (2.41 -> 2.33 ms at 1024x768x768, 10.0 -> 9.7
// ms at 1024x768x3072, on 2 cores).
class SgemmKernel : public Kernel {
 public:
  SgemmKernel(int64_t m, int64_t k, int64_t n, GemmOperand lhs, GemmOperand rhs,
              bool bias)
      : m_(m), k_(k), n_(n), lhs_(lhs), rhs_(rhs), bias_(bias) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const auto* a = reinterpret_cast<const float*>(ctx.slot(step.inputs[0]));
    const auto* b = reinterpret_cast<const float*>(ctx.slot(step.inputs[1]));
    auto* c = reinterpret_cast<float*>(ctx.slot(step.outputs[0]));
    if (bias_) {
      const auto* bias =
          reinterpret_cast<const float*>(ctx.slot(step.inputs[2]));
      const int64_t n = n_;
      ParallelFor(m_, std::max<int64_t>(1, (int64_t{1} << 14) / n),
                  [&](int64_t first, int64_t last) {
                    for (int64_t i = first; i < last; ++i) {
                      std::memcpy(c + i * n, bias, n * sizeof(float));
                    }
                  });
    }
    dnnl_status_t status;
    {
      std::lock_guard<std::mutex> all_cores(AllCoresMutex());
      // beta 0 without a bias: the result's bytes are written, never read.
      status = dnnl_sgemm(lhs_.trans, rhs_.trans, m_, n_, k_, 1.0f, a, lhs_.ld,
                          b, rhs_.ld, bias_ ? 1.0f : 0.0f, c, n_);
    }
    if (status != dnnl_success) {
      return InternalError("oneDNN: dnnl_sgemm failed with status ",
                           static_cast<int>(status));
    }
    if (ctx.cancelled()) return ctx.CancelledStatus();
    return OkStatus();
  }

 private:
  int64_t m_, k_, n_;
  GemmOperand lhs_, rhs_;
  bool bias_;
};

// The sgemm kernel for `p`, where it applies: f32 throughout, no batch
// (or a batch of one), each operand contiguous along one of its two
// dimensions.
OneDnnKernel MakeSgemmKernel(const OneDnnMatmulParams& p) {
  OneDnnKernel none;
  if (p.lhs_type != ElementType::kF32 || p.rhs_type != ElementType::kF32 ||
      p.result_type != ElementType::kF32) {
    return none;
  }
  for (int64_t size : p.batch) {
    if (size != 1) return none;
  }
  if (p.m <= 0 || p.k <= 0 || p.n <= 0 || p.lhs_strides.size() < 2 ||
      p.rhs_strides.size() < 2) {
    return none;
  }
  const size_t l = p.lhs_strides.size(), r = p.rhs_strides.size();
  std::optional<GemmOperand> lhs =
      AsGemmOperand(p.m, p.k, p.lhs_strides[l - 2], p.lhs_strides[l - 1]);
  std::optional<GemmOperand> rhs =
      AsGemmOperand(p.k, p.n, p.rhs_strides[r - 2], p.rhs_strides[r - 1]);
  if (!lhs || !rhs) return none;
  OneDnnKernel made;
  made.implementation = "sgemm";
  made.kernel =
      std::make_unique<SgemmKernel>(p.m, p.k, p.n, *lhs, *rhs, p.bias);
  return made;
}

}  // namespace

bool IsOneDnnKernel(const Kernel& kernel) {
  return dynamic_cast<const onednn::PrimitiveKernel*>(&kernel) != nullptr ||
         dynamic_cast<const SgemmKernel*>(&kernel) != nullptr;
}

namespace {

bool IsFloatForOneDnn(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kBF16 ||
         type == ElementType::kF16;
}

// Rows from which a float matmul takes its rhs in oneDNN's layout.
constexpr int64_t kRepackRows = 256;

// int8 products summed in s32 are exact (as Kiln's wrapping integer
// kernels) while no partial sum can overflow: |u8 x s8| <= 2^15 - 128, so
// up to 2^16 of them fit in s32. Without VNNI, oneDNN pairs u8 x s8
// products in saturating 16-bit adds (vpmaddubsw), which is not exact.
bool Int8MatmulIsExact(int64_t k) {
  return CpuHasVnni() && k <= (int64_t{1} << 16);
}

}  // namespace

OneDnnKernel MakeOneDnnMatmulKernel(const OneDnnMatmulParams& p) {
  OneDnnKernel none;
  const bool floats = IsFloatForOneDnn(p.lhs_type) &&
                      p.lhs_type == p.rhs_type &&
                      IsFloatForOneDnn(p.result_type);
  const bool int8 =
      (p.lhs_type == ElementType::kI8 || p.lhs_type == ElementType::kUI8) &&
      p.rhs_type == ElementType::kI8 && p.result_type == ElementType::kI32 &&
      Int8MatmulIsExact(p.k);
  if (!floats && !int8) return none;
  if (OneDnnKernel sgemm = MakeSgemmKernel(p); sgemm.kernel || p.bias) {
    return sgemm;
  }
  std::vector<int64_t> lhs_dims = p.batch, rhs_dims = p.batch,
                       out_dims = p.batch;
  lhs_dims.insert(lhs_dims.end(), {p.m, p.k});
  rhs_dims.insert(rhs_dims.end(), {p.k, p.n});
  out_dims.insert(out_dims.end(), {p.m, p.n});
  auto lhs = onednn::StridedDesc(lhs_dims, p.lhs_strides, p.lhs_type);
  auto rhs = onednn::StridedDesc(rhs_dims, p.rhs_strides, p.rhs_type);
  auto out =
      onednn::StridedDesc(out_dims, RowMajorStrides(out_dims), p.result_type);
  if (!lhs || !rhs || !out) return none;
  // Other float matmuls of many rows (bf16, f16, and f32 ones sgemm does
  // not take) read the rhs in the layout oneDNN picks (format `any`),
  // reordered into the step's scratch in each run. Over
  // the program's plain [k, n] layout oneDNN's kernel repacks rhs blocks
  // again for every block of rows it computes: BERT-base's 1024 x 768 x
  // 3072 product took 9-10 ms on 16 cores, 4.1-4.3 ms with the reorder in
  // every run (dnnl_sgemm 4.1-4.5), and 12.5 -> 10.6 ms on 2 (bench/exec/
  // dense_bench.cc, BM_MatmulShape). Below 256 rows the reorder costs
  // about what it saves. Where oneDNN's layout cannot be had, the plain
  // one is used.
  const bool try_any = floats && p.batch.empty() && p.m >= kRepackRows;
  for (bool rhs_any : {true, false}) {
    if (rhs_any && !try_any) continue;
    try {
      dnnl::memory::desc rhs_compute =
          rhs_any ? dnnl::memory::desc(
                        dnnl::memory::dims(rhs_dims.begin(), rhs_dims.end()),
                        *onednn::DataType(p.rhs_type),
                        dnnl::memory::format_tag::any)
                  : *rhs;
      dnnl::matmul::desc desc(*lhs, rhs_compute, *out);
      dnnl::matmul::primitive_desc pd(desc, onednn::UserScratchpad(),
                                      onednn::Engine(), /*allow_empty=*/true);
      if (!pd || !onednn::IsOptimized(pd)) continue;
      std::vector<onednn::PrimitiveArg> args(3);
      args[0] = {DNNL_ARG_SRC, false, 0, *lhs, *lhs, std::nullopt, 0};
      args[1] = {DNNL_ARG_WEIGHTS,  false,        1, *rhs,
                 pd.weights_desc(), std::nullopt, 0};
      args[2] = {DNNL_ARG_DST, true, 0, *out, *out, std::nullopt, 0};
      OneDnnKernel made =
          onednn::MakePrimitiveKernel(pd, dnnl::matmul(pd), std::move(args));
      if (made.kernel) return made;
    } catch (const dnnl::error&) {
    }
  }
  return none;
}

}  // namespace kiln::exec
