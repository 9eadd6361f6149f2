// Lowering of dot_general, dot and convolution: operands are converted to
// the result's compute type and transposed into the kernels' canonical
// layouts.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "base/containers.h"
#include "compile/lower_families.h"
#include "exec/kernels/convolution.h"
#include "exec/kernels/dot.h"
#include "exec/kernels/einsum.h"
#include "exec/kernels/element.h"
#include "exec/kernels/onednn.h"
#include "exec/kernels/shape.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

// The layouts a oneDNN convolution is tried with, first the fastest
// (bench/exec/dense_bench.cc measures them).
constexpr exec::OneDnnLayouts kOneDnnConvolutionLayouts[] = {
    exec::OneDnnLayouts::kBlockedWeights, exec::OneDnnLayouts::kBlocked,
    exec::OneDnnLayouts::kProgram};
// A 1x1 convolution over fewer output positions (batch x spatial) than
// this reads its weights in the program's layout first: it is one small
// matrix product per position block, and reordering the weights into
// oneDNN's blocked layout in every run costs as much as the product.
// ResNet-50's last stage at batch 1 (7x7 outputs, 2048 x 512 weights):
// 0.10-0.12 ms in the program's layout, 0.20-0.21 blocked, on 16 cores;
// 0.23 against 0.36 ms on 2 (dense_bench, BM_ConvKernel/4).
constexpr int64_t kSmallPointwisePositions = 128;

// The element types a oneDNN matmul or convolution computes an op in: the
// operands' own where oneDNN takes them (bf16 pairs on CPUs with bf16
// instructions, u8/s8 x s8
// into s32), else f32 for results Kiln computes in f32 (the operands are
// converted first, as the reference path converts them).
struct OneDnnTypes {
  ElementType lhs, rhs, result;
  bool convert_operands = false;
};

std::optional<OneDnnTypes> ChooseOneDnnTypes(ElementType lhs, ElementType rhs,
                                             ElementType result) {
  // bf16 pairs in bf16 where the CPU has bf16 instructions; elsewhere, and
  // f16 everywhere, through f32 (below), as XLA:CPU computes them.
  const bool native_half =
      lhs == ElementType::kBF16 && exec::CpuHasNativeBf16Matmul();
  if (native_half && rhs == lhs &&
      (result == lhs || result == ElementType::kF32)) {
    return OneDnnTypes{lhs, rhs, result};
  }
  if ((lhs == ElementType::kI8 || lhs == ElementType::kUI8) &&
      rhs == ElementType::kI8 && result == ElementType::kI32) {
    return OneDnnTypes{lhs, rhs, result};
  }
  if (ir::IsFloat(result) && exec::ComputeType(result) == ElementType::kF32 &&
      ir::IsFloat(lhs) && ir::IsFloat(rhs)) {
    return OneDnnTypes{ElementType::kF32, ElementType::kF32, ElementType::kF32,
                       /*convert_operands=*/true};
  }
  return std::nullopt;
}

// The stride of dimensions `group` of a row-major array of `dims` read as
// one dimension (their sizes multiplied, in the order listed): the stride
// of the last, when each steps exactly over the ones after it (dimensions
// of size 1 aside); none otherwise. 1 for an empty group.
std::optional<int64_t> MergedStride(const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& group) {
  std::vector<int64_t> strides = exec::RowMajorStrides(dims);
  std::optional<int64_t> stride;
  int64_t next = 0;  // the stride the next dimension out must have
  for (auto d = group.rbegin(); d != group.rend(); ++d) {
    if (dims[*d] == 1) continue;
    if (stride && strides[*d] != next) return std::nullopt;
    if (!stride) stride = strides[*d];
    next = strides[*d] * dims[*d];
  }
  return stride.value_or(1);
}

// Emits the step of a oneDNN kernel: its result in a new temp of `shape`
// (and its scratch slot), bound to `result` converted to `type`.
void EmitOneDnnStep(Lowering& lowering, const ir::Operation& op,
                    const ir::Value* result, exec::OneDnnKernel made,
                    std::vector<SlotId> inputs, ArrayShape shape,
                    ElementType type) {
  SlotId out = lowering.NewTemp(std::move(shape));
  std::vector<SlotId> outputs{out};
  if (made.scratch_bytes > 0) {
    outputs.push_back(
        lowering.NewTemp(ArrayShape{ElementType::kUI8, {made.scratch_bytes}}));
  }
  lowering.Emit(op, std::move(made.kernel), std::move(inputs),
                std::move(outputs));
  lowering.Bind(result, ConvertSlot(lowering, op, out, type));
}

