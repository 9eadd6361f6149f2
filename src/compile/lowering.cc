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

void FlattenType(const ir::Type& type, std::vector<ir::Type>& leaves) {
  if (type.IsTuple()) {
    for (const ir::Type& element : type.elements())
      FlattenType(element, leaves);
  } else {
    leaves.push_back(type);
  }
}

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

}  // namespace kiln::compile
