#include "compile/lowering.h"

#include <algorithm>
#include <cstring>

#include "base/logging.h"
#include "compile/buffer_planner.h"
#include "compile/custom_call.h"
#include "compile/lower_families.h"
#include "exec/executor.h"
#include "exec/ffi.h"
#include "exec/kernels/copy.h"
#include "exec/kernels/elementwise_kernel.h"
#include "exec/kernels/quantize.h"
#include "exec/kernels/run_time_error.h"
#include "exec/kernels/shape.h"
#include "exec/parallel.h"

namespace kiln::compile {
namespace {

// Folding runs a step at compile time when all its inputs are constants;
// only small results are folded, so constants stay cheap to hold.
constexpr int64_t kMaxFoldedOutputBytes = 64 * 1024;
constexpr int64_t kMaxFoldedInputBytes = 1 << 20;

std::vector<LowerFn>& LoweringTable() {
  static std::vector<LowerFn>* table = [] {
    auto* t =
        new std::vector<LowerFn>(static_cast<size_t>(ir::OpCode::kUnknown) + 1);
    return t;
  }();
  return *table;
}

void EnsureRegistered() {
  static const bool registered = [] {
    RegisterAllLowerings();
    return true;
  }();
  (void)registered;
}

// The leaves of a type: tensors and tokens in order, tuples flattened.
void FlattenType(const ir::Type& type, std::vector<ir::Type>& leaves) {
  if (type.IsTuple()) {
    for (const ir::Type& element : type.elements())
      FlattenType(element, leaves);
  } else {
    leaves.push_back(type);
  }
}

bool HasQuantizedType(const ir::Type& type) {
  if (type.IsTensor()) return type.element().is(ir::TypeKind::kQuantized);
  if (type.IsTuple()) {
    for (const ir::Type& element : type.elements()) {
      if (HasQuantizedType(element)) return true;
    }
  }
  return false;
}

exec::QuantizationParams ToParams(const ir::QuantizedType& q) {
  exec::QuantizationParams params;
  params.storage_type = q.storage_type;
  params.storage_min = q.storage_min;
  params.storage_max = q.storage_max;
  params.expressed_type = q.expressed_type;
  params.axis = q.axis ? *q.axis : -1;
  params.scales = q.scales;
  params.zero_points = q.zero_points;
  return params;
}

}  // namespace

void RegisterLowering(ir::OpCode code, LowerFn fn) {
  LoweringTable()[static_cast<size_t>(code)] = std::move(fn);
}

const LowerFn* FindLowering(ir::OpCode code) {
  EnsureRegistered();
  const LowerFn& fn = LoweringTable()[static_cast<size_t>(code)];
  return fn ? &fn : nullptr;
}

Lowering::Lowering(const ir::Module& module,
                   const CustomCallRegistry& custom_calls, exec::Plan& plan)
    : module_(module), custom_calls_(custom_calls), plan_(plan) {
  EnsureRegistered();
}

// --- Slots
// --------------------------------------------------------------------

SlotId Lowering::AddSlot(exec::Slot slot) {
  SlotId id = static_cast<SlotId>(plan_.slots().size());
  plan_.mutable_slots().push_back(std::move(slot));
  bool temp = plan_.slots().back().kind == exec::SlotKind::kTemp;
  slot_frame_.push_back(temp && !frames_.empty() ? frames_.back().id : -1);
  first_def_.push_back(-1);
  last_use_.push_back(-1);
  alias_root_.push_back(id);
  return id;
}

SlotId Lowering::NewAlias(SlotId base, ArrayShape shape) {
  exec::Slot alias = plan_.slots()[base];
  alias.shape = std::move(shape);
  SlotId id = AddSlot(std::move(alias));
  alias_root_[id] = alias_root_[base];
  return id;
}

std::vector<SlotId> Lowering::SlotsSharingMemory(SlotId id) const {
  std::vector<SlotId> slots;
  for (size_t other = 0; other < alias_root_.size(); ++other) {
    if (alias_root_[other] == alias_root_[id]) {
      slots.push_back(static_cast<SlotId>(other));
    }
  }
  return slots;
}

SlotId Lowering::NewTemp(ArrayShape shape) {
  exec::Slot slot;
  slot.shape = std::move(shape);
  return AddSlot(std::move(slot));
}

SlotId Lowering::NewToken() {
  exec::Slot slot;
  slot.shape = ArrayShape{ElementType::kI1, {0}};
  slot.is_token = true;
  return AddSlot(std::move(slot));
}

StatusOr<SlotId> Lowering::NewConstant(ArrayShape shape,
                                       std::string_view data) {
  int64_t bytes = shape.byte_size();
  if (static_cast<int64_t>(data.size()) != bytes) {
    return InternalError("constant of ", shape.ToString(), " has ", data.size(),
                         " bytes; expected ", bytes);
  }
  ASSIGN_OR_RETURN(exec::AlignedBuffer buffer, exec::AllocateAligned(bytes));
  if (bytes > 0) std::memcpy(buffer.data(), data.data(), bytes);
  exec::Slot slot;
  slot.shape = std::move(shape);
  slot.kind = exec::SlotKind::kConstant;
  slot.index = static_cast<int32_t>(plan_.constants().size());
  plan_.mutable_constants().push_back(std::move(buffer));
  return AddSlot(std::move(slot));
}

StatusOr<SlotId> Lowering::NewSplatConstant(ArrayShape shape,
                                            std::string_view value) {
  int64_t count = shape.num_elements();
  std::string data;
  data.reserve(count * value.size());
  for (int64_t i = 0; i < count; ++i) data.append(value);
  return NewConstant(std::move(shape), data);
}

const std::byte* Lowering::ConstantData(SlotId id) const {
  const exec::Slot& s = slot(id);
  if (s.kind != exec::SlotKind::kConstant) return nullptr;
  return plan_.constants()[s.index].data();
}

std::optional<std::vector<int64_t>> Lowering::ConstantInts(SlotId id) const {
  const std::byte* data = ConstantData(id);
  if (data == nullptr) return std::nullopt;
  const ArrayShape& s = shape(id);
  if (!ir::IsInteger(s.type) && !ir::IsBool(s.type)) return std::nullopt;
  int64_t count = s.num_elements();
  int bytes = ir::StorageBytes(s.type);
  bool is_signed = ir::IsSignedInteger(s.type);
  std::vector<int64_t> values(count);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, data + i * bytes, bytes);
    if (is_signed && bytes < 8 && ((raw >> (bytes * 8 - 1)) & 1)) {
      raw |= ~uint64_t{0} << (bytes * 8);
    }
    values[i] = static_cast<int64_t>(raw);
  }
  return values;
}