// dot_general through a oneDNN matmul, when oneDNN implements it. The
// operands' dimensions are taken in the roles `lhs_perm` and `rhs_perm`
// give them (batch, then free and contracting for lhs, contracting and
// free for rhs). First over the operands in place, each role's
// dimensions read as one strided dimension; where they do not merge (or
// oneDNN has no fast kernel for those strides), over copies transposed
// into [batch, m, k] x [batch, k, n]. With `bias` (an f32 [n]) the kernel
// adds it to every row of the result, where the kernel takes one (sgemm).
// The result, computed as `result` says, is bound converted to
// `bind_type`. False when none of this is possible; nothing is emitted
// then.
bool EmitOneDnnDot(Lowering& lowering, const ir::Operation& op,
                   const ir::Value* result_value, SlotId lhs, SlotId rhs,
                   const std::vector<int64_t>& lhs_perm,
                   const std::vector<int64_t>& rhs_perm, size_t num_batch,
                   size_t num_contracting, int64_t m, int64_t k, int64_t n,
                   const ArrayShape& result, ElementType bind_type,
                   std::optional<SlotId> bias) {
  ArrayShape l = lowering.shape(lhs), r = lowering.shape(rhs);
  std::optional<OneDnnTypes> types =
      ChooseOneDnnTypes(l.type, r.type, result.type);
  if (!types) return false;
  exec::OneDnnMatmulParams p;
  p.lhs_type = types->lhs;
  p.rhs_type = types->rhs;
  p.result_type = types->result;
  p.m = m;
  p.k = k;
  p.n = n;
  p.bias = bias.has_value();
  auto part = [](const std::vector<int64_t>& perm, size_t begin, size_t end) {
    return std::vector<int64_t>(perm.begin() + begin, perm.begin() + end);
  };
  const size_t lhs_free_end = lhs_perm.size() - num_contracting;
  const size_t rhs_contracting_end = num_batch + num_contracting;
  std::optional<int64_t> strides[4] = {
      MergedStride(l.dims, part(lhs_perm, num_batch, lhs_free_end)),
      MergedStride(l.dims, part(lhs_perm, lhs_free_end, lhs_perm.size())),
      MergedStride(r.dims, part(rhs_perm, num_batch, rhs_contracting_end)),
      MergedStride(r.dims,
                   part(rhs_perm, rhs_contracting_end, rhs_perm.size()))};
  exec::OneDnnKernel made;
  bool in_place = strides[0] && strides[1] && strides[2] && strides[3];
  if (in_place) {
    std::vector<int64_t> l_strides = exec::RowMajorStrides(l.dims);
    std::vector<int64_t> r_strides = exec::RowMajorStrides(r.dims);
    for (size_t i = 0; i < num_batch; ++i) {
      p.batch.push_back(l.dims[lhs_perm[i]]);
      p.lhs_strides.push_back(l_strides[lhs_perm[i]]);
      p.rhs_strides.push_back(r_strides[rhs_perm[i]]);
    }
    p.lhs_strides.insert(p.lhs_strides.end(), {*strides[0], *strides[1]});
    p.rhs_strides.insert(p.rhs_strides.end(), {*strides[2], *strides[3]});
    made = exec::MakeOneDnnMatmulKernel(p);
    in_place = made.kernel != nullptr;
  }
  if (!in_place) {
    int64_t batch = 1;
    for (size_t i = 0; i < num_batch; ++i) batch *= l.dims[lhs_perm[i]];
    p.batch = {batch};
    p.lhs_strides = {m * k, k, 1};
    p.rhs_strides = {k * n, n, 1};
    made = exec::MakeOneDnnMatmulKernel(p);
    if (!made.kernel) return false;
  }
  if (types->convert_operands) {
    lhs = ConvertSlot(lowering, op, lhs, types->lhs);
    rhs = ConvertSlot(lowering, op, rhs, types->rhs);
  }
  if (!in_place) {
    lhs = TransposeSlot(lowering, op, lhs, lhs_perm);
    rhs = TransposeSlot(lowering, op, rhs, rhs_perm);
  }
  std::vector<SlotId> inputs = {lhs, rhs};
  if (bias) inputs.push_back(*bias);
  EmitOneDnnStep(lowering, op, result_value, std::move(made), std::move(inputs),
                 ArrayShape{types->result, result.dims}, bind_type);
  return true;
}

// Whether a [batch, m, k] x [batch, k, n] dot goes to oneDNN. Kiln's
// matmul vectorizes across a row of the result, 16 f32 columns at a time
// (MatmulRows); a result narrower than that (a classifier's 10 logits and
// their gradients) runs at a third of oneDNN's speed there or worse, so
// narrow dots go to oneDNN from a sixteenth of the usual size: 128x512x10
// took 210 us in Kiln's kernel, 70 in oneDNN (XLA:CPU 80).
bool UseOneDnnForDot(const Lowering& lowering, int64_t batch, int64_t m,
                     int64_t k, int64_t n) {
  const double multiply_adds = static_cast<double>(batch) * m * k * n;
  constexpr int64_t kKilnBlockColumns = 16;
  return lowering.UseOneDnnFor(n < kKilnBlockColumns
                                   ? multiply_adds * kKilnBlockColumns
                                   : multiply_adds);
}

// The float type in which an integer dot of `k` products of `lhs` and
// `rhs` elements computes exactly what the integer one does, where there
// is one: the largest sum it can reach must be an integer the float holds
// exactly (so every partial sum and product is, in any order and with
// fused multiply-adds) and lie in the result type's range (so the integer
// dot never wraps). An int8 by int8 dot into int32 (quantized layers,
// lax.dot with preferred_element_type) of up to 1024 products fits f32,
// of up to 2^17 f64; such dots then run through oneDNN or the BLAS
// instead of Kiln's integer loops (1024^3: 400 ms on 2 cores, 23x
// XLA:CPU's time). Operands of 8 or 16 bits only; none for products too
// small to repay the conversions.
std::optional<ElementType> ExactFloatForIntegerDot(ElementType lhs,
                                                   ElementType rhs,
                                                   ElementType result,
                                                   double multiply_adds,
                                                   int64_t k) {
  constexpr double kMinMultiplyAdds = 1 << 12;
  auto narrow = [](ElementType type) {
    const int bits = ir::BitWidth(type);
    return ir::IsInteger(type) && (bits == 8 || bits == 16);
  };
  if (multiply_adds < kMinMultiplyAdds || !narrow(lhs) || !narrow(rhs) ||
      !ir::IsInteger(result)) {
    return std::nullopt;
  }
  const bool unsigned_result = ir::IsUnsignedInteger(result);
  // A negative sum into an unsigned result wraps.
  if (unsigned_result &&
      (!ir::IsUnsignedInteger(lhs) || !ir::IsUnsignedInteger(rhs))) {
    return std::nullopt;
  }
  auto largest = [](ElementType type) {  // the largest magnitude
    const int bits = ir::BitWidth(type);
    return ir::IsUnsignedInteger(type) ? std::ldexp(1.0, bits) - 1
                                       : std::ldexp(1.0, bits - 1);
  };
  const double bound = static_cast<double>(k) * largest(lhs) * largest(rhs);
  const int result_bits = ir::BitWidth(result);
  const double result_max = std::ldexp(1.0, unsigned_result ? result_bits
                                                            : result_bits - 1) -
                            1;
  if (bound > result_max) return std::nullopt;
  if (bound <= std::ldexp(1.0, 24)) return ElementType::kF32;
  if (bound <= std::ldexp(1.0, 53)) return ElementType::kF64;
  return std::nullopt;
}

