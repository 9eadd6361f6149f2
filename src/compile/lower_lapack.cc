// Lowering of JAX's LAPACK FFI targets, lapack_{s,d,c,z}<routine>_ffi, the
// custom calls JAX's `cpu` lowering rules emit for linear algebra, to the
// kernels of exec/kernels/lapack.h.
//
// The FFI contract (jaxlib/cpu/lapack_kernels.cc): operands and results in
// a fixed order, attributes in `mhlo.backend_config` (characters as ui8:
// uplo 'L'/'U', mode 'V'/'N', ...), leading batch dimensions, and matrices
// in column-major layout (the arrays of the largest rank carry
// operand/result layout {r-2, r-1, r-3, ..., 0}, the others the default).
// Kiln's arrays are row-major and its kernels read logical elements, so a
// call with exactly those layouts (or none) means what it means to XLA;
// any other layout is refused rather than silently reinterpreted.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compile/custom_call.h"
#include "compile/lower_families.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/linalg.h"

namespace kiln::compile {
namespace {

ElementType RealTypeOf(ElementType type) {
  if (type == ElementType::kC64) return ElementType::kF32;
  if (type == ElementType::kC128) return ElementType::kF64;
  return type;
}

ElementType ComplexTypeOf(ElementType type) {
  if (type == ElementType::kF32) return ElementType::kC64;
  if (type == ElementType::kF64) return ElementType::kC128;
  return type;
}

// One FFI call being lowered: checks shared by every routine, and the
// results it creates.
class FfiCall {
 public:
  FfiCall(Lowering& lowering, const ir::Operation& op, ElementType type)
      : lowering_(lowering), op_(op), type_(type) {
    config_ = op.GetAttr("mhlo.backend_config");
    if (!config_.is(ir::AttrKind::kDictionary)) {
      config_ = op.GetAttr("backend_config");
    }
  }

  ElementType type() const { return type_; }
  ElementType real_type() const { return RealTypeOf(type_); }
  ElementType complex_type() const { return ComplexTypeOf(type_); }
  bool is_complex() const { return ir::IsComplex(type_); }
  // The batch dimensions (those of operand 0 before its last `matrix_rank`).
  const std::vector<int64_t>& batch_dims() const { return batch_; }
  int64_t batch() const { return exec::NumElements(batch_); }

  template <typename... Args>
  Status Error(const Args&... args) const {
    return InvalidArgumentError(op_.Describe(), ": ", args...);
  }

  // Checks the operand and result counts and the layouts; operand 0 (a
  // batch of `matrix_rank`-dimensional arrays) fixes the batch dimensions.
  Status Begin(int operands, int results, int matrix_rank = 2) {
    if (op_.num_operands() != operands || op_.num_results() != results) {
      return Error("expects ", operands, " operands and ", results,
                   " results, got ", op_.num_operands(), " and ",
                   op_.num_results());
    }
    ASSIGN_OR_RETURN(SlotId first, lowering_.Operand(op_, 0));
    ArrayShape shape = lowering_.shape(first);
    if (shape.rank() < matrix_rank) {
      return Error("operand 0 ", shape.ToString(), " has fewer than ",
                   matrix_rank, " dimensions");
    }
    batch_.assign(shape.dims.begin(), shape.dims.end() - matrix_rank);
    return CheckLayouts();
  }

  // Operand i, of element type `type` and shape batch + `dims`.
  StatusOr<SlotId> Operand(int i, ElementType type,
                           const std::vector<int64_t>& dims) const {
    ASSIGN_OR_RETURN(SlotId slot, lowering_.Operand(op_, i));
    ArrayShape shape = lowering_.shape(slot);
    ArrayShape expected{type, Dims(dims)};
    if (shape != expected) {
      return Error("operand ", i, " is ", shape.ToString(), ", expected ",
                   expected.ToString());
    }
    return slot;
  }