StatusOr<std::vector<int64_t>> Lowering::RequireConstantInts(
    const ir::Operation& op, int operand, std::string_view what) const {
  ASSIGN_OR_RETURN(SlotId id, Operand(op, operand));
  auto values = ConstantInts(id);
  if (!values) {
    return UnimplementedError(op.Describe(), ": ", what,
                              " must be known at compile time (it depends on "
                              "run-time values); give the argument shapes "
                              "and dimension values when compiling");
  }
  return *values;
}

// --- Values
// -------------------------------------------------------------------

void Lowering::Bind(const ir::Value* value, std::vector<SlotId> leaves) {
  values_[value] = std::move(leaves);
}

StatusOr<std::vector<SlotId>> Lowering::Leaves(const ir::Value* value) const {
  auto it = values_.find(value);
  if (it == values_.end()) {
    return InternalError("value used before it was lowered");
  }
  return it->second;
}

StatusOr<SlotId> Lowering::Slot(const ir::Value* value) const {
  auto it = values_.find(value);
  if (it == values_.end()) {
    return InternalError("value used before it was lowered");
  }
  if (it->second.size() != 1) {
    return InvalidArgumentError("expected a tensor, got ",
                                value->type().ToString());
  }
  return it->second[0];
}

StatusOr<SlotId> Lowering::Operand(const ir::Operation& op, int i) const {
  if (i >= op.num_operands()) {
    return InvalidArgumentError(op.Describe(), ": expected at least ", i + 1,
                                " operands, got ", op.num_operands());
  }
  auto slot = Slot(op.operand(i));
  if (!slot.ok()) return slot.status().WithContext(op.Describe());
  return slot;
}

std::vector<exec::ValueSpec> Lowering::Specs(
    const std::vector<SlotId>& slots) const {
  std::vector<exec::ValueSpec> specs;
  for (SlotId id : slots) specs.push_back({slot(id).shape, slot(id).is_token});
  return specs;
}

// --- Types
// --------------------------------------------------------------------

StatusOr<ElementType> Lowering::SlotElementType(const ir::Type& type) const {
  ir::Type element = type;
  if (type.IsTensor() || type.is(ir::TypeKind::kMemRef))
    element = type.element();
  if (element.is(ir::TypeKind::kElement)) return element.element_type();
  if (element.is(ir::TypeKind::kQuantized)) {
    return quantized_as_float_ ? element.quantized().expressed_type
                               : element.quantized().storage_type;
  }
  return InvalidArgumentError("expected a tensor type, got ", type.ToString());
}

StatusOr<ArrayShape> Lowering::ResultShape(
    const ir::Operation& op, int i,
    std::optional<std::vector<int64_t>> inferred) const {
  const ir::Type& type = op.result(i)->type();
  if (!type.IsTensor()) {
    return InvalidArgumentError(op.Describe(), ": result ", i,
                                " should be a tensor, got ", type.ToString());
  }
  ArrayShape shape;
  ASSIGN_OR_RETURN(shape.type, SlotElementType(type));
  if (inferred) {
    if (static_cast<int64_t>(inferred->size()) != type.rank()) {
      return InvalidArgumentError(
          op.Describe(), ": result has type ", type.ToString(),
          " but the operands give rank ", inferred->size());
    }
    for (int64_t d = 0; d < type.rank(); ++d) {
      if (type.dim(d) != ir::kDynamic && type.dim(d) != (*inferred)[d]) {
        return InvalidArgumentError(op.Describe(), ": result has type ",
                                    type.ToString(),
                                    " but the operands give "
                                    "dimension ",
                                    d, " size ", (*inferred)[d]);
      }
      if ((*inferred)[d] < 0) {
        return InvalidArgumentError(op.Describe(), ": negative dimension ",
                                    (*inferred)[d], " in the result shape");
      }
    }
    shape.dims = std::move(*inferred);
    return shape;
  }
  if (!type.HasStaticShape()) {
    return UnimplementedError(op.Describe(), ": cannot infer the shape of ",
                              type.ToString());
  }
  shape.dims = type.shape();
  return shape;
}

StatusOr<SlotId> Lowering::NewResult(
    const ir::Operation& op, int i,
    std::optional<std::vector<int64_t>> inferred) {
  ASSIGN_OR_RETURN(ArrayShape shape, ResultShape(op, i, std::move(inferred)));
  SlotId id = NewTemp(std::move(shape));
  Bind(op.result(i), id);
  return id;
}

// --- Steps
// --------------------------------------------------------------------

void Lowering::NoteUse(SlotId id, int64_t index) {
  id = alias_root_[id];
  if (plan_.slots()[id].kind != exec::SlotKind::kTemp) return;
  last_use_[id] = std::max(last_use_[id], index);
  if (!frames_.empty() && slot_frame_[id] != frames_.back().id) {
    frames_.back().captures.insert(id);
  }
}