// dot_general of `op`'s dimension numbers `dn`, its result bound to result
// 0 of `result_op` (`op` itself, the transpose that the dot of swapped
// operands computes: SwappingTranspose, or the add of a bias:
// BiasAddOf). With `bias` only a kernel that adds it is emitted; where
// there is none, nothing is, and *emitted says so.
Status EmitDotGeneral(Lowering& lowering, const ir::Operation& op,
                      const ir::Operation& result_op, SlotId lhs, SlotId rhs,
                      const ir::DotDimensionNumbers& dn,
                      std::optional<SlotId> bias = std::nullopt,
                      bool* emitted = nullptr) {
  if (emitted != nullptr) *emitted = true;
  ArrayShape l = lowering.shape(lhs), r = lowering.shape(rhs);
  RETURN_IF_ERROR(CheckDistinctDims(op, dn.lhs_batching_dimensions, l.rank(),
                                    "lhs batching dimensions"));
  RETURN_IF_ERROR(CheckDistinctDims(op, dn.rhs_batching_dimensions, r.rank(),
                                    "rhs batching dimensions"));
  RETURN_IF_ERROR(CheckDistinctDims(op, dn.lhs_contracting_dimensions, l.rank(),
                                    "lhs contracting dimensions"));
  RETURN_IF_ERROR(CheckDistinctDims(op, dn.rhs_contracting_dimensions, r.rank(),
                                    "rhs contracting dimensions"));
  if (dn.lhs_batching_dimensions.size() != dn.rhs_batching_dimensions.size() ||
      dn.lhs_contracting_dimensions.size() !=
          dn.rhs_contracting_dimensions.size()) {
    return InvalidArgumentError(op.Describe(),
                                ": lhs and rhs dimension lists differ");
  }
  std::vector<int64_t> lhs_perm, rhs_perm, result_dims, lhs_free, rhs_free;
  int64_t batch = 1, m = 1, k = 1, n = 1;
  for (size_t i = 0; i < dn.lhs_batching_dimensions.size(); ++i) {
    int64_t size = l.dims[dn.lhs_batching_dimensions[i]];
    if (size != r.dims[dn.rhs_batching_dimensions[i]]) {
      return InvalidArgumentError(op.Describe(),
                                  ": batch dimension sizes differ for ",
                                  l.ToString(), " and ", r.ToString());
    }
    batch *= size;
    result_dims.push_back(size);
    lhs_perm.push_back(dn.lhs_batching_dimensions[i]);
    rhs_perm.push_back(dn.rhs_batching_dimensions[i]);
  }
  for (int64_t d = 0; d < l.rank(); ++d) {
    if (Contains(dn.lhs_batching_dimensions, d) ||
        Contains(dn.lhs_contracting_dimensions, d)) {
      continue;
    }
    lhs_perm.push_back(d);
    m *= l.dims[d];
    result_dims.push_back(l.dims[d]);
  }
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
    int64_t size = l.dims[dn.lhs_contracting_dimensions[i]];
    if (size != r.dims[dn.rhs_contracting_dimensions[i]]) {
      return InvalidArgumentError(op.Describe(),
                                  ": contracting dimension sizes "
                                  "differ for ",
                                  l.ToString(), " and ", r.ToString());
    }
    k *= size;
    lhs_perm.push_back(dn.lhs_contracting_dimensions[i]);
    rhs_perm.push_back(dn.rhs_contracting_dimensions[i]);
  }
  for (int64_t d = 0; d < r.rank(); ++d) {
    if (Contains(dn.rhs_batching_dimensions, d) ||
        Contains(dn.rhs_contracting_dimensions, d)) {
      continue;
    }
    rhs_perm.push_back(d);
    n *= r.dims[d];
    result_dims.push_back(r.dims[d]);
  }
  ASSIGN_OR_RETURN(ArrayShape result,
                   lowering.ResultShape(result_op, 0, result_dims));
  // The shape the dot computes, converted to the result's type after.
  ArrayShape computed = result;
  if (std::optional<ElementType> exact = ExactFloatForIntegerDot(
          l.type, r.type, result.type,
          static_cast<double>(batch) * m * k * n, k);
      exact && !bias) {
    lhs = ConvertSlot(lowering, op, lhs, *exact);
    rhs = ConvertSlot(lowering, op, rhs, *exact);
    computed.type = *exact;
  }
  if (UseOneDnnForDot(lowering, batch, m, k, n) &&
      EmitOneDnnDot(lowering, op, result_op.result(0), lhs, rhs, lhs_perm,
                    rhs_perm, dn.lhs_batching_dimensions.size(),
                    dn.lhs_contracting_dimensions.size(), m, k, n, computed,
                    result.type, bias)) {
    return OkStatus();
  }
  if (bias) {  // only oneDNN's sgemm adds a bias
    *emitted = false;
    return OkStatus();
  }
  ElementType compute = exec::ComputeType(computed.type);
  auto kernel = exec::MakeMatmulKernel(compute, batch, m, k, n);
  if (!kernel) return UnsupportedType(op, result.type);
  SlotId a = TransposeSlot(lowering, op,
                           ConvertSlot(lowering, op, lhs, compute), lhs_perm);
  SlotId b = TransposeSlot(lowering, op,
                           ConvertSlot(lowering, op, rhs, compute), rhs_perm);
  SlotId out = lowering.NewTemp(ArrayShape{compute, result_dims});
  lowering.Emit(op, std::move(kernel), {a, b}, {out});
  lowering.Bind(result_op.result(0),
                ConvertSlot(lowering, op, out, result.type));
  return OkStatus();
}

