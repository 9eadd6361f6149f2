// Lowering of fft, random numbers, linear algebra, batch norm and the
// process ids (collectives are in lower_collectives.cc).
#include <cstring>

#include "compile/lower_families.h"
#include "exec/kernels/batch_norm.h"
#include "exec/kernels/copy.h"
#include "exec/kernels/element.h"
#include "exec/kernels/fft.h"
#include "exec/kernels/linalg.h"
#include "exec/kernels/rng.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

Status LowerFft(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ir::Attribute type = op.GetAttr("fft_type");
  if (!type.is(ir::AttrKind::kEnum) || type.enum_value() < 0 ||
      type.enum_value() > 3) {
    return InvalidArgumentError(op.Describe(), ": missing fft_type");
  }
  auto kind = static_cast<exec::FftKind>(type.enum_value());
  ASSIGN_OR_RETURN(std::vector<int64_t> lengths, IntsAttr(op, "fft_length"));
  ArrayShape in = lowering.shape(operand);
  int64_t fft_rank = static_cast<int64_t>(lengths.size());
  if (fft_rank < 1 || fft_rank > 3 || fft_rank > in.rank()) {
    return InvalidArgumentError(op.Describe(), ": fft_length [",
                                StrJoin(lengths, ", "), "] does not fit ",
                                in.ToString());
  }
  std::vector<int64_t> result_dims = in.dims;
  for (int64_t i = 0; i < fft_rank; ++i) {
    int64_t d = in.rank() - fft_rank + i;
    int64_t expected = lengths[i];
    if (i == fft_rank - 1 && kind == exec::FftKind::kIrfft)
      expected = lengths[i] / 2 + 1;
    if (in.dims[d] != expected) {
      return InvalidArgumentError(op.Describe(), ": dimension ", d, " of ",
                                  in.ToString(), " should be ", expected);
    }
  }
  if (kind == exec::FftKind::kRfft) result_dims.back() = lengths.back() / 2 + 1;
  if (kind == exec::FftKind::kIrfft) result_dims.back() = lengths.back();
  bool real_input = kind == exec::FftKind::kRfft;
  if (real_input ? !ir::IsFloat(in.type) : !ir::IsComplex(in.type)) {
    return UnsupportedType(op, in.type);
  }
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, result_dims));
  lowering.Emit(op, exec::MakeFftKernel(kind, in, lowering.shape(out), lengths),
                {operand}, {out});
  return OkStatus();
}

Status LowerRngBitGenerator(Lowering& lowering, const ir::Operation& op) {
  return EmitRngBitGenerator(lowering, op, std::nullopt);
}

Status LowerRng(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId a, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId b, lowering.Operand(op, 1));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   lowering.RequireConstantInts(op, 2, "the shape"));
  ir::Attribute distribution = op.GetAttr("rng_distribution");
  bool normal = distribution.is(ir::AttrKind::kEnum) &&
                distribution.enum_value() == ir::kNormal;
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, dims));
  lowering.Emit(op, exec::MakeRngKernel(normal, lowering.shape(out)), {a, b},
                {out},
                /*foldable=*/false);
  return OkStatus();
}

// Batch dimensions and the trailing matrix of a linear-algebra operand.
struct Batched {
  int64_t batch = 1;
  int64_t rows = 0, cols = 0;
};

StatusOr<Batched> MatrixDims(const ir::Operation& op, const ArrayShape& shape) {
  if (shape.rank() < 2) {
    return InvalidArgumentError(op.Describe(), ": ", shape.ToString(),
                                " is not a batch of matrices");
  }
  Batched b;
  for (int64_t d = 0; d + 2 < shape.rank(); ++d) b.batch *= shape.dims[d];
  b.rows = shape.dims[shape.rank() - 2];
  b.cols = shape.dims[shape.rank() - 1];
  return b;
}

Status LowerCholesky(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId a, lowering.Operand(op, 0));
  ArrayShape shape = lowering.shape(a);
  ASSIGN_OR_RETURN(Batched dims, MatrixDims(op, shape));
  if (dims.rows != dims.cols) {
    return InvalidArgumentError(op.Describe(), ": ", shape.ToString(),
                                " is not square");
  }
  ElementType compute = exec::ComputeType(shape.type);
  auto kernel = exec::MakeCholeskyKernel(compute, dims.batch, dims.rows,
                                         BoolAttr(op, "lower"));
  if (!kernel) return UnsupportedType(op, shape.type);
  SlotId input = ConvertSlot(lowering, op, a, compute);
  SlotId out = lowering.NewTemp(ArrayShape{compute, shape.dims});
  lowering.Emit(op, std::move(kernel), {input}, {out});
  lowering.Bind(op.result(0), ConvertSlot(lowering, op, out, shape.type));
  return OkStatus();
}