void Lowering::Emit(const ir::Operation& op,
                    std::unique_ptr<exec::Kernel> kernel,
                    std::vector<SlotId> inputs, std::vector<SlotId> outputs,
                    bool foldable) {
  exec::Step step;
  step.kernel = std::move(kernel);
  step.inputs = std::move(inputs);
  step.outputs = std::move(outputs);
  step.where = op.Describe();
  if (fuse_elementwise_) ReadBroadcastScalars(step);
  if (foldable) {
    int64_t in_bytes = 0, out_bytes = 0;
    bool all_constant = true;
    // Without constant folding, shape computations (small integer arrays)
    // are still folded: dynamic shapes depend on them.
    bool shape_like = true;
    for (SlotId id : step.inputs) {
      all_constant &= ConstantData(id) != nullptr;
      in_bytes += slot(id).byte_size();
    }
    for (SlotId id : step.outputs) {
      exec::Slot s = slot(id);
      all_constant &= s.kind == exec::SlotKind::kTemp;
      out_bytes += s.byte_size();
      shape_like &= (ir::IsInteger(s.shape.type) || ir::IsBool(s.shape.type)) &&
                    s.shape.num_elements() <= 16;
    }
    if (all_constant && (fold_constants_ || shape_like) &&
        in_bytes <= kMaxFoldedInputBytes &&
        out_bytes <= kMaxFoldedOutputBytes) {
      // Run the step now over a context holding only its own slots, on
      // this thread alone (compiling runs on the caller's thread).
      exec::SerialScope serial(/*onednn_too=*/true);
      exec::RunContext ctx(plan_.slots(), exec::RunOptions{});
      std::vector<exec::AlignedBuffer> results;
      bool ok = true;
      for (SlotId id : step.inputs) {
        ctx.set_slot(id, const_cast<std::byte*>(ConstantData(id)));
      }
      for (SlotId id : step.outputs) {
        auto buffer = exec::AllocateAligned(slot(id).byte_size());
        if (!buffer.ok()) {
          ok = false;
          break;
        }
        results.push_back(std::move(buffer).value());
        ctx.set_slot(id, results.back().data());
      }
      if (ok && step.kernel->Run(ctx, step).ok()) {
        for (size_t i = 0; i < step.outputs.size(); ++i) {
          exec::Slot& s = plan_.mutable_slots()[step.outputs[i]];
          s.kind = exec::SlotKind::kConstant;
          s.index = static_cast<int32_t>(plan_.constants().size());
          plan_.mutable_constants().push_back(std::move(results[i]));
        }
        return;
      }
      // A step that fails now fails at run time too, with its context.
    }
  }
  int64_t index = counter_++;
  if (index_frame_.size() <= static_cast<size_t>(index)) {
    index_frame_.resize(index + 1, -1);
  }
  index_frame_[index] = frames_.back().id;
  frame_step_indices_[frames_.back().id].push_back(index);
  for (SlotId id : step.inputs) NoteUse(id, index);
  for (SlotId id : step.outputs) {
    SlotId root = alias_root_[id];
    if (first_def_[root] < 0) first_def_[root] = index;
    // A step running regions writes its outputs (accumulators, loop state)
    // before and while its regions run: they live from the op's start.
    if (regions_in_op_)
      first_def_[root] = std::min(first_def_[root], op_start_);
    NoteUse(root, index);
  }
  const auto* elementwise =
      dynamic_cast<const exec::ElementwiseKernel*>(step.kernel.get());
  if (elementwise != nullptr && elementwise->repeated_element() == 0 &&
      step.inputs.size() == 1 && step.outputs.size() == 1 &&
      alias_root_[step.outputs[0]] == step.outputs[0]) {
    scalar_broadcasts_[step.outputs[0]] = step.inputs[0];
  }
  frames_.back().region->steps.push_back(std::move(step));
}

void Lowering::EmitCopy(const ir::Operation& op, SlotId from, SlotId to) {
  Emit(op, exec::MakeCopyKernel(slot(to).byte_size()), {from}, {to});
}

// --- Regions and blocks
// --------------------------------------------------------

StatusOr<std::vector<const ir::Value*>> Lowering::LowerBlockBody(
    const ir::Block& block) {
  const auto& ops = block.operations();
  if (ops.empty()) return InvalidArgumentError("empty block");
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    RETURN_IF_ERROR(LowerOp(*ops[i]));
  }
  const ir::Operation& terminator = *ops.back();
  std::vector<const ir::Value*> results(terminator.operands().begin(),
                                        terminator.operands().end());
  return results;
}

StatusOr<std::unique_ptr<exec::Region>> Lowering::LowerRegion(
    const ir::Region& region, const std::vector<exec::ValueSpec>& param_specs,
    RegionResults results_kind) {
  if (region.num_blocks() != 1) {
    return UnimplementedError("regions with ", region.num_blocks(),
                              " blocks are not supported");
  }
  const ir::Block& block = region.front();
  regions_in_op_ = true;
  auto lowered = std::make_unique<exec::Region>();
  frames_.push_back(Frame{lowered.get(), next_frame_id_++, {}});
  // Params and results are written and read by the op that runs the
  // region, possibly many times (loops): they live for the whole op.
  std::vector<SlotId> whole_op;
  for (int i = 0; i < block.num_arguments(); ++i) {
    const ir::Value* argument = block.argument(i);
    std::vector<ir::Type> leaves;
    FlattenType(argument->type(), leaves);
    std::vector<SlotId> slots;
    for (const ir::Type& leaf : leaves) {
      size_t index = lowered->params.size();
      SlotId id;
      if (leaf.IsToken()) {
        id = NewToken();
      } else if (index < param_specs.size()) {
        id = param_specs[index].is_token ? NewToken()
                                         : NewTemp(param_specs[index].shape);
      } else {
        if (!leaf.IsTensor() || !leaf.HasStaticShape()) {
          frames_.pop_back();
          return InvalidArgumentError("region argument of type ",
                                      leaf.ToString(), " needs a static shape");
        }
        auto element = SlotElementType(leaf);
        if (!element.ok()) {
          frames_.pop_back();
          return element.status();
        }
        id = NewTemp(ArrayShape{*element, leaf.shape()});
      }
      first_def_[id] = op_start_;
      slots.push_back(id);
      lowered->params.push_back(id);
      whole_op.push_back(id);
    }
    Bind(argument, std::move(slots));
  }
  auto results = LowerBlockBody(block);
  if (!results.ok()) {
    frames_.pop_back();
    return results.status();
  }
  const ir::Operation& terminator = *block.terminator();
  std::set<SlotId> seen;
  for (const ir::Value* value : *results) {
    auto leaves = Leaves(value);
    if (!leaves.ok()) {
      frames_.pop_back();
      return leaves.status();
    }
    for (SlotId id : *leaves) {
      bool own =
          alias_root_[id] == id && slot(id).kind == exec::SlotKind::kTemp &&
          slot_frame_[id] == frames_.back().id &&
          std::find(lowered->params.begin(), lowered->params.end(), id) ==
              lowered->params.end();
      size_t position = lowered->results.size();
      bool unchanged_state = results_kind == RegionResults::kLoopState &&
                             position < lowered->params.size() &&
                             lowered->params[position] == id;
      if (results_kind != RegionResults::kAny && !unchanged_state &&
          (!own || seen.count(id))) {
        SlotId copy = slot(id).is_token ? NewToken() : NewTemp(slot(id).shape);
        EmitCopy(terminator, id, copy);
        id = copy;
      }
      seen.insert(id);
      lowered->results.push_back(id);
      NoteUse(id, counter_);
      if (slot(id).kind == exec::SlotKind::kTemp &&
          slot_frame_[id] == frames_.back().id) {
        first_def_[id] = std::min(
            first_def_[id] < 0 ? op_start_ : first_def_[id], op_start_);
        whole_op.push_back(id);
      }
    }
  }
  if (results_kind == RegionResults::kLoopState) UpdateLoopStateInPlace();
  if (fuse_elementwise_) FuseElementwiseSteps();
  std::set<SlotId> captures = std::move(frames_.back().captures);
  frames_.pop_back();
  for (SlotId id : captures) pending_captures_.push_back(id);
  for (SlotId id : whole_op) pending_whole_op_.push_back(id);
  return lowered;
}