  // The trailing dimensions of operand i (of any shape batch + `rank` dims
  // and element type `type`).
  StatusOr<std::vector<int64_t>> OperandDims(int i, ElementType type,
                                             int64_t rank) const {
    ASSIGN_OR_RETURN(SlotId slot, lowering_.Operand(op_, i));
    ArrayShape shape = lowering_.shape(slot);
    int64_t batch_rank = static_cast<int64_t>(batch_.size());
    if (shape.type != type || shape.rank() != batch_rank + rank ||
        !std::equal(batch_.begin(), batch_.end(), shape.dims.begin())) {
      return Error("operand ", i, " is ", shape.ToString(), ", expected ",
                   ir::ElementTypeName(type), " with batch dimensions [",
                   StrJoin(batch_, ", "), "] and ", rank, " more");
    }
    return std::vector<int64_t>(shape.dims.begin() + batch_rank,
                                shape.dims.end());
  }

  // Result i: a new slot of element type `type` and shape batch + `dims`.
  StatusOr<SlotId> Result(int i, ElementType type,
                          const std::vector<int64_t>& dims) {
    ASSIGN_OR_RETURN(SlotId slot, lowering_.NewResult(op_, i, Dims(dims)));
    if (lowering_.shape(slot).type != type) {
      return Error("result ", i, " is ", lowering_.shape(slot).ToString(),
                   ", expected element type ", ir::ElementTypeName(type));
    }
    return slot;
  }

  // The trailing dimensions of result i as the IR declares them.
  StatusOr<std::vector<int64_t>> ResultDims(int i, int64_t rank) const {
    ASSIGN_OR_RETURN(ArrayShape shape, lowering_.ResultShape(op_, i));
    int64_t batch_rank = static_cast<int64_t>(batch_.size());
    if (shape.rank() != batch_rank + rank) {
      return Error("result ", i, " is ", shape.ToString(), ", expected ",
                   batch_rank + rank, " dimensions");
    }
    return std::vector<int64_t>(shape.dims.begin() + batch_rank,
                                shape.dims.end());
  }

  // A character attribute (ui8) among `allowed`.
  StatusOr<char> CharAttr(std::string_view name,
                          std::string_view allowed) const {
    ir::Attribute attr = Attr(name);
    if (!attr.is(ir::AttrKind::kInteger)) {
      return Error("attribute ", name, " (one of '", allowed,
                   "' as ui8) is missing");
    }
    int64_t value = attr.int_value();
    if (value <= 0 || value > 127 ||
        allowed.find(static_cast<char>(value)) == std::string_view::npos) {
      return Error("attribute ", name, " = ", value, " is not one of '",
                   allowed, "'");
    }
    return static_cast<char>(value);
  }

  StatusOr<bool> BoolAttr(std::string_view name) const {
    ir::Attribute attr = Attr(name);
    if (attr.is(ir::AttrKind::kBool)) return attr.bool_value();
    if (attr.is(ir::AttrKind::kInteger)) return attr.int_value() != 0;
    return Error("bool attribute ", name, " is missing");
  }

  StatusOr<int64_t> IntAttr(std::string_view name) const {
    ir::Attribute attr = Attr(name);
    if (!attr.is(ir::AttrKind::kInteger)) {
      return Error("integer attribute ", name, " is missing");
    }
    return attr.int_value();
  }

  void Emit(std::unique_ptr<exec::Kernel> kernel, std::vector<SlotId> inputs,
            std::vector<SlotId> outputs) {
    lowering_.Emit(op_, std::move(kernel), std::move(inputs),
                   std::move(outputs));
  }

 private:
  std::vector<int64_t> Dims(const std::vector<int64_t>& tail) const {
    std::vector<int64_t> dims = batch_;
    dims.insert(dims.end(), tail.begin(), tail.end());
    return dims;
  }

  ir::Attribute Attr(std::string_view name) const {
    return config_.is(ir::AttrKind::kDictionary) ? config_.Get(name)
                                                 : ir::Attribute();
  }