// `slot` reversed along `dims` (a copy; the slot itself for no dims).
SlotId ReverseSlot(Lowering& lowering, const ir::Operation& op, SlotId slot,
                   const std::vector<int64_t>& dims) {
  if (dims.empty()) return slot;
  ArrayShape shape = lowering.shape(slot);
  exec::StridedCopy copy;
  copy.dims = shape.dims;
  copy.source_strides = shape.Strides();
  copy.target_strides = shape.Strides();
  for (int64_t d : dims) {
    copy.source_offset += (shape.dims[d] - 1) * copy.source_strides[d];
    copy.source_strides[d] = -copy.source_strides[d];
  }
  SlotId out = lowering.NewTemp(shape);
  lowering.Emit(
      op, exec::MakeStridedCopyKernel(std::move(copy), shape.element_bytes()),
      {slot}, {out});
  return out;
}

// convolution through oneDNN's convolution forward, over the program's
// arrays in place (any dimension numbers are strides); with input (lhs)
// dilation, a transposed convolution, through its deconvolution forward.
// Where oneDNN must read the kernel reversed and the program does not
// reverse it (window_reversal), or the other way round, a reversed copy
// of the kernel is made. False where it does not map: batch groups,
// input dilation with window strides, or what oneDNN does not implement.
// With `bias` (an f32 [O] vector), the primitive adds it to every output
// feature, and its result is `result_value` (the add's); false where
// oneDNN will not add it.
bool EmitOneDnnConvolution(
    Lowering& lowering, const ir::Operation& op, SlotId input, SlotId kernel,
    const std::vector<int64_t>& in_perm, const std::vector<int64_t>& ker_perm,
    const std::vector<int64_t>& out_perm, const exec::ConvolutionParams& p,
    const std::vector<int64_t>& padding, const ArrayShape& result,
    std::optional<SlotId> bias = std::nullopt,
    const ir::Value* result_value = nullptr) {
  if (p.batch_group_count != 1) return false;
  bool dilated_input = false;
  for (int64_t d : p.lhs_dilation) dilated_input |= d != 1;
  std::vector<int64_t> reverse;  // kernel dimensions to copy reversed
  for (size_t d = 0; d < p.strides.size(); ++d) {
    if (dilated_input != p.reversal[d]) reverse.push_back(ker_perm[2 + d]);
  }
  ArrayShape in = lowering.shape(input), ker = lowering.shape(kernel);
  std::optional<OneDnnTypes> types =
      ChooseOneDnnTypes(in.type, ker.type, result.type);
  if (!types) return false;
  if (bias &&
      (dilated_input || in.type != ElementType::kF32 ||
       ker.type != ElementType::kF32 || result.type != ElementType::kF32)) {
    return false;
  }
  exec::OneDnnConvolutionParams q;
  q.bias = bias.has_value();
  q.input_type = types->lhs;
  q.kernel_type = types->rhs;
  q.result_type = types->result;
  auto logical = [](const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& perm,
                    std::vector<int64_t>& logical_dims,
                    std::vector<int64_t>& logical_strides) {
    std::vector<int64_t> strides = exec::RowMajorStrides(dims);
    for (int64_t d : perm) {
      logical_dims.push_back(dims[d]);
      logical_strides.push_back(strides[d]);
    }
  };
  logical(in.dims, in_perm, q.input_dims, q.input_strides);
  logical(ker.dims, ker_perm, q.kernel_dims, q.kernel_strides);
  logical(result.dims, out_perm, q.output_dims, q.output_strides);
  q.window_strides = p.strides;
  q.rhs_dilation = p.rhs_dilation;
  q.lhs_dilation = p.lhs_dilation;
  for (size_t d = 0; d < p.strides.size(); ++d) {
    q.padding_low.push_back(padding[2 * d]);
    q.padding_high.push_back(padding[2 * d + 1]);
  }
  q.feature_group_count = p.feature_group_count;
  int64_t positions = q.output_dims[0];
  bool pointwise = !dilated_input;
  for (size_t d = 2; d < q.output_dims.size(); ++d) {
    positions *= q.output_dims[d];
    pointwise = pointwise && q.kernel_dims[d] == 1;
  }
  std::vector<exec::OneDnnLayouts> order(std::begin(kOneDnnConvolutionLayouts),
                                         std::end(kOneDnnConvolutionLayouts));
  if (pointwise && positions < kSmallPointwisePositions) {
    std::rotate(order.begin(), order.end() - 1, order.end());  // kProgram
  }
  exec::OneDnnKernel made;
  for (exec::OneDnnLayouts layouts : order) {
    q.layouts = layouts;
    made = exec::MakeOneDnnConvolutionKernel(q);
    if (made.kernel) break;
  }
  if (!made.kernel) return false;
  if (types->convert_operands) {
    input = ConvertSlot(lowering, op, input, types->lhs);
    kernel = ConvertSlot(lowering, op, kernel, types->rhs);
  }
  kernel = ReverseSlot(lowering, op, kernel, reverse);
  std::vector<SlotId> inputs = {input, kernel};
  if (bias) inputs.push_back(*bias);
  EmitOneDnnStep(lowering, op, result_value ? result_value : op.result(0),
                 std::move(made), std::move(inputs),
                 ArrayShape{types->result, result.dims}, result.type);
  return true;
}