// A scan's stacked outputs are a loop value that each iteration updates
// with a dynamic_update_slice at the step's index (ys[i] = y), as is a
// buffer a fori_loop updates with `.at[i].set` (a scatter). Copied whole
// into a fresh result, a loop of n steps would move O(n^2) bytes; updated
// in place, O(n). In place is sound when the update's other inputs
// are not views of the param and no later step of the body reads it (a
// step running regions might, through a capture, so none may follow).
void Lowering::UpdateLoopStateInPlace() {
  exec::Region& region = *frames_.back().region;
  const std::vector<int64_t>& indices = frame_step_indices_[frames_.back().id];
  if (indices.size() != region.steps.size()) return;  // not tracked
  for (size_t p = 0; p < region.results.size() && p < region.params.size();
       ++p) {
    const SlotId result = region.results[p];
    const SlotId param = region.params[p];
    if (result == param || alias_root_[result] != result ||
        slot(result).kind != exec::SlotKind::kTemp || slot(param).is_token) {
      continue;
    }
    size_t writer = region.steps.size();
    for (size_t q = 0; q < region.steps.size(); ++q) {
      for (SlotId out : region.steps[q].outputs) {
        if (alias_root_[out] == result) writer = q;
      }
    }
    if (writer == region.steps.size()) continue;
    const exec::Step& update = region.steps[writer];
    // A writer that runs regions (a nested loop, a scatter's combiner) may
    // read the param inside them, through a capture rather than an input,
    // while it writes the result.
    bool in_place = !OtherFrameStepBetween(
        writer == 0 ? -1 : indices[writer - 1], indices[writer]);
    int output = static_cast<int>(
        std::find(update.outputs.begin(), update.outputs.end(), result) -
        update.outputs.begin());
    int updated = output < static_cast<int>(update.outputs.size())
                      ? update.kernel->UpdatedInput(output)
                      : -1;
    if (updated >= 0) {
      in_place &= UpdatesInPlace(update, output, param) &&
                  slot(result).byte_size() == slot(param).byte_size();
    } else {
      in_place &= WritesOverLoopParam(region, writer, result, param);
    }
    for (size_t q = writer + 1; q < region.steps.size() && in_place; ++q) {
      in_place &= !OtherFrameStepBetween(indices[q - 1], indices[q]);
      for (SlotId in : region.steps[q].inputs) {
        in_place &= alias_root_[in] != param;
      }
    }
    if (!in_place) continue;
    // The result and its views become views of the param; the body returns
    // the param, which the loop then leaves where it is.
    for (SlotId& root : alias_root_) {
      if (root == result) root = param;
    }
    first_def_[result] = -1;
    region.results[p] = param;
  }
}

bool Lowering::WritesOverLoopParam(const exec::Region& region, size_t writer,
                                   SlotId result, SlotId param) const {
  const exec::Step& step = region.steps[writer];
  if (step.outputs.size() != 1 || step.outputs[0] != result ||
      slot(result).byte_size() != slot(param).byte_size()) {
    return false;
  }
  // The writer reads the param, if at all, element by element before it
  // writes each element (ElementwiseKernel::CanWriteOver).
  const auto* kernel =
      dynamic_cast<const exec::ElementwiseKernel*>(step.kernel.get());
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    if (alias_root_[step.inputs[i]] != param) continue;
    if (kernel == nullptr || kernel->num_outputs() != 1 ||
        !kernel->CanWriteOver(0, static_cast<int>(i))) {
      return false;
    }
  }
  // Elementwise readers before it may be fused with it into one pass over
  // tiles, where a reader of the param whole (a view) would read elements
  // the writer has already overwritten; other readers are done before it
  // starts.
  for (size_t q = 0; q < writer; ++q) {
    const exec::Step& before = region.steps[q];
    const auto* elementwise =
        dynamic_cast<const exec::ElementwiseKernel*>(before.kernel.get());
    if (elementwise == nullptr) continue;
    for (size_t i = 0; i < before.inputs.size(); ++i) {
      if (alias_root_[before.inputs[i]] == param &&
          (static_cast<int>(i) >= elementwise->num_inputs() ||
           elementwise->reads_whole(static_cast<int>(i)))) {
        return false;
      }
    }
  }
  return true;
}

Status Lowering::LowerOp(const ir::Operation& op) {
  std::vector<SlotId> saved_captures = std::move(pending_captures_);
  std::vector<SlotId> saved_whole_op = std::move(pending_whole_op_);
  pending_captures_.clear();
  pending_whole_op_.clear();
  int64_t saved_start = op_start_;
  bool saved_regions = regions_in_op_;
  op_start_ = counter_;
  regions_in_op_ = false;
  Status status = LowerOpNoLifetimes(op);
  // Outer values used inside the op's regions, and the regions' params and
  // results, live until the op's last step.
  for (SlotId id : pending_captures_) NoteUse(id, counter_);
  for (SlotId id : pending_whole_op_) {
    last_use_[id] = std::max(last_use_[id], counter_);
  }
  pending_captures_ = std::move(saved_captures);
  pending_whole_op_ = std::move(saved_whole_op);
  op_start_ = saved_start;
  regions_in_op_ = saved_regions;
  ++counter_;  // keeps the op's end distinct from the next op's steps
  return status;
}