  Status CheckLayouts() const {
    int64_t max_rank = 0;
    std::vector<int64_t> operand_ranks, result_ranks;
    for (int i = 0; i < op_.num_operands(); ++i) {
      ASSIGN_OR_RETURN(SlotId slot, lowering_.Operand(op_, i));
      operand_ranks.push_back(lowering_.shape(slot).rank());
      max_rank = std::max(max_rank, operand_ranks.back());
    }
    for (int i = 0; i < op_.num_results(); ++i) {
      ASSIGN_OR_RETURN(ArrayShape shape, lowering_.ResultShape(op_, i));
      result_ranks.push_back(shape.rank());
    }
    RETURN_IF_ERROR(
        CheckLayoutList("operand_layouts", "operand", operand_ranks, max_rank));
    return CheckLayoutList("result_layouts", "result", result_ranks, max_rank);
  }

  Status CheckLayoutList(std::string_view attr_name, std::string_view what,
                         const std::vector<int64_t>& ranks,
                         int64_t max_rank) const {
    ir::Attribute layouts = op_.GetAttr(attr_name);
    if (!layouts) return OkStatus();
    if (!layouts.is(ir::AttrKind::kArray) ||
        layouts.array().size() != ranks.size()) {
      return Error(attr_name, " does not hold one layout per ", what);
    }
    for (size_t i = 0; i < ranks.size(); ++i) {
      int64_t rank = ranks[i];
      // Column-major matrices for the arrays of the largest rank, the
      // default (row-major) layout for the others.
      std::vector<int64_t> expected;
      if (rank == max_rank && rank >= 2) {
        expected = {rank - 2, rank - 1};
        for (int64_t d = rank - 3; d >= 0; --d) expected.push_back(d);
      } else {
        for (int64_t d = rank - 1; d >= 0; --d) expected.push_back(d);
      }
      std::optional<std::vector<int64_t>> layout =
          layouts.array()[i].AsIntVector();
      if (!layout || *layout != expected) {
        return Error(what, " ", i, " layout ", layouts.array()[i].ToString(),
                     " is not the LAPACK FFI layout [", StrJoin(expected, ", "),
                     "]");
      }
    }
    return OkStatus();
  }

  Lowering& lowering_;
  const ir::Operation& op_;
  ElementType type_;
  ir::Attribute config_;
  std::vector<int64_t> batch_;
};

// The trailing two dimensions of operand 0.
StatusOr<std::pair<int64_t, int64_t>> MatrixOperand(FfiCall& call) {
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   call.OperandDims(0, call.type(), 2));
  return std::make_pair(dims[0], dims[1]);
}

// Operand 0 as a batch of square matrices; returns n.
StatusOr<int64_t> SquareOperand(FfiCall& call) {
  ASSIGN_OR_RETURN(auto dims, MatrixOperand(call));
  if (dims.first != dims.second) {
    return call.Error("operand 0 is not a batch of square matrices");
  }
  return dims.first;
}

// Max(n - 1, 0): the length of taus and off-diagonals.
int64_t Minus1(int64_t n) { return n > 0 ? n - 1 : 0; }

Status LowerGetrf(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 3));
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId lu, call.Result(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId ipiv,
                   call.Result(1, ElementType::kI32, {std::min(m, n)}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(2, ElementType::kI32, {}));
  call.Emit(exec::MakeGetrfKernel(call.type(), call.batch(), m, n), {a},
            {lu, ipiv, info});
  return OkStatus();
}

Status LowerGeqrf(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 2));
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId tau, call.Result(1, call.type(), {std::min(m, n)}));
  call.Emit(exec::MakeGeqrfKernel(call.type(), call.batch(), m, n), {a},
            {out, tau});
  return OkStatus();
}

