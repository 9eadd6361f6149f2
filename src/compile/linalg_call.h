// One linear-algebra custom call being lowered: the checks that JAX's
// LAPACK FFI targets (lower_lapack.cc) and the GPU solver targets
// (lower_gpu_solver.cc) share, and the results they create. Internal to
// compile/.
//
// The solver FFIs take matrices in column-major layout: the arrays of the
// largest rank carry operand/result layout {r-2, r-1, r-3, ..., 0}, the
// others the default. Kiln's arrays are row-major and its kernels read
// logical elements, so a call with exactly those layouts (or none) means
// what it means to XLA. A call that declares another layout gets what XLA
// gives the handler: the bytes of the operand in the declared layout, read
// by the routine as its own layout (and its results' bytes read back in
// the declared result layout); Kiln reorders the elements so (Relayout).
// Calls whose arrays are all row-major (JAX's transposed gesvd,
// lu_pivots_to_permutation) ask for that with `column_major` false.
#ifndef KILN_COMPILE_LINALG_CALL_H_
#define KILN_COMPILE_LINALG_CALL_H_

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compile/lower_families.h"
#include "compile/lowering.h"
#include "exec/kernels/linalg.h"

namespace kiln::compile {

inline ElementType RealTypeOf(ElementType type) {
  if (type == ElementType::kC64) return ElementType::kF32;
  if (type == ElementType::kC128) return ElementType::kF64;
  return type;
}

inline ElementType ComplexTypeOf(ElementType type) {
  if (type == ElementType::kF32) return ElementType::kC64;
  if (type == ElementType::kF64) return ElementType::kC128;
  return type;
}

class LinalgCall {
 public:
  LinalgCall(Lowering& lowering, const ir::Operation& op, ElementType type)
      : lowering_(lowering), op_(op), type_(type) {
    config_ = op.GetAttr("mhlo.backend_config");
    if (!config_.is(ir::AttrKind::kDictionary)) {
      config_ = op.GetAttr("backend_config");
    }
  }

  Lowering& lowering() const { return lowering_; }
  const ir::Operation& op() const { return op_; }
  ElementType type() const { return type_; }
  ElementType real_type() const { return RealTypeOf(type_); }
  ElementType complex_type() const { return ComplexTypeOf(type_); }
  bool is_complex() const { return ir::IsComplex(type_); }
  // The batch dimensions (those of operand 0 before its last `matrix_rank`).
  const std::vector<int64_t>& batch_dims() const { return batch_; }
  int64_t batch() const { return exec::NumElements(batch_); }

  template <typename... Args>
  Status Error(const Args&... args) const {
    return InvalidArgumentError(op_.Describe(), " ", TargetName(), ": ",
                                args...);
  }

  // Checks the operand and result counts and the layouts (column-major
  // matrices, or all row-major without `column_major`); operand 0 (a batch
  // of `matrix_rank`-dimensional arrays) fixes the batch dimensions.
  // With ZeroTrailingResults(k) first, `results` more k: see there.
  Status Begin(int operands, int results, int matrix_rank = 2,
               bool column_major = true) {
    if (op_.num_operands() != operands ||
        op_.num_results() != results + zero_results_) {
      return Error("expects ", operands, " operands and ",
                   results + zero_results_, " results, got ",
                   op_.num_operands(), " and ", op_.num_results());
    }
    ASSIGN_OR_RETURN(SlotId first, lowering_.Operand(op_, 0));
    ArrayShape shape = lowering_.shape(first);
    if (shape.rank() < matrix_rank) {
      return Error("operand 0 ", shape.ToString(), " has fewer than ",
                   matrix_rank, " dimensions");
    }
    batch_.assign(shape.dims.begin(), shape.dims.end() - matrix_rank);
    RETURN_IF_ERROR(CheckLayouts(column_major));
    for (int i = results; i < results + zero_results_; ++i) {
      ASSIGN_OR_RETURN(ArrayShape zeros_shape, lowering_.ResultShape(op_, i));
      ASSIGN_OR_RETURN(
          SlotId zeros,
          lowering_.NewSplatConstant(
              zeros_shape,
              std::string(ir::StorageBytes(zeros_shape.type), '\0')));
      lowering_.Bind(op_.result(i), zeros);
    }
    return OkStatus();
  }

  // The legacy GPU targets (jaxlib's descriptor-based cuSOLVER and cuBLAS
  // calls) end with results that the routine shares with a newer target
  // but for `count` more: the device workspace, and an info that cannot
  // fail (geqrf, orgqr). Begin then expects them and binds them to zeros
  // (info 0: success).
  void ZeroTrailingResults(int count) { zero_results_ = count; }

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
    return AsRoutineReadsIt(i, slot);
  }