Status Lowering::DeferCustomCallError(const ir::Operation& op,
                                      size_t steps_before, Status error) {
  exec::Region& region = *frames_.back().region;
  if (region.steps.size() > steps_before) {
    region.steps.resize(steps_before);
    frame_step_indices_[frames_.back().id].resize(steps_before);
  }
  std::vector<SlotId> outputs;
  for (int i = 0; i < op.num_results(); ++i) {
    if (op.result(i)->type().IsToken()) {
      SlotId token = NewToken();
      Bind(op.result(i), token);
      outputs.push_back(token);
      continue;
    }
    StatusOr<SlotId> result = NewResult(op, i);
    // Results of no static shape: the error cannot wait for run time.
    if (!result.ok()) return error;
    outputs.push_back(*result);
  }
  // The executor names the op of a failing step (its `where`); an error
  // that begins with that name already would say it twice.
  const std::string where = op.Describe();
  std::string_view message = error.message();
  if (message.size() > where.size() &&
      message.compare(0, where.size(), where) == 0) {
    message.remove_prefix(where.size());
    while (!message.empty() &&
           (message.front() == ':' || message.front() == ' ')) {
      message.remove_prefix(1);
    }
    error = Status(error.code(), std::string(message));
  }
  Emit(op, exec::MakeRunTimeErrorKernel(std::move(error)), {},
       std::move(outputs), /*foldable=*/false);
  return OkStatus();
}

Status Lowering::LowerOpNoLifetimes(const ir::Operation& op) {
  if (lowered_ahead_.erase(&op) > 0) return OkStatus();
  // Ops of other dialects and custom calls go through the registry, which
  // may also override any op by its name (test tooling does, for infeed).
  const LowerFn* fn = custom_calls_.Find(op.name());
  if (fn != nullptr) {
    // An override.
  } else if (op.is(ir::OpCode::kCustomCall)) {
    ir::Attribute target = op.GetAttr("call_target_name");
    std::string name = target.is(ir::AttrKind::kString) ? target.string_value()
                       : target.is(ir::AttrKind::kSymbolRef)
                           ? target.symbol_root()
                           : "";
    fn = custom_calls_.Find(name);
    if (fn == nullptr && exec::FindFfiHandler(name).has_value()) {
      // A handler registered through XLA's FFI (lower_ffi.cc).
      static const LowerFn* ffi_call = new LowerFn(
          [](Lowering& lowering, const ir::Operation& op) -> Status {
            ir::Attribute target = op.GetAttr("call_target_name");
            return LowerFfiCall(lowering, op,
                                target.is(ir::AttrKind::kString)
                                    ? target.string_value()
                                    : target.symbol_root());
          });
      fn = ffi_call;
    }
    if (fn == nullptr) {
      return UnimplementedError(op.Describe(), ": custom_call target \"", name,
                                "\" is not supported by Kiln");
    }
  } else if (op.code() == ir::OpCode::kUnknown ||
             (op.dialect() != "stablehlo" && op.dialect() != "chlo" &&
              op.dialect() != "func")) {
    // Other dialects (check, interpreter, sdy, ...) go through the registry.
    fn = custom_calls_.Find(op.name());
    if (fn == nullptr && op.code() == ir::OpCode::kUnknown) {
      return UnimplementedError(op.Describe(), ": op ", op.name(),
                                " is not supported by Kiln");
    }
  }
  if (fn == nullptr) fn = FindLowering(op.code());
  if (fn == nullptr) {
    return UnimplementedError(op.Describe(), ": not supported by Kiln yet");
  }
  bool quantized = false;
  if (!op.is(ir::OpCode::kUniformQuantize) &&
      !op.is(ir::OpCode::kUniformDequantize) &&
      !op.is(ir::OpCode::kBitcastConvert) && !op.is(ir::OpCode::kCustomCall) &&
      op.dialect() != "check" && op.dialect() != "interpreter" &&
      !quantized_as_float_) {
    for (const ir::Value* operand : op.operands()) {
      quantized |= HasQuantizedType(operand->type());
    }
    for (int i = 0; i < op.num_results(); ++i) {
      quantized |= HasQuantizedType(op.result(i)->type());
    }
  }
  const size_t steps_before = frames_.back().region->steps.size();
  Status status =
      quantized ? LowerQuantizedThroughFloat(op, *fn) : (*fn)(*this, op);
  if (!status.ok() && status.code() == StatusCode::kInvalidArgument &&
      op.is(ir::OpCode::kCustomCall)) {
    // A known target called with operands it cannot take: like XLA, which
    // decodes FFI arguments when the call runs, the program compiles and
    // the call fails if it is reached.
    RETURN_IF_ERROR(DeferCustomCallError(op, steps_before, status));
    status = OkStatus();
  }
  if (!status.ok()) return status;
  for (int i = 0; i < op.num_results(); ++i) {
    if (!values_.count(op.result(i))) {
      return InternalError(op.Describe(), ": result ", i, " was not lowered");
    }
  }
  if (bypassed_ops_.erase(&op) > 0) {
    for (int i = 0; i < op.num_results(); ++i) {
      StatusOr<SlotId> slot = Slot(op.result(i));
      if (slot.ok()) NoteBypassedView(*slot);
    }
  }
  return OkStatus();
}