Status LowerGeqp3(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(2, 3));
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId jpvt, call.Operand(1, ElementType::kI32, {n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId jpvt_out, call.Result(1, ElementType::kI32, {n}));
  ASSIGN_OR_RETURN(SlotId tau, call.Result(2, call.type(), {std::min(m, n)}));
  call.Emit(exec::MakeGeqp3Kernel(call.type(), call.batch(), m, n), {a, jpvt},
            {out, jpvt_out, tau});
  return OkStatus();
}

Status LowerOrgqr(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(2, 1));
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  ASSIGN_OR_RETURN(std::vector<int64_t> tau_dims,
                   call.OperandDims(1, call.type(), 1));
  int64_t k = tau_dims[0];
  if (!(m >= n && n >= k)) {
    return call.Error("needs rows >= columns >= reflectors, got ", m, "x", n,
                      " and ", k, " reflectors");
  }
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId tau, call.Operand(1, call.type(), {k}));
  ASSIGN_OR_RETURN(SlotId q, call.Result(0, call.type(), {m, n}));
  call.Emit(exec::MakeOrgqrKernel(call.type(), call.batch(), m, n, k), {a, tau},
            {q});
  return OkStatus();
}

Status LowerOrmqr(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(3, 1));
  exec::OrmqrParams p;
  p.type = call.type();
  p.batch = call.batch();
  ASSIGN_OR_RETURN(p.left, call.BoolAttr("left"));
  ASSIGN_OR_RETURN(p.transpose, call.BoolAttr("transpose"));
  ASSIGN_OR_RETURN(auto a_dims, MatrixOperand(call));
  ASSIGN_OR_RETURN(std::vector<int64_t> tau_dims,
                   call.OperandDims(1, call.type(), 1));
  ASSIGN_OR_RETURN(std::vector<int64_t> c_dims,
                   call.OperandDims(2, call.type(), 2));
  p.a_cols = a_dims.second;
  p.k = tau_dims[0];
  p.m = c_dims[0];
  p.n = c_dims[1];
  int64_t q = p.left ? p.m : p.n;
  if (a_dims.first != q || p.k > p.a_cols || p.k > q) {
    return call.Error("reflectors ", a_dims.first, "x", a_dims.second, " with ",
                      p.k, " taus do not apply to ", p.m, "x", p.n,
                      p.left ? " from the left" : " from the right");
  }
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {q, p.a_cols}));
  ASSIGN_OR_RETURN(SlotId tau, call.Operand(1, call.type(), {p.k}));
  ASSIGN_OR_RETURN(SlotId c, call.Operand(2, call.type(), {p.m, p.n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {p.m, p.n}));
  call.Emit(exec::MakeOrmqrKernel(p), {a, tau, c}, {out});
  return OkStatus();
}

Status LowerPotrf(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 2));
  ASSIGN_OR_RETURN(char uplo, call.CharAttr("uplo", "LU"));
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(1, ElementType::kI32, {}));
  call.Emit(exec::MakePotrfKernel(call.type(), call.batch(), n, uplo == 'L'),
            {a}, {out, info});
  return OkStatus();
}

Status LowerTrsm(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(2, 1));
  exec::TriangularSolveParams p;
  ASSIGN_OR_RETURN(char side, call.CharAttr("side", "LR"));
  ASSIGN_OR_RETURN(char uplo, call.CharAttr("uplo", "LU"));
  ASSIGN_OR_RETURN(char trans, call.CharAttr("trans_x", "NTC"));
  ASSIGN_OR_RETURN(char diag, call.CharAttr("diag", "NU"));
  p.left_side = side == 'L';
  p.lower = uplo == 'L';
  p.unit_diagonal = diag == 'U';
  p.transpose = trans == 'N' ? 1 : trans == 'T' ? 2 : 3;
  ASSIGN_OR_RETURN(int64_t k, SquareOperand(call));
  ASSIGN_OR_RETURN(std::vector<int64_t> b_dims,
                   call.OperandDims(1, call.type(), 2));
  if (k != (p.left_side ? b_dims[0] : b_dims[1])) {
    return call.Error("a is ", k, "x", k, " but b is ", b_dims[0], "x",
                      b_dims[1], " (side ", side, ")");
  }
  p.type = call.type();
  p.batch = call.batch();
  p.m = k;
  p.rows = b_dims[0];
  p.cols = b_dims[1];
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {k, k}));
  ASSIGN_OR_RETURN(SlotId b, call.Operand(1, call.type(), b_dims));
  ASSIGN_OR_RETURN(SlotId x, call.Result(0, call.type(), b_dims));
  call.Emit(exec::MakeTriangularSolveKernel(p), {a, b}, {x});
  return OkStatus();
}