// The transpose that is the only reader of `dot`'s result, when it puts the
// rhs free dimensions before the lhs ones and leaves the batch dimensions
// first: the dot of the swapped operands computes it directly, with no
// transposing copy. Reverse-mode JAX writes every weight gradient so:
// dot_general(dy, x) contracting the batch, then a transpose to the
// weight's [in, out] layout. Null otherwise.
const ir::Operation* SwappingTranspose(const ir::Operation& dot,
                                       const ir::DotDimensionNumbers& dn,
                                       int64_t lhs_rank, int64_t rhs_rank) {
  const ir::Operation* user = OnlyReader(dot);
  if (user == nullptr) return nullptr;
  const ir::Value* value = dot.result(0);
  // Quantized dots lower through float copies of their values
  // (Lowering::LowerQuantizedThroughFloat), which the transpose must get.
  if (!value->type().IsTensor() ||
      value->type().element().is(ir::TypeKind::kQuantized)) {
    return nullptr;
  }
  if (!user->is(ir::OpCode::kTranspose) || user->num_operands() != 1 ||
      user->operand(0) != value) {
    return nullptr;
  }
  StatusOr<std::vector<int64_t>> permutation = IntsAttr(*user, "permutation");
  const int64_t batch = dn.lhs_batching_dimensions.size();
  const int64_t lhs_free =
      lhs_rank - batch -
      static_cast<int64_t>(dn.lhs_contracting_dimensions.size());
  const int64_t rhs_free =
      rhs_rank - batch -
      static_cast<int64_t>(dn.rhs_contracting_dimensions.size());
  if (!permutation.ok() || lhs_free <= 0 || rhs_free <= 0 ||
      static_cast<int64_t>(permutation->size()) !=
          batch + lhs_free + rhs_free) {
    return nullptr;
  }
  std::vector<int64_t> swapped;
  for (int64_t d = 0; d < batch; ++d) swapped.push_back(d);
  for (int64_t d = 0; d < rhs_free; ++d)
    swapped.push_back(batch + lhs_free + d);
  for (int64_t d = 0; d < lhs_free; ++d) swapped.push_back(batch + d);
  return *permutation == swapped ? user : nullptr;
}

// A dense layer's bias: the add that is the only reader of an f32 dot's
// result (no batch dimensions), when its other operand broadcasts a vector
// along the result's trailing `rhs_free` dimensions, the rhs's free ones,
// in order. JAX writes `y @ w + b` as dot_general, broadcast_in_dim of b
// (through a [1, 1, n] one), add. `source` is the vector: the first value
// down the chain of broadcasts that is lowered already (b, an argument),
// whose elements in row-major order are the bias of each column.
// `broadcasts` are the chain's ops above it, whose copies no one may need
// once the dot adds the bias (a copy JAX placed before the dot is made all
// the same: it is dropped only if no one reads it).
struct BiasAdd {
  const ir::Operation* add = nullptr;
  SlotId source;
  std::vector<const ir::Operation*> broadcasts;
};

std::optional<BiasAdd> BiasAddOf(Lowering& lowering, const ir::Operation& dot,
                                 int64_t rhs_free) {
  const ir::Operation* add = OnlyReader(dot);
  if (add == nullptr || !add->is(ir::OpCode::kAdd) ||
      add->num_operands() != 2 || add->num_results() != 1 || rhs_free <= 0) {
    return std::nullopt;
  }
  const ir::Value* value = dot.result(0);
  const ir::Value* other =
      add->operand(0) == value ? add->operand(1) : add->operand(0);
  auto f32_array = [](const ir::Type& type) {
    return type.IsTensor() && type.HasStaticShape() &&
           type.element().is(ir::TypeKind::kElement) &&
           type.element().element_type() == ElementType::kF32;
  };
  if (other == value || !f32_array(value->type())) return std::nullopt;
  const std::vector<int64_t> result_dims = value->type().shape();
  const int64_t rank = static_cast<int64_t>(result_dims.size());
  if (rhs_free > rank) return std::nullopt;
  BiasAdd found;
  found.add = add;
  // to_result[d]: the result dimension that dimension d of `current`
  // becomes, -1 where a broadcast expands it from size 1.
  std::vector<int64_t> to_result(rank);
  for (int64_t d = 0; d < rank; ++d) to_result[d] = d;
  const ir::Value* current = other;
  while (true) {
    if (!f32_array(current->type())) return std::nullopt;
    const std::vector<int64_t> dims = current->type().shape();
    if (StatusOr<SlotId> slot = lowering.Slot(current); slot.ok()) {
      // Its dimensions of more than one element must be the trailing
      // rhs_free ones of the result, in order, at full size.
      int64_t next = rank - rhs_free;
      bool matches = true;
      for (size_t d = 0; d < dims.size() && matches; ++d) {
        if (dims[d] == 1) continue;
        int64_t target = to_result[d];
        if (target < next || dims[d] != result_dims[target]) matches = false;
        next = target + 1;
      }
      int64_t elements = 1, wanted = 1;
      for (int64_t size : dims) elements *= size;
      for (int64_t d = rank - rhs_free; d < rank; ++d) wanted *= result_dims[d];
      if (matches && elements == wanted && current != other) {
        found.source = *slot;
        return found;
      }
    }
    const ir::Operation* broadcast = current->defining_op();
    if (broadcast == nullptr || !broadcast->is(ir::OpCode::kBroadcastInDim) ||
        broadcast->num_operands() != 1) {
      return std::nullopt;
    }
    StatusOr<std::vector<int64_t>> mapping =
        IntsAttr(*broadcast, "broadcast_dimensions");
    const ir::Value* operand = broadcast->operand(0);
    if (!mapping.ok() || !f32_array(operand->type())) return std::nullopt;
    const std::vector<int64_t> operand_dims = operand->type().shape();
    if (mapping->size() != operand_dims.size()) return std::nullopt;
    std::vector<int64_t> operand_to_result(operand_dims.size());
    for (size_t d = 0; d < operand_dims.size(); ++d) {
      int64_t target = (*mapping)[d];
      if (target < 0 || target >= static_cast<int64_t>(dims.size())) {
        return std::nullopt;
      }
      operand_to_result[d] =
          operand_dims[d] == dims[target] ? to_result[target] : -1;
    }
    to_result = std::move(operand_to_result);
    found.broadcasts.push_back(broadcast);
    current = operand;
  }
}