Status Lowering::LowerQuantizedThroughFloat(const ir::Operation& op,
                                            const LowerFn& fn) {
  // The spec's quantized ops are defined as dequantize, compute in the
  // expressed type, quantize (spec: "dequantize_op_quantize").
  std::vector<std::pair<const ir::Value*, std::vector<SlotId>>> saved;
  for (const ir::Value* operand : op.operands()) {
    const ir::Type& type = operand->type();
    if (!type.IsTensor() || !type.element().is(ir::TypeKind::kQuantized))
      continue;
    bool seen = false;  // an operand used twice is dequantized once
    for (const auto& entry : saved) seen |= entry.first == operand;
    if (seen) continue;
    ASSIGN_OR_RETURN(SlotId storage, Slot(operand));
    const ir::QuantizedType& q = type.element().quantized();
    ArrayShape float_shape{q.expressed_type, shape(storage).dims};
    SlotId expressed = NewTemp(float_shape);
    Emit(op, exec::MakeDequantizeKernel(shape(storage), ToParams(q)), {storage},
         {expressed});
    saved.emplace_back(operand, values_[operand]);
    values_[operand] = {expressed};
  }
  quantized_as_float_ = true;
  Status status = fn(*this, op);
  quantized_as_float_ = false;
  for (auto& [value, leaves] : saved) values_[value] = leaves;
  RETURN_IF_ERROR(status);
  for (int i = 0; i < op.num_results(); ++i) {
    const ir::Type& type = op.result(i)->type();
    if (!type.IsTensor() || !type.element().is(ir::TypeKind::kQuantized))
      continue;
    ASSIGN_OR_RETURN(SlotId expressed, Slot(op.result(i)));
    const ir::QuantizedType& q = type.element().quantized();
    SlotId storage = NewTemp(ArrayShape{q.storage_type, shape(expressed).dims});
    Emit(op, exec::MakeQuantizeKernel(shape(expressed), ToParams(q)),
         {expressed}, {storage});
    Bind(op.result(i), storage);
  }
  return OkStatus();
}

StatusOr<std::vector<std::vector<SlotId>>> Lowering::LowerFunction(
    const ir::Operation& at, const ir::Operation& callee,
    const std::vector<std::vector<SlotId>>& arguments) {
  if (std::find(call_stack_.begin(), call_stack_.end(), &callee) !=
      call_stack_.end()) {
    return InvalidArgumentError(at.Describe(), ": recursive call of @",
                                ir::func::Name(callee));
  }
  if (!ir::func::HasBody(callee)) {
    return InvalidArgumentError(at.Describe(), ": @", ir::func::Name(callee),
                                " is a declaration without a body; Kiln "
                                "runs only functions whose body it has");
  }
  const ir::Block& body = ir::func::Body(callee);
  if (body.num_arguments() != static_cast<int>(arguments.size())) {
    return InvalidArgumentError(
        at.Describe(), ": @", ir::func::Name(callee), " takes ",
        body.num_arguments(), " arguments; the call passes ", arguments.size());
  }
  for (int i = 0; i < body.num_arguments(); ++i) {
    Bind(body.argument(i), arguments[i]);
  }
  call_stack_.push_back(&callee);
  auto results = LowerBlockBody(body);
  call_stack_.pop_back();
  RETURN_IF_ERROR(results.status());
  std::vector<std::vector<SlotId>> leaves;
  for (const ir::Value* value : *results) {
    ASSIGN_OR_RETURN(std::vector<SlotId> value_leaves, Leaves(value));
    leaves.push_back(std::move(value_leaves));
  }
  return leaves;
}

Status Lowering::InlineCall(const ir::Operation& call,
                            const ir::Operation& callee,
                            const std::vector<std::vector<SlotId>>& arguments) {
  ASSIGN_OR_RETURN(std::vector<std::vector<SlotId>> results,
                   LowerFunction(call, callee, arguments));
  if (static_cast<int>(results.size()) != call.num_results()) {
    return InvalidArgumentError(
        call.Describe(), ": @", ir::func::Name(callee), " returns ",
        results.size(), " values; the call expects ", call.num_results());
  }
  for (int i = 0; i < call.num_results(); ++i) {
    Bind(call.result(i), std::move(results[i]));
  }
  return OkStatus();
}

// --- Entry and finishing
// --------------------------------------------------------

namespace {

// The output an argument is donated to: tf.aliasing_output = N; or -1.
int AliasedOutput(const ir::Operation& func, int argument) {
  ir::Attribute attrs = ir::func::ArgAttrs(func, argument);
  if (!attrs.is(ir::AttrKind::kDictionary)) return -1;
  ir::Attribute alias = attrs.Get("tf.aliasing_output");
  if (alias.is(ir::AttrKind::kInteger))
    return static_cast<int>(alias.int_value());
  return -1;
}

bool IsBufferDonor(const ir::Operation& func, int argument) {
  ir::Attribute attrs = ir::func::ArgAttrs(func, argument);
  if (!attrs.is(ir::AttrKind::kDictionary)) return false;
  ir::Attribute donor = attrs.Get("jax.buffer_donor");
  return donor.is(ir::AttrKind::kBool) ? donor.bool_value()
                                       : donor.is(ir::AttrKind::kUnit);
}

}  // namespace