Status LowerSyevd(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 3));
  ASSIGN_OR_RETURN(char uplo, call.CharAttr("uplo", "LU"));
  ASSIGN_OR_RETURN(char mode, call.CharAttr("mode", "NV"));
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId v, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId w, call.Result(1, call.real_type(), {n}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(2, ElementType::kI32, {}));
  call.Emit(exec::MakeSyevdKernel(call.type(), call.batch(), n, uplo == 'L',
                                  mode == 'V'),
            {a}, {v, w, info});
  return OkStatus();
}

// gesdd and gesvd share the contract; Kiln computes both the same way.
Status LowerSvd(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 5));
  ASSIGN_OR_RETURN(char mode, call.CharAttr("mode", "ASNO"));
  if (mode == 'O') {
    return call.Error("mode 'O' (overwrite a with U) is not supported");
  }
  ASSIGN_OR_RETURN(auto mn, MatrixOperand(call));
  auto [m, n] = mn;
  const int64_t k = std::min(m, n);
  bool full = mode == 'A';
  if (mode == 'N') {
    // U and VT are not computed; their shapes say which ones JAX made.
    ASSIGN_OR_RETURN(std::vector<int64_t> u_dims, call.ResultDims(2, 2));
    full = u_dims[1] == m;
  }
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId a_out, call.Result(0, call.type(), {m, n}));
  ASSIGN_OR_RETURN(SlotId s, call.Result(1, call.real_type(), {k}));
  ASSIGN_OR_RETURN(SlotId u, call.Result(2, call.type(), {m, full ? m : k}));
  ASSIGN_OR_RETURN(SlotId vt, call.Result(3, call.type(), {full ? n : k, n}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(4, ElementType::kI32, {}));
  call.Emit(
      exec::MakeSvdKernel(call.type(), call.batch(), m, n, mode != 'N', full),
      {a}, {a_out, s, u, vt, info});
  return OkStatus();
}

Status LowerGees(FfiCall& call) {
  const bool complex = call.is_complex();
  RETURN_IF_ERROR(call.Begin(1, complex ? 5 : 6));
  ASSIGN_OR_RETURN(char mode, call.CharAttr("mode", "NV"));
  ASSIGN_OR_RETURN(char sort, call.CharAttr("sort", "NS"));
  if (sort != 'N') {
    return call.Error("sorting eigenvalues (sort = 'S') is not supported");
  }
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  std::vector<SlotId> outputs;
  ASSIGN_OR_RETURN(SlotId t, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId z, call.Result(1, call.type(), {n, n}));
  outputs = {t, z};
  const int eigenvalue_results = complex ? 1 : 2;
  for (int i = 0; i < eigenvalue_results; ++i) {
    ASSIGN_OR_RETURN(SlotId w, call.Result(2 + i, call.type(), {n}));
    outputs.push_back(w);
  }
  for (int i = 0; i < 2; ++i) {
    ASSIGN_OR_RETURN(SlotId x, call.Result(2 + eigenvalue_results + i,
                                           ElementType::kI32, {}));
    outputs.push_back(x);
  }
  call.Emit(exec::MakeGeesKernel(call.type(), call.batch(), n, mode == 'V'),
            {a}, outputs);
  return OkStatus();
}