  // Operand i as the routine reads it (see the file comment).
  SlotId AsRoutineReadsIt(int i, SlotId slot) const {
    if (i >= static_cast<int>(operand_layouts_.size())) return slot;
    const LayoutPair& layouts = operand_layouts_[i];
    return Relayout(slot, layouts.declared, layouts.routine);
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
  // Where the routine's result has a declared layout of its own, the slot
  // returned is the routine's, and Emit reorders it into the result.
  StatusOr<SlotId> Result(int i, ElementType type,
                          const std::vector<int64_t>& dims) {
    ASSIGN_OR_RETURN(SlotId slot, lowering_.NewResult(op_, i, Dims(dims)));
    if (lowering_.shape(slot).type != type) {
      return Error("result ", i, " is ", lowering_.shape(slot).ToString(),
                   ", expected element type ", ir::ElementTypeName(type));
    }
    if (i >= static_cast<int>(result_layouts_.size())) return slot;
    const LayoutPair& layouts = result_layouts_[i];
    if (layouts.declared == layouts.routine) return slot;
    SlotId routine = lowering_.NewTemp(lowering_.shape(slot));
    relaid_results_.push_back({routine, slot, i});
    return routine;
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
    std::vector<SlotId> written = outputs;
    lowering_.Emit(op_, std::move(kernel), std::move(inputs),
                   std::move(outputs));
    // Results of this step that the call declares in a layout of its own.
    std::vector<RelaidResult> later;
    for (const RelaidResult& r : relaid_results_) {
      if (std::find(written.begin(), written.end(), r.routine) ==
          written.end()) {
        later.push_back(r);
        continue;
      }
      const LayoutPair& layouts = result_layouts_[r.index];
      SlotId value = Relayout(r.routine, layouts.routine, layouts.declared);
      lowering_.EmitCopy(op_, value, r.result);
    }
    relaid_results_ = std::move(later);
  }

 private:
  std::vector<int64_t> Dims(const std::vector<int64_t>& tail) const {
    std::vector<int64_t> dims = batch_;
    dims.insert(dims.end(), tail.begin(), tail.end());
    return dims;
  }

  // The custom call's target, which names the routine in errors.
  std::string TargetName() const {
    ir::Attribute target = op_.GetAttr("call_target_name");
    return target.is(ir::AttrKind::kString)      ? target.string_value()
           : target.is(ir::AttrKind::kSymbolRef) ? target.symbol_root()
                                                 : op_.name();
  }

  ir::Attribute Attr(std::string_view name) const {
    return config_.is(ir::AttrKind::kDictionary) ? config_.Get(name)
                                                 : ir::Attribute();
  }

  // The layout a call declares for an array and the one the routine
  // reads or writes (both minor to major).
  struct LayoutPair {
    std::vector<int64_t> declared;
    std::vector<int64_t> routine;
  };
  struct RelaidResult {
    SlotId routine;
    SlotId result;
    int index;
  };

  Status CheckLayouts(bool column_major) {
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
    // Without column-major matrices no rank gets the matrix layout.
    if (!column_major) max_rank = -1;
    RETURN_IF_ERROR(CheckLayoutList("operand_layouts", "operand",
                                    operand_ranks, max_rank,
                                    operand_layouts_));
    return CheckLayoutList("result_layouts", "result", result_ranks, max_rank,
                           result_layouts_);
  }

  Status CheckLayoutList(std::string_view attr_name, std::string_view what,
                         const std::vector<int64_t>& ranks, int64_t max_rank,
                         std::vector<LayoutPair>& pairs) const {
    ir::Attribute layouts = op_.GetAttr(attr_name);
    if (layouts && (!layouts.is(ir::AttrKind::kArray) ||
                    layouts.array().size() != ranks.size())) {
      return Error(attr_name, " does not hold one layout per ", what);
    }
    pairs.clear();
    for (size_t i = 0; i < ranks.size(); ++i) {
      int64_t rank = ranks[i];
      // Column-major matrices for the arrays of the largest rank, the
      // default (row-major) layout for the others.
      LayoutPair pair;
      if (rank == max_rank && rank >= 2) {
        pair.routine = {rank - 2, rank - 1};
        for (int64_t d = rank - 3; d >= 0; --d) pair.routine.push_back(d);
      } else {
        for (int64_t d = rank - 1; d >= 0; --d) pair.routine.push_back(d);
      }
      pair.declared = pair.routine;
      if (layouts) {
        std::optional<std::vector<int64_t>> layout =
            layouts.array()[i].AsIntVector();
        std::vector<int64_t> sorted = layout ? *layout : std::vector<int64_t>();
        std::sort(sorted.begin(), sorted.end());
        bool permutation = layout && static_cast<int64_t>(sorted.size()) == rank;
        for (int64_t d = 0; permutation && d < rank; ++d) {
          permutation = sorted[d] == d;
        }
        if (!permutation) {
          return Error(what, " ", i, " layout ", layouts.array()[i].ToString(),
                       " is not a permutation of its ", rank, " dimensions");
        }
        pair.declared = *layout;
      }
      pairs.push_back(std::move(pair));
    }
    return OkStatus();
  }

  // `slot` reordered so that its elements laid out in `read_as` (minor to
  // major) are the bytes of `slot` laid out in `bytes_in`.
  SlotId Relayout(SlotId slot, const std::vector<int64_t>& bytes_in,
                  const std::vector<int64_t>& read_as) const {
    if (bytes_in == read_as) return slot;
    ArrayShape shape = lowering_.shape(slot);
    std::vector<int64_t> bytes_order(bytes_in.rbegin(), bytes_in.rend());
    std::vector<int64_t> read_order(read_as.rbegin(), read_as.rend());
    SlotId physical = TransposeSlot(lowering_, op_, slot, bytes_order);
    ArrayShape read_shape{shape.type, {}};
    for (int64_t d : read_order) read_shape.dims.push_back(shape.dims[d]);
    SlotId reread = lowering_.NewAlias(physical, read_shape);
    std::vector<int64_t> back(read_order.size());
    for (size_t k = 0; k < read_order.size(); ++k) {
      back[read_order[k]] = static_cast<int64_t>(k);
    }
    return TransposeSlot(lowering_, op_, reread, back);
  }

  Lowering& lowering_;
  const ir::Operation& op_;
  ElementType type_;
  ir::Attribute config_;
  std::vector<int64_t> batch_;
  std::vector<LayoutPair> operand_layouts_;
  std::vector<LayoutPair> result_layouts_;
  std::vector<RelaidResult> relaid_results_;
  int zero_results_ = 0;
};

// The trailing two dimensions of operand 0.
inline StatusOr<std::pair<int64_t, int64_t>> MatrixOperand(LinalgCall& call) {
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   call.OperandDims(0, call.type(), 2));
  return std::make_pair(dims[0], dims[1]);
}