Status LowerTriangularSolve(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId a, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId b, lowering.Operand(op, 1));
  ArrayShape a_shape = lowering.shape(a), b_shape = lowering.shape(b);
  ASSIGN_OR_RETURN(Batched a_dims, MatrixDims(op, a_shape));
  ASSIGN_OR_RETURN(Batched b_dims, MatrixDims(op, b_shape));
  exec::TriangularSolveParams p;
  p.left_side = BoolAttr(op, "left_side");
  p.lower = BoolAttr(op, "lower");
  p.unit_diagonal = BoolAttr(op, "unit_diagonal");
  ir::Attribute transpose = op.GetAttr("transpose_a");
  p.transpose = transpose.is(ir::AttrKind::kEnum)
                    ? static_cast<int>(transpose.enum_value())
                    : 1;
  if (p.transpose < 1 || p.transpose > 3) p.transpose = 1;
  int64_t m = a_dims.rows;
  if (a_dims.rows != a_dims.cols || a_dims.batch != b_dims.batch ||
      (p.left_side ? b_dims.rows : b_dims.cols) != m) {
    return InvalidArgumentError(op.Describe(), ": ", a_shape.ToString(),
                                " and ", b_shape.ToString(), " do not match");
  }
  p.type = exec::ComputeType(b_shape.type);
  if (p.type == ElementType::kF32) p.type = ElementType::kF64;
  p.batch = b_dims.batch;
  p.m = m;
  p.rows = b_dims.rows;
  p.cols = b_dims.cols;
  ElementType compute = p.type;
  auto kernel = exec::MakeTriangularSolveKernel(p);
  if (!kernel) return UnsupportedType(op, b_shape.type);
  SlotId lhs = ConvertSlot(lowering, op, a, compute);
  SlotId rhs = ConvertSlot(lowering, op, b, compute);
  SlotId out = lowering.NewTemp(ArrayShape{compute, b_shape.dims});
  lowering.Emit(op, std::move(kernel), {lhs, rhs}, {out});
  lowering.Bind(op.result(0), ConvertSlot(lowering, op, out, b_shape.type));
  return OkStatus();
}

// replica_id / partition_id: the position the plan is compiled for (a
// ui32 scalar).
Status LowerProcessId(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(ArrayShape shape, lowering.ResultShape(op, 0));
  const ProcessPosition& position = lowering.position();
  uint32_t id = static_cast<uint32_t>(
      op.is(OpCode::kReplicaId) ? position.replica_id : position.partition_id);
  std::string bytes(shape.byte_size(), '\0');
  if (bytes.size() >= sizeof(id)) std::memcpy(bytes.data(), &id, sizeof(id));
  ASSIGN_OR_RETURN(SlotId constant, lowering.NewConstant(shape, bytes));
  lowering.Bind(op.result(0), constant);
  return OkStatus();
}

Status LowerUnsupportedIo(Lowering& lowering, const ir::Operation& op) {
  return UnimplementedError(
      op.Describe(), ": ", op.name(),
      " needs the host's feed queues, which Kiln does not provide");
}