Status Lowering::LowerEntry(const ir::Operation& func,
                            const std::vector<ir::Type>& argument_types,
                            const std::map<int, std::string>& argument_values) {
  const ir::Block& body = ir::func::Body(func);
  if (!argument_types.empty() &&
      static_cast<int>(argument_types.size()) != body.num_arguments()) {
    return InvalidArgumentError("@", ir::func::Name(func), " takes ",
                                body.num_arguments(), " arguments; ",
                                argument_types.size(), " types were given");
  }
  exec::Region& main = plan_.mutable_main();
  frames_.push_back(Frame{&main, next_frame_id_++, {}});
  // Arguments: one slot per leaf.
  std::vector<int> leaf_owner;  // argument number of each argument leaf
  for (int i = 0; i < body.num_arguments(); ++i) {
    const ir::Value* argument = body.argument(i);
    ir::Type type =
        argument_types.empty() ? argument->type() : argument_types[i];
    std::vector<ir::Type> leaves;
    FlattenType(type, leaves);
    std::vector<SlotId> slots;
    for (const ir::Type& leaf : leaves) {
      exec::Slot slot;
      if (leaf.IsToken()) {
        slot.is_token = true;
        slot.shape = ArrayShape{ElementType::kI1, {0}};
      } else if (leaf.IsTensor()) {
        if (!leaf.HasStaticShape()) {
          return InvalidArgumentError(
              "argument ", i, " of @", ir::func::Name(func), " has type ",
              leaf.ToString(),
              "; give concrete argument shapes to compile a program with "
              "dynamic shapes");
        }
        ASSIGN_OR_RETURN(slot.shape.type, SlotElementType(leaf));
        slot.shape.dims = leaf.shape();
      } else {
        return UnimplementedError("argument ", i, " of @", ir::func::Name(func),
                                  " has unsupported type ", leaf.ToString());
      }
      slot.kind = exec::SlotKind::kArgument;
      slot.index = static_cast<int32_t>(plan_.arguments().size());
      plan_.mutable_arguments().push_back({slot.shape, slot.is_token});
      leaf_owner.push_back(i);
      SlotId id = AddSlot(slot);
      main.params.push_back(id);
      slots.push_back(id);
    }
    auto value = argument_values.find(i);
    if (value != argument_values.end() && slots.size() == 1 &&
        !slot(slots[0]).is_token) {
      // Specialize on a known value (a dimension variable).
      ASSIGN_OR_RETURN(SlotId constant,
                       NewConstant(slot(slots[0]).shape, value->second));
      slots[0] = constant;
    }
    Bind(argument, std::move(slots));
  }

  ASSIGN_OR_RETURN(std::vector<const ir::Value*> results, LowerBlockBody(body));
  const ir::Operation& terminator = *body.terminator();

  // Donation: which argument leaf each output leaf may alias.
  std::vector<SlotId> result_leaves;
  for (const ir::Value* value : results) {
    ASSIGN_OR_RETURN(std::vector<SlotId> leaves, Leaves(value));
    result_leaves.insert(result_leaves.end(), leaves.begin(), leaves.end());
  }
  std::vector<int> aliases(result_leaves.size(), -1);
  std::vector<bool> argument_taken(plan_.arguments().size(), false);
  for (size_t leaf = 0; leaf < leaf_owner.size(); ++leaf) {
    int output = AliasedOutput(func, leaf_owner[leaf]);
    if (output >= 0 && output < static_cast<int>(aliases.size()) &&
        aliases[output] < 0) {
      aliases[output] = static_cast<int>(leaf);
      argument_taken[leaf] = true;
    }
  }
  // The module-level form XLA's importers write:
  //   mhlo.input_output_alias = [{alias = {kind = "may_alias",
  //     parameter_index = array<i64>, parameter_number = 0 : i64},
  //     output_index = array<i64: 0>}]
  ir::Attribute module_aliases =
      module_.op().GetAttr("mhlo.input_output_alias");
  if (module_aliases.is(ir::AttrKind::kArray)) {
    for (const ir::Attribute& entry : module_aliases.array()) {
      if (!entry.is(ir::AttrKind::kDictionary)) continue;
      ir::Attribute output_index = entry.Get("output_index");
      ir::Attribute alias = entry.Get("alias");
      if (!alias.is(ir::AttrKind::kDictionary)) continue;
      ir::Attribute parameter = alias.Get("parameter_number");
      if (!parameter.is(ir::AttrKind::kInteger)) continue;
      int64_t output = 0;
      if (output_index.is(ir::AttrKind::kDenseArray) &&
          !output_index.dense_ints().empty()) {
        output = output_index.dense_ints()[0];
      }
      if (output < 0 || output >= static_cast<int64_t>(aliases.size()) ||
          aliases[output] >= 0) {
        continue;
      }
      for (size_t leaf = 0; leaf < leaf_owner.size(); ++leaf) {
        if (leaf_owner[leaf] == parameter.int_value() &&
            !argument_taken[leaf]) {
          aliases[output] = static_cast<int>(leaf);
          argument_taken[leaf] = true;
          break;
        }
      }
    }
  }
  for (size_t leaf = 0; leaf < leaf_owner.size(); ++leaf) {
    if (argument_taken[leaf] || !IsBufferDonor(func, leaf_owner[leaf]))
      continue;
    // A donor goes to the first output of the same shape not yet aliased.
    for (size_t output = 0; output < aliases.size(); ++output) {
      const exec::Slot& out = slot(result_leaves[output]);
      if (aliases[output] < 0 && !out.is_token &&
          out.shape == plan_.arguments()[leaf].shape) {
        aliases[output] = static_cast<int>(leaf);
        argument_taken[leaf] = true;
        break;
      }
    }
  }

  // Outputs: a value computed by a step of the entry region is written in
  // place into the output buffer; anything else (an argument, a constant, a
  // value returned twice, an aliased output) is copied there at the end.
  std::set<SlotId> claimed;
  std::vector<std::pair<SlotId, SlotId>> late_copies;  // aliased outputs
  std::vector<std::pair<SlotId, SlotId>> copies;
  for (size_t k = 0; k < result_leaves.size(); ++k) {
    SlotId id = result_leaves[k];
    const exec::Slot& s = slot(id);
    plan_.mutable_outputs().push_back({s.shape, s.is_token});
    // A reshape or bitcast of a computed value is the same bytes: the value
    // is computed into the output buffer too.
    SlotId root = alias_root_[id];
    const exec::Slot& r = slot(root);
    if (r.kind == exec::SlotKind::kTemp && r.is_token == s.is_token &&
        r.shape.byte_size() == s.shape.byte_size() &&
        slot_frame_[root] == frames_.back().id && first_def_[root] >= 0 &&
        !claimed.count(root) &&
        (aliases[k] < 0 ||
         CanComputeIntoDonatedOutput(main, root, main.params[aliases[k]],
                                     result_leaves))) {
      claimed.insert(root);
      // The slot and every alias of it now live in the output buffer.
      for (size_t other = 0; other < plan_.slots().size(); ++other) {
        if (alias_root_[other] != root) continue;
        exec::Slot& mutable_slot = plan_.mutable_slots()[other];
        mutable_slot.kind = exec::SlotKind::kOutput;
        mutable_slot.index = static_cast<int32_t>(k);
      }
      continue;
    }
    exec::Slot out;
    out.shape = s.shape;
    out.is_token = s.is_token;
    out.kind = exec::SlotKind::kOutput;
    out.index = static_cast<int32_t>(k);
    SlotId out_id = AddSlot(out);
    (aliases[k] >= 0 ? late_copies : copies).emplace_back(id, out_id);
  }
  for (auto [from, to] : copies) EmitCopy(terminator, from, to);
  // Aliased outputs may overwrite donated arguments: snapshot arguments
  // that are still needed, then write them last.
  for (auto& [from, to] : late_copies) {
    if (slot(from).kind == exec::SlotKind::kArgument) {
      SlotId snapshot = NewTemp(slot(from).shape);
      EmitCopy(terminator, from, snapshot);
      from = snapshot;
    }
  }
  for (auto [from, to] : late_copies) EmitCopy(terminator, from, to);
  for (size_t k = 0; k < result_leaves.size(); ++k) {
    main.results.push_back(-1);
  }
  // The main region's results are the output slots, by output index.
  for (size_t id = 0; id < plan_.slots().size(); ++id) {
    const exec::Slot& s = plan_.slots()[id];
    if (s.kind == exec::SlotKind::kOutput && alias_root_[id] == id) {
      main.results[s.index] = static_cast<SlotId>(id);
    }
  }
  plan_.mutable_output_aliases() = aliases;
  if (fuse_elementwise_) FuseElementwiseSteps();
  frames_.pop_back();
  return OkStatus();
}