// Operand 0 as a batch of square matrices; returns n.
inline StatusOr<int64_t> SquareOperand(LinalgCall& call) {
  ASSIGN_OR_RETURN(auto dims, MatrixOperand(call));
  if (dims.first != dims.second) {
    return call.Error("operand 0 is not a batch of square matrices");
  }
  return dims.first;
}

// Max(n - 1, 0): the length of taus and off-diagonals.
inline int64_t Minus1(int64_t n) { return n > 0 ? n - 1 : 0; }

// The LAPACK routines' lowerings (lower_lapack.cc), shared with the GPU
// solver targets of the same contract. The first form of each reads the
// LAPACK FFI's attributes and checks the counts; the second (for callers
// that have checked them with Begin) takes the flags as values.
Status LowerGetrf(LinalgCall& call);
Status LowerGeqrf(LinalgCall& call);
Status LowerOrgqr(LinalgCall& call);
Status LowerGtsv(LinalgCall& call);
Status LowerPotrf(LinalgCall& call);
Status LowerPotrf(LinalgCall& call, bool lower);
Status LowerSyevd(LinalgCall& call);
Status LowerSyevd(LinalgCall& call, bool lower, bool vectors);
Status LowerSytrd(LinalgCall& call);
Status LowerSytrd(LinalgCall& call, bool lower);
// b -> x of a x = b (left_side) or x a = b, a triangular; transpose 1
// (none), 2 (a^T) or 3 (a^H).
Status LowerTrsm(LinalgCall& call, bool left_side, bool lower, int transpose,
                 bool unit_diagonal);
// gesdd and gesvd: the same contract, computed by divide and conquer or by
// QR iterations as named.
Status LowerGesdd(LinalgCall& call);
Status LowerGesvd(LinalgCall& call);
// a -> a, s, u, vt, info with U and V^H as results `u_result` and
// `vt_result` (2 and 3, or swapped), by divide and conquer unless told.
Status LowerSvd(LinalgCall& call, bool compute_uv, bool full, int u_result,
                int vt_result, bool divide_and_conquer = true);

}  // namespace kiln::compile

#endif  // KILN_COMPILE_LINALG_CALL_H_