// After `op` (a dot or convolution) was emitted computing `bias`'s add: its
// own value has no reader but the add, whose result it is bound to; the
// add is lowered ahead, and the broadcasts' copies are dropped if no one
// else reads them.
Status BindBiasAdd(Lowering& lowering, const ir::Operation& op,
                   const BiasAdd& bias) {
  ASSIGN_OR_RETURN(SlotId out, lowering.Slot(bias.add->result(0)));
  lowering.Bind(op.result(0), out);
  lowering.LowerAhead(*bias.add);
  for (const ir::Operation* broadcast : bias.broadcasts) {
    if (StatusOr<SlotId> made = lowering.Slot(broadcast->result(0));
        made.ok()) {
      lowering.NoteBypassedView(*made);
    } else {
      lowering.NoteBypassedOp(*broadcast);
    }
  }
  return OkStatus();
}

// Operand `i` of a dot_general read through the transpose that made it:
// when the operand is `transpose(x, permutation)`, the dot reads x, its
// dimension numbers for that operand mapped through the permutation, and
// the transposed copy is left to whoever else reads it (with no one, the
// step is dropped when its region is complete: Lowering::NoteBypassedView).
// Attention reads its heads so: split from [batch, sequence, heads,
// head_dim] and moved before the sequence, they are strides of the
// projection's result, not copies of it. Only where the operand's free
// dimensions keep their order, since the result's dimensions follow them.
// Updates `slot`, `batching` and `contracting`; false when it does not
// apply (nothing changed).
bool ReadThroughTranspose(Lowering& lowering, const ir::Operation& op, int i,
                          SlotId& slot, std::vector<int64_t>& batching,
                          std::vector<int64_t>& contracting) {
  const ir::Operation* transpose = op.operand(i)->defining_op();
  if (transpose == nullptr || !transpose->is(ir::OpCode::kTranspose) ||
      !op.operand(i)->type().IsTensor() ||
      op.operand(i)->type().element().is(ir::TypeKind::kQuantized)) {
    return false;
  }
  StatusOr<SlotId> source = lowering.Operand(*transpose, 0);
  StatusOr<SlotId> transposed = lowering.Slot(transpose->result(0));
  StatusOr<std::vector<int64_t>> permutation =
      IntsAttr(*transpose, "permutation");
  if (!source.ok() || !transposed.ok() || !permutation.ok()) return false;
  // A transpose a dot lowered ahead (SwappingTranspose) has no copy: its
  // operand, that dot's value, is bound to the transposed slot itself.
  if (*source == *transposed) return false;
  const int64_t rank = lowering.shape(*source).rank();
  const std::vector<int64_t>& p = *permutation;
  if (static_cast<int64_t>(p.size()) != rank) return false;
  // The dimension numbers are checked later, on whichever operand the dot
  // reads: out-of-range ones are left for that check to report.
  std::vector<bool> listed(rank, false);
  for (const std::vector<int64_t>* dims : {&batching, &contracting}) {
    for (int64_t d : *dims) {
      if (d < 0 || d >= rank || listed[d]) return false;
      listed[d] = true;
    }
  }
  int64_t last_free = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (listed[d]) continue;
    if (p[d] < last_free) return false;
    last_free = p[d];
  }
  for (std::vector<int64_t>* dims : {&batching, &contracting}) {
    for (int64_t& d : *dims) d = p[d];
  }
  slot = *source;
  lowering.NoteBypassedView(*transposed);
  return true;
}

Status LowerDotGeneral(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId lhs, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId rhs, lowering.Operand(op, 1));
  ir::Attribute dn = op.GetAttr("dot_dimension_numbers");
  if (!dn.is(ir::AttrKind::kDotDimensionNumbers)) {
    return InvalidArgumentError(op.Describe(),
                                ": missing dot_dimension_numbers");
  }
  ir::DotDimensionNumbers numbers = dn.dot();
  ReadThroughTranspose(lowering, op, 0, lhs, numbers.lhs_batching_dimensions,
                       numbers.lhs_contracting_dimensions);
  ReadThroughTranspose(lowering, op, 1, rhs, numbers.rhs_batching_dimensions,
                       numbers.rhs_contracting_dimensions);
  if (const ir::Operation* transpose =
          SwappingTranspose(op, numbers, lowering.shape(lhs).rank(),
                            lowering.shape(rhs).rank())) {
    ir::DotDimensionNumbers swapped{
        numbers.rhs_batching_dimensions, numbers.lhs_batching_dimensions,
        numbers.rhs_contracting_dimensions, numbers.lhs_contracting_dimensions};
    RETURN_IF_ERROR(
        EmitDotGeneral(lowering, op, *transpose, rhs, lhs, swapped));
    // The dot's own value has no reader but the transpose, which now reads
    // nothing; it is bound to the transposed slot only so that every result
    // of the op is bound.
    ASSIGN_OR_RETURN(SlotId out, lowering.Slot(transpose->result(0)));
    lowering.Bind(op.result(0), out);
    lowering.LowerAhead(*transpose);
    return OkStatus();
  }
  if (lowering.fuse_elementwise() && numbers.lhs_batching_dimensions.empty()) {
    const int64_t rhs_free =
        lowering.shape(rhs).rank() -
        static_cast<int64_t>(numbers.rhs_contracting_dimensions.size());
    if (std::optional<BiasAdd> bias = BiasAddOf(lowering, op, rhs_free)) {
      bool emitted = false;
      RETURN_IF_ERROR(EmitDotGeneral(lowering, op, *bias->add, lhs, rhs,
                                     numbers, bias->source, &emitted));
      if (emitted) return BindBiasAdd(lowering, op, *bias);
    }
  }
  return EmitDotGeneral(lowering, op, op, lhs, rhs, numbers);
}