bool Lowering::UpdatesInPlace(const exec::Step& step, int output,
                              SlotId root) const {
  const int updated = step.kernel->UpdatedInput(output);
  if (updated < 0 || alias_root_[step.inputs[updated]] != root) return false;
  // The update and the indices are read while the output is written: none
  // may be a view of that memory.
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    if (static_cast<int>(i) != updated && alias_root_[step.inputs[i]] == root) {
      return false;
    }
  }
  return true;
}

bool Lowering::CanComputeIntoDonatedOutput(
    const exec::Region& main, SlotId value, SlotId argument,
    const std::vector<SlotId>& returned) const {
  if (slot(argument).kind != exec::SlotKind::kArgument) return false;
  // The argument returned as itself is copied out at the end, after the
  // value is written.
  for (SlotId r : returned) {
    if (alias_root_[r] == alias_root_[argument]) return false;
  }
  auto reads_argument = [&](const exec::Step& step) {
    for (SlotId in : step.inputs) {
      if (alias_root_[in] == alias_root_[argument]) return true;
    }
    return false;
  };
  auto writes_value = [&](const exec::Step& step) {
    for (SlotId out : step.outputs) {
      if (alias_root_[out] == value) return true;
    }
    return false;
  };
  // A step runs regions when their steps took indices between its own and
  // the previous step's of this region.
  const std::vector<int64_t>& indices =
      frame_step_indices_.at(frames_.back().id);
  if (indices.size() != main.steps.size()) return false;
  auto runs_regions = [&](size_t position) {
    return OtherFrameStepBetween(position == 0 ? -1 : indices[position - 1],
                                 indices[position]);
  };
  size_t defining = main.steps.size();
  for (size_t p = 0; p < main.steps.size(); ++p) {
    if (writes_value(main.steps[p])) {
      if (defining != main.steps.size()) return false;  // written twice
      defining = p;
    }
  }
  if (defining == main.steps.size() || runs_regions(defining)) return false;
  for (size_t p = 0; p < main.steps.size(); ++p) {
    const exec::Step& step = main.steps[p];
    if (p > defining) {
      if (reads_argument(step) || runs_regions(p)) return false;
      continue;
    }
    if (!reads_argument(step)) continue;
    const auto* elementwise =
        dynamic_cast<const exec::ElementwiseKernel*>(step.kernel.get());
    if (elementwise == nullptr) {
      // Not fusable, so done before the defining step starts; but the
      // defining step itself must read element by element, or be an update
      // of the argument (a scatter into it) that reads it nowhere else.
      if (p == defining) {
        const auto out = std::find_if(
            step.outputs.begin(), step.outputs.end(),
            [&](SlotId o) { return alias_root_[o] == value; });
        if (!UpdatesInPlace(step,
                            static_cast<int>(out - step.outputs.begin()),
                            alias_root_[argument])) {
          return false;
        }
      }
      continue;
    }
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      if (alias_root_[step.inputs[i]] == alias_root_[argument] &&
          elementwise->reads_whole(static_cast<int>(i))) {
        return false;
      }
    }
  }
  return true;
}

Status Lowering::Finish() {
  plan_.set_num_collectives(next_collective_id_);
  std::vector<BufferRequest> requests;
  std::vector<SlotId> ids;
  std::vector<int64_t> request_of(plan_.slots().size(), -1);
  for (size_t id = 0; id < plan_.slots().size(); ++id) {
    const exec::Slot& s = plan_.slots()[id];
    if (s.kind != exec::SlotKind::kTemp || first_def_[id] < 0) continue;
    request_of[id] = static_cast<int64_t>(requests.size());
    requests.push_back({s.byte_size(), first_def_[id],
                        std::max(first_def_[id], last_use_[id])});
    ids.push_back(static_cast<SlotId>(id));
  }
  // In-place writes whose lifetimes are still as they were noted: the
  // output is first written by that step and the input last read by it
  // (a later reader, such as a loop that captures it, ends the claim).
  for (const InPlaceWrite& write : in_place_writes_) {
    int64_t out = request_of[write.output], in = request_of[write.input];
    if (out < 0 || in < 0 || alias_root_[write.output] != write.output ||
        alias_root_[write.input] != write.input ||
        slot(write.output).is_token || slot(write.input).is_token ||
        first_def_[write.output] != write.first ||
        last_use_[write.input] != write.last ||
        first_def_[write.input] >= write.first) {
      continue;
    }
    requests[out].takes_over = in;
  }
  BufferPlan buffers = PlanBuffers(requests, exec::kBufferAlignment);
  for (size_t i = 0; i < ids.size(); ++i) {
    plan_.mutable_slots()[ids[i]].offset = buffers.offsets[i];
  }
  for (size_t id = 0; id < plan_.slots().size(); ++id) {
    SlotId root = alias_root_[id];
    if (root != static_cast<SlotId>(id) &&
        plan_.slots()[id].kind == exec::SlotKind::kTemp) {
      plan_.mutable_slots()[id].offset = plan_.slots()[root].offset;
    }
  }
  plan_.set_arena_bytes(buffers.total_bytes);
  plan_.set_live_peak_bytes(buffers.live_peak_bytes);
  plan_.set_num_steps(counter_ - fused_away_);
  return OkStatus();
}

}  // namespace kiln::compile