Status LowerGeev(FfiCall& call) {
  const bool complex = call.is_complex();
  RETURN_IF_ERROR(call.Begin(1, complex ? 4 : 5));
  ASSIGN_OR_RETURN(char left, call.CharAttr("compute_left", "NV"));
  ASSIGN_OR_RETURN(char right, call.CharAttr("compute_right", "NV"));
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  std::vector<SlotId> outputs;
  const int eigenvalue_results = complex ? 1 : 2;
  for (int i = 0; i < eigenvalue_results; ++i) {
    ASSIGN_OR_RETURN(SlotId w, call.Result(i, call.type(), {n}));
    outputs.push_back(w);
  }
  for (int i = 0; i < 2; ++i) {
    ASSIGN_OR_RETURN(SlotId v, call.Result(eigenvalue_results + i,
                                           call.complex_type(), {n, n}));
    outputs.push_back(v);
  }
  ASSIGN_OR_RETURN(SlotId info,
                   call.Result(eigenvalue_results + 2, ElementType::kI32, {}));
  outputs.push_back(info);
  call.Emit(exec::MakeGeevKernel(call.type(), call.batch(), n, left == 'V',
                                 right == 'V'),
            {a}, outputs);
  return OkStatus();
}

Status LowerGehrd(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 3));
  ASSIGN_OR_RETURN(int64_t low, call.IntAttr("low"));
  ASSIGN_OR_RETURN(int64_t high, call.IntAttr("high"));
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  bool valid =
      n == 0 ? (low == 1 && high <= 1) : (1 <= low && low <= high && high <= n);
  if (!valid) {
    return call.Error("low = ", low, " and high = ", high,
                      " do not satisfy 1 <= low <= high <= ", n);
  }
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId tau, call.Result(1, call.type(), {Minus1(n)}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(2, ElementType::kI32, {}));
  call.Emit(exec::MakeGehrdKernel(call.type(), call.batch(), n, low, high), {a},
            {out, tau, info});
  return OkStatus();
}

Status LowerSytrd(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(1, 5));
  ASSIGN_OR_RETURN(char uplo, call.CharAttr("uplo", "LU"));
  ASSIGN_OR_RETURN(int64_t n, SquareOperand(call));
  ASSIGN_OR_RETURN(SlotId a, call.Operand(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId out, call.Result(0, call.type(), {n, n}));
  ASSIGN_OR_RETURN(SlotId d, call.Result(1, call.real_type(), {n}));
  ASSIGN_OR_RETURN(SlotId e, call.Result(2, call.real_type(), {Minus1(n)}));
  ASSIGN_OR_RETURN(SlotId tau, call.Result(3, call.type(), {Minus1(n)}));
  ASSIGN_OR_RETURN(SlotId info, call.Result(4, ElementType::kI32, {}));
  call.Emit(exec::MakeSytrdKernel(call.type(), call.batch(), n, uplo == 'L'),
            {a}, {out, d, e, tau, info});
  return OkStatus();
}

Status LowerGtsv(FfiCall& call) {
  RETURN_IF_ERROR(call.Begin(4, 5, /*matrix_rank=*/1));
  ASSIGN_OR_RETURN(std::vector<int64_t> d_dims,
                   call.OperandDims(0, call.type(), 1));
  int64_t m = d_dims[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> b_dims,
                   call.OperandDims(3, call.type(), 2));
  if (b_dims[0] != m) {
    return call.Error("b has ", b_dims[0], " rows for a system of order ", m);
  }
  int64_t nrhs = b_dims[1];
  std::vector<SlotId> inputs, outputs;
  for (int i = 0; i < 4; ++i) {
    std::vector<int64_t> dims =
        i < 3 ? std::vector<int64_t>{m} : std::vector<int64_t>{m, nrhs};
    ASSIGN_OR_RETURN(SlotId in, call.Operand(i, call.type(), dims));
    ASSIGN_OR_RETURN(SlotId out, call.Result(i, call.type(), dims));
    inputs.push_back(in);
    outputs.push_back(out);
  }
  ASSIGN_OR_RETURN(SlotId info, call.Result(4, ElementType::kI32, {}));
  outputs.push_back(info);
  call.Emit(exec::MakeGtsvKernel(call.type(), call.batch(), m, nrhs), inputs,
            outputs);
  return OkStatus();
}