Status LowerDot(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId lhs, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId rhs, lowering.Operand(op, 1));
  int64_t lhs_rank = lowering.shape(lhs).rank();
  if (lhs_rank < 1 || lowering.shape(rhs).rank() < 1) {
    return InvalidArgumentError(op.Describe(),
                                ": operands must have rank 1 or 2");
  }
  ir::DotDimensionNumbers dn;
  dn.lhs_contracting_dimensions = {lhs_rank - 1};
  dn.rhs_contracting_dimensions = {0};
  return EmitDotGeneral(lowering, op, op, lhs, rhs, dn);
}

Status LowerConvolution(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId kernel_slot, lowering.Operand(op, 1));
  ir::Attribute dn_attr = op.GetAttr("dimension_numbers");
  if (!dn_attr.is(ir::AttrKind::kConvDimensionNumbers)) {
    return InvalidArgumentError(op.Describe(), ": missing dimension_numbers");
  }
  const ir::ConvDimensionNumbers& dn = dn_attr.conv();
  ArrayShape in = lowering.shape(input), ker = lowering.shape(kernel_slot);
  int64_t spatial = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  if (in.rank() != spatial + 2 || ker.rank() != spatial + 2 ||
      static_cast<int64_t>(dn.kernel_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(dn.output_spatial_dimensions.size()) != spatial) {
    return InvalidArgumentError(op.Describe(),
                                ": dimension numbers do not match ",
                                in.ToString(), " and ", ker.ToString());
  }
  std::vector<int64_t> in_perm{dn.input_batch_dimension,
                               dn.input_feature_dimension};
  in_perm.insert(in_perm.end(), dn.input_spatial_dimensions.begin(),
                 dn.input_spatial_dimensions.end());
  std::vector<int64_t> ker_perm{dn.kernel_output_feature_dimension,
                                dn.kernel_input_feature_dimension};
  ker_perm.insert(ker_perm.end(), dn.kernel_spatial_dimensions.begin(),
                  dn.kernel_spatial_dimensions.end());
  std::vector<int64_t> out_perm{dn.output_batch_dimension,
                                dn.output_feature_dimension};
  out_perm.insert(out_perm.end(), dn.output_spatial_dimensions.begin(),
                  dn.output_spatial_dimensions.end());
  RETURN_IF_ERROR(
      CheckDistinctDims(op, in_perm, in.rank(), "input dimensions"));
  RETURN_IF_ERROR(
      CheckDistinctDims(op, ker_perm, ker.rank(), "kernel dimensions"));
  RETURN_IF_ERROR(
      CheckDistinctDims(op, out_perm, in.rank(), "output dimensions"));

  std::vector<int64_t> ones(spatial, 1);
  exec::ConvolutionParams p;
  ASSIGN_OR_RETURN(p.strides, IntsAttr(op, "window_strides", ones));
  ASSIGN_OR_RETURN(p.lhs_dilation, IntsAttr(op, "lhs_dilation", ones));
  ASSIGN_OR_RETURN(p.rhs_dilation, IntsAttr(op, "rhs_dilation", ones));
  std::vector<int64_t> padding;
  if (op.is(OpCode::kDynamicConv)) {
    ASSIGN_OR_RETURN(padding, lowering.RequireConstantInts(op, 2, "padding"));
  } else {
    ASSIGN_OR_RETURN(
        padding, IntsAttr(op, "padding", std::vector<int64_t>(2 * spatial, 0)));
  }
  ir::Attribute reversal = op.GetAttr("window_reversal");
  p.reversal.assign(spatial, false);
  if (reversal.is(ir::AttrKind::kDenseArray)) {
    for (int64_t d = 0; d < spatial && d < reversal.dense_array_size(); ++d) {
      p.reversal[d] = reversal.dense_ints()[d] != 0;
    }
  } else if (auto values = reversal.AsIntVector()) {
    for (int64_t d = 0; d < spatial && d < static_cast<int64_t>(values->size());
         ++d) {
      p.reversal[d] = (*values)[d] != 0;
    }
  }
  ASSIGN_OR_RETURN(p.feature_group_count,
                   IntAttr(op, "feature_group_count", 1));
  ASSIGN_OR_RETURN(p.batch_group_count, IntAttr(op, "batch_group_count", 1));
  // One window entry per spatial dimension (two for padding). The message
  // names the attribute that is off: JAX once exported a 1-D dynamic_conv
  // with two strides.
  auto wrong_size = [&](std::string_view name, size_t count) {
    return InvalidArgumentError(op.Describe(), ": ", name, " has ", count,
                                " values for ", spatial, " spatial dimension",
                                spatial == 1 ? "" : "s");
  };
  const size_t window_size = static_cast<size_t>(spatial);
  if (p.strides.size() != window_size)
    return wrong_size("window_strides", p.strides.size());
  if (p.lhs_dilation.size() != window_size)
    return wrong_size("lhs_dilation", p.lhs_dilation.size());
  if (p.rhs_dilation.size() != window_size)
    return wrong_size("rhs_dilation", p.rhs_dilation.size());
  if (padding.size() != 2 * window_size)
    return wrong_size("padding (low and high per dimension)", padding.size());
  if (p.feature_group_count < 1 || p.batch_group_count < 1) {
    return InvalidArgumentError(
        op.Describe(), ": feature_group_count (", p.feature_group_count,
        ") and batch_group_count (", p.batch_group_count, ") must be positive");
  }
  int64_t batch = in.dims[dn.input_batch_dimension];
  int64_t features = in.dims[dn.input_feature_dimension];
  int64_t kernel_in = ker.dims[dn.kernel_input_feature_dimension];
  int64_t kernel_out = ker.dims[dn.kernel_output_feature_dimension];
  if (batch % p.batch_group_count != 0 ||
      kernel_out % p.batch_group_count != 0 ||
      features % p.feature_group_count != 0 ||
      kernel_out % p.feature_group_count != 0 ||
      features != kernel_in * p.feature_group_count) {
    return InvalidArgumentError(op.Describe(),
                                ": feature/batch groups do not divide ",
                                in.ToString(), " and ", ker.ToString());
  }
  std::vector<int64_t> canonical_out{batch / p.batch_group_count, kernel_out};
  for (int64_t d = 0; d < spatial; ++d) {
    if (p.strides[d] <= 0 || p.lhs_dilation[d] <= 0 || p.rhs_dilation[d] <= 0) {
      return InvalidArgumentError(op.Describe(),
                                  ": strides and dilations must be positive");
    }
    int64_t size = in.dims[dn.input_spatial_dimensions[d]];
    int64_t padded = (size == 0 ? 0 : (size - 1) * p.lhs_dilation[d] + 1) +
                     padding[2 * d] + padding[2 * d + 1];
    int64_t window =
        (ker.dims[dn.kernel_spatial_dimensions[d]] - 1) * p.rhs_dilation[d] + 1;
    canonical_out.push_back(
        padded < window ? 0 : (padded - window) / p.strides[d] + 1);
    p.padding_low.push_back(padding[2 * d]);
  }
  // The result in the program's layout: canonical dim i goes to out_perm[i].
  std::vector<int64_t> result_dims(in.rank());
  for (int64_t i = 0; i < in.rank(); ++i)
    result_dims[out_perm[i]] = canonical_out[i];
  ASSIGN_OR_RETURN(ArrayShape result, lowering.ResultShape(op, 0, result_dims));
  double multiply_adds = static_cast<double>(kernel_in);
  for (int64_t d : result_dims) multiply_adds *= d;
  for (int64_t d : dn.kernel_spatial_dimensions) multiply_adds *= ker.dims[d];
  if (lowering.UseOneDnnFor(multiply_adds)) {
    // A bias per output feature, added by the add that alone reads the
    // result (`conv + b` as JAX writes it), when the feature dimension is
    // the result's last (NHWC): the primitive adds it as it writes.
    if (lowering.fuse_elementwise() && out_perm[1] == in.rank() - 1) {
      if (std::optional<BiasAdd> bias = BiasAddOf(lowering, op, 1)) {
        if (EmitOneDnnConvolution(lowering, op, input, kernel_slot, in_perm,
                                  ker_perm, out_perm, p, padding, result,
                                  bias->source, bias->add->result(0))) {
          return BindBiasAdd(lowering, op, *bias);
        }
      }
    }
    if (EmitOneDnnConvolution(lowering, op, input, kernel_slot, in_perm,
                              ker_perm, out_perm, p, padding, result)) {
      return OkStatus();
    }
  }
  p.type = exec::ComputeType(result.type);
  SlotId a = TransposeSlot(lowering, op,
                           ConvertSlot(lowering, op, input, p.type), in_perm);
  SlotId b = TransposeSlot(
      lowering, op, ConvertSlot(lowering, op, kernel_slot, p.type), ker_perm);
  p.input_dims = lowering.shape(a).dims;
  p.kernel_dims = lowering.shape(b).dims;
  p.output_dims = canonical_out;
  ElementType compute = p.type;
  auto kernel = exec::MakeConvolutionKernel(std::move(p));
  if (!kernel) return UnsupportedType(op, result.type);
  SlotId out = lowering.NewTemp(ArrayShape{compute, canonical_out});
  lowering.Emit(op, std::move(kernel), {a, b}, {out});
  // Back to the program's layout: result dim out_perm[i] is canonical dim i.
  std::vector<int64_t> inverse(in.rank());
  for (int64_t i = 0; i < in.rank(); ++i) inverse[out_perm[i]] = i;
  SlotId permuted = TransposeSlot(lowering, op, out, inverse);
  lowering.Bind(op.result(0), ConvertSlot(lowering, op, permuted, result.type));
  return OkStatus();
}

}  // namespace

Status CheckDistinctDims(const ir::Operation& op,
                         const std::vector<int64_t>& dims, int64_t rank,
                         std::string_view what) {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || !seen.insert(d).second) {
      return InvalidArgumentError(op.Describe(), ": bad ", what, " [",
                                  StrJoin(dims, ", "), "] for rank ", rank);
    }
  }
  return OkStatus();
}

void RegisterDotLowerings() {
  RegisterLowering(OpCode::kDotGeneral, LowerDotGeneral);
  RegisterLowering(OpCode::kDot, LowerDot);
  RegisterLowering(OpCode::kConvolution, LowerConvolution);
  RegisterLowering(OpCode::kDynamicConv, LowerConvolution);
}

}  // namespace kiln::compile