Status LowerBatchNorm(Lowering& lowering, const ir::Operation& op) {
  exec::BatchNormKind kind =
      op.is(OpCode::kBatchNormInference)  ? exec::BatchNormKind::kInference
      : op.is(OpCode::kBatchNormTraining) ? exec::BatchNormKind::kTraining
                                          : exec::BatchNormKind::kGrad;
  int expected_operands = kind == exec::BatchNormKind::kTraining ? 3 : 5;
  if (op.num_operands() != expected_operands) {
    return InvalidArgumentError(op.Describe(), ": expected ", expected_operands,
                                " operands");
  }
  std::vector<SlotId> inputs;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, i));
    inputs.push_back(input);
  }
  ArrayShape operand = lowering.shape(inputs[0]);
  ASSIGN_OR_RETURN(int64_t feature_index, IntAttr(op, "feature_index"));
  ir::Attribute epsilon = op.GetAttr("epsilon");
  if (feature_index < 0 || feature_index >= operand.rank() ||
      !ir::IsFloat(operand.type) || !epsilon.is(ir::AttrKind::kFloat)) {
    return InvalidArgumentError(op.Describe(),
                                ": bad feature_index or epsilon for ",
                                operand.ToString());
  }
  int64_t features = operand.dims[feature_index];
  for (int i = 1; i < op.num_operands(); ++i) {
    ArrayShape shape = lowering.shape(inputs[i]);
    bool full = kind == exec::BatchNormKind::kGrad && i == 4;
    if (shape.type != operand.type ||
        (full ? shape.dims != operand.dims
              : shape.dims != std::vector<int64_t>{features})) {
      return InvalidArgumentError(op.Describe(), ": operand ", i, " ",
                                  shape.ToString(), " does not match ",
                                  operand.ToString());
    }
  }
  std::vector<SlotId> outputs;
  for (int i = 0; i < op.num_results(); ++i) {
    std::vector<int64_t> dims =
        i == 0 ? operand.dims : std::vector<int64_t>{features};
    ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, i, dims));
    outputs.push_back(out);
  }
  lowering.Emit(op,
                exec::MakeBatchNormKernel(kind, operand, feature_index,
                                          epsilon.float_value()),
                std::move(inputs), std::move(outputs));
  return OkStatus();
}

}  // namespace

Status EmitRngBitGenerator(Lowering& lowering, const ir::Operation& op,
                           std::optional<std::vector<int64_t>> bits_dims) {
  ASSIGN_OR_RETURN(SlotId state, lowering.Operand(op, 0));
  ArrayShape state_shape = lowering.shape(state);
  ir::Attribute algorithm = op.GetAttr("rng_algorithm");
  int64_t value =
      algorithm.is(ir::AttrKind::kEnum) ? algorithm.enum_value() : 0;
  // DEFAULT is Philox, as on XLA's CPU backend.
  exec::RngAlgorithm kind = value == ir::kThreeFry
                                ? exec::RngAlgorithm::kThreeFry
                                : exec::RngAlgorithm::kPhilox;
  int64_t size = state_shape.num_elements();
  if (ir::BitWidth(state_shape.type) != 64 || state_shape.rank() != 1 ||
      (kind == exec::RngAlgorithm::kThreeFry ? size != 2
                                             : (size != 2 && size != 3))) {
    return InvalidArgumentError(op.Describe(), ": state ",
                                state_shape.ToString(),
                                " does not fit the algorithm");
  }
  ASSIGN_OR_RETURN(SlotId new_state,
                   lowering.NewResult(op, 0, state_shape.dims));
  ASSIGN_OR_RETURN(SlotId bits, lowering.NewResult(op, 1, std::move(bits_dims)));
  ArrayShape bits_shape = lowering.shape(bits);
  int width = ir::BitWidth(bits_shape.type);
  if (width != 64 && width != 32 && width != 16 && width != 8) {
    return UnsupportedType(op, bits_shape.type);
  }
  lowering.Emit(op, exec::MakeRngBitGeneratorKernel(kind, size, bits_shape),
                {state}, {new_state, bits});
  return OkStatus();
}

void RegisterMiscLowerings() {
  for (OpCode code : {OpCode::kBatchNormInference, OpCode::kBatchNormTraining,
                      OpCode::kBatchNormGrad}) {
    RegisterLowering(code, LowerBatchNorm);
  }
  RegisterLowering(OpCode::kFft, LowerFft);
  RegisterLowering(OpCode::kRngBitGenerator, LowerRngBitGenerator);
  RegisterLowering(OpCode::kRng, LowerRng);
  RegisterLowering(OpCode::kCholesky, LowerCholesky);
  RegisterLowering(OpCode::kTriangularSolve, LowerTriangularSolve);
  RegisterLowering(OpCode::kReplicaId, LowerProcessId);
  RegisterLowering(OpCode::kPartitionId, LowerProcessId);
  for (OpCode code : {OpCode::kInfeed, OpCode::kOutfeed}) {
    RegisterLowering(code, LowerUnsupportedIo);
  }
}

}  // namespace kiln::compile