// jaxlib's own tridiagonal_solve_perturbed_ffi (no type prefix: the
// operands' element type): dl, d, du, b -> x.
Status LowerTridiagonalSolvePerturbed(Lowering& lowering,
                                      const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId first, lowering.Operand(op, 0));
  ElementType type = lowering.shape(first).type;
  if (type != ElementType::kF32 && type != ElementType::kF64 &&
      type != ElementType::kC64 && type != ElementType::kC128) {
    return UnsupportedType(op, type);
  }
  FfiCall call(lowering, op, type);
  RETURN_IF_ERROR(call.Begin(4, 1, /*matrix_rank=*/1));
  ASSIGN_OR_RETURN(std::vector<int64_t> d_dims, call.OperandDims(0, type, 1));
  int64_t m = d_dims[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> b_dims, call.OperandDims(3, type, 2));
  if (b_dims[0] != m) {
    return call.Error("b has ", b_dims[0], " rows for a system of order ", m);
  }
  std::vector<SlotId> inputs;
  for (int i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(
        SlotId in,
        call.Operand(i, type, i < 3 ? std::vector<int64_t>{m} : b_dims));
    inputs.push_back(in);
  }
  ASSIGN_OR_RETURN(SlotId x, call.Result(0, type, b_dims));
  call.Emit(exec::MakeTridiagonalSolvePerturbedKernel(type, call.batch(), m,
                                                      b_dims[1]),
            inputs, {x});
  return OkStatus();
}

// The routines by name (real name, complex name: LAPACK's orgqr is ungqr
// for complex types, and so on).
struct Routine {
  const char* real_name;
  const char* complex_name;
  Status (*lower)(FfiCall&);
};

constexpr Routine kRoutines[] = {
    {"getrf", "getrf", LowerGetrf}, {"geqrf", "geqrf", LowerGeqrf},
    {"geqp3", "geqp3", LowerGeqp3}, {"orgqr", "ungqr", LowerOrgqr},
    {"ormqr", "unmqr", LowerOrmqr}, {"potrf", "potrf", LowerPotrf},
    {"trsm", "trsm", LowerTrsm},    {"syevd", "heevd", LowerSyevd},
    {"gesdd", "gesdd", LowerSvd},   {"gesvd", "gesvd", LowerSvd},
    {"gees", "gees", LowerGees},    {"geev", "geev", LowerGeev},
    {"gehrd", "gehrd", LowerGehrd}, {"sytrd", "hetrd", LowerSytrd},
    {"gtsv", "gtsv", LowerGtsv},
};

}  // namespace

void RegisterLapackTargets(CustomCallRegistry& registry) {
  const std::pair<char, ElementType> kPrefixes[] = {
      {'s', ElementType::kF32},
      {'d', ElementType::kF64},
      {'c', ElementType::kC64},
      {'z', ElementType::kC128},
  };
  for (const Routine& routine : kRoutines) {
    for (auto [prefix, type] : kPrefixes) {
      const char* name =
          ir::IsComplex(type) ? routine.complex_name : routine.real_name;
      auto lower = routine.lower;
      registry.Register(
          StrCat("lapack_", std::string(1, prefix), name, "_ffi"),
          [type, lower](Lowering& lowering, const ir::Operation& op) {
            FfiCall call(lowering, op, type);
            return lower(call);
          });
    }
  }
  registry.Register("tridiagonal_solve_perturbed_ffi",
                    LowerTridiagonalSolvePerturbed);
}

}  // namespace kiln::compile
