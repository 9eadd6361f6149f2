#include "compile/recover_erfc.h"

#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "compile/lower_families.h"
#include "exec/kernels/element.h"
#include "ir/attributes.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

// Whether `loc` names the op as part of erfc's lowering: the innermost name
// of a JAX name stack entry, "jit(f)/erfc" or "jit(f)/jvp(erfc)".
bool NamedErfc(const ir::Location& loc) {
  switch (loc.kind()) {
    case ir::LocationKind::kName: {
      std::string_view name = loc.name();
      while (!name.empty() && name.back() == ')') name.remove_suffix(1);
      size_t cut = name.find_last_of("/(");
      if (cut != std::string_view::npos) name.remove_prefix(cut + 1);
      return name == "erfc" || NamedErfc(loc.child());
    }
    case ir::LocationKind::kCallSite:
      return NamedErfc(loc.callee());
    case ir::LocationKind::kFused:
      for (const ir::Location& part : loc.fused()) {
        if (NamedErfc(part)) return true;
      }
      return false;
    default:
      return false;
  }
}

bool IsF32Tensor(const ir::Type& type) {
  return type.IsTensor() && type.element().is(ir::TypeKind::kElement) &&
         type.element().element_type() == ir::ElementType::kF32;
}

// Points across erfc's range: both branches of every expansion (|x| below
// and above 1, 2, ...), both signs, and far enough out that the
// exponential's cut-off is exercised.
constexpr double kSamples[] = {-9.0, -5.0,  -3.1,  -2.0, -1.5, -1.0,  -0.75,
                               -0.5, -0.2,  -1e-3, 0.0,  1e-3, 0.2,   0.5,
                               0.75, 0.999, 1.0,   1.25, 1.5,  1.999, 2.0,
                               2.5,  3.0,   4.0,   5.5,  7.0,  8.5};
constexpr size_t kNumSamples = sizeof(kSamples) / sizeof(kSamples[0]);
using Samples = std::vector<double>;

// Evaluates the candidate `ops` (in block order) at the sample points, with
// `input` taking them; the values of `output`, or nothing when an op is not
// one the check can evaluate.
std::optional<Samples> Evaluate(const std::vector<ir::Operation*>& ops,
                                const ir::Value* input,
                                const ir::Value* output) {
  std::map<const ir::Value*, Samples> values;
  values[input] = Samples(std::begin(kSamples), std::end(kSamples));
  auto operand = [&](const ir::Operation& op, int i) -> std::optional<Samples> {
    const ir::Value* v = op.operand(i);
    auto it = values.find(v);
    if (it != values.end()) return it->second;
    const ir::Operation* def = v->defining_op();
    if (def == nullptr) return std::nullopt;
    std::optional<double> splat = FloatSplat(*def);
    if (!splat) return std::nullopt;
    return Samples(kNumSamples, *splat);
  };
  for (ir::Operation* op : ops) {
    if (op->num_results() != 1) return std::nullopt;
    std::vector<Samples> in;
    for (int i = 0; i < op->num_operands(); ++i) {
      std::optional<Samples> one = operand(*op, i);
      if (!one) return std::nullopt;
      in.push_back(std::move(*one));
    }
    Samples out(kNumSamples);
    // out = f(operands...) element by element, for an op of that arity.
    auto unary = [&](auto f) {
      if (in.size() != 1) return false;
      for (size_t s = 0; s < kNumSamples; ++s) out[s] = f(in[0][s]);
      return true;
    };
    auto binary = [&](auto f) {
      if (in.size() != 2) return false;
      for (size_t s = 0; s < kNumSamples; ++s) out[s] = f(in[0][s], in[1][s]);
      return true;
    };
    auto ternary = [&](auto f) {
      if (in.size() != 3) return false;
      for (size_t s = 0; s < kNumSamples; ++s) {
        out[s] = f(in[0][s], in[1][s], in[2][s]);
      }
      return true;
    };
    bool evaluated = false;
    switch (op->code()) {
      case OpCode::kConstant: {
        std::optional<double> splat = FloatSplat(*op);
        if (splat) out.assign(kNumSamples, *splat);
        evaluated = splat.has_value();
        break;
      }
      case OpCode::kBroadcastInDim:
        // Of a scalar constant only: its element everywhere.
        evaluated = op->operand(0)->type().IsTensor() &&
                    op->operand(0)->type().NumElements() == 1 &&
                    unary([](double a) { return a; });
        break;
      case OpCode::kAdd:
        evaluated = binary([](double a, double b) { return a + b; });
        break;
      case OpCode::kSubtract:
        evaluated = binary([](double a, double b) { return a - b; });
        break;
      case OpCode::kMultiply:
        evaluated = binary([](double a, double b) { return a * b; });
        break;
      case OpCode::kDivide:
        evaluated = binary([](double a, double b) { return a / b; });
        break;
      case OpCode::kMaximum:
        evaluated = binary([](double a, double b) { return std::fmax(a, b); });
        break;
      case OpCode::kMinimum:
        evaluated = binary([](double a, double b) { return std::fmin(a, b); });
        break;
      case OpCode::kNegate:
        evaluated = unary([](double a) { return -a; });
        break;
      case OpCode::kAbs:
        evaluated = unary([](double a) { return std::fabs(a); });
        break;
      case OpCode::kExponential:
        evaluated = unary([](double a) { return std::exp(a); });
        break;
      case OpCode::kClamp:  // clamp(min, operand, max)
        evaluated = ternary([](double lo, double a, double hi) {
          return std::fmin(std::fmax(a, lo), hi);
        });
        break;
      case OpCode::kSelect:
        evaluated = ternary(
            [](double c, double a, double b) { return c != 0 ? a : b; });
        break;
      case OpCode::kCompare: {
        ir::Attribute direction = op->GetAttr("comparison_direction");
        if (!direction.is(ir::AttrKind::kEnum)) break;
        const int64_t d = direction.enum_value();
        evaluated = binary([d](double a, double b) -> double {
          switch (d) {
            case ir::kEQ:
              return a == b;
            case ir::kNE:
              return a != b;
            case ir::kGE:
              return a >= b;
            case ir::kGT:
              return a > b;
            case ir::kLE:
              return a <= b;
            case ir::kLT:
              return a < b;
            default:
              return std::nan("");
          }
        });
        break;
      }
      default:
        break;
    }
    if (!evaluated) return std::nullopt;
    values[op->result(0)] = std::move(out);
  }
  auto it = values.find(output);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

bool AgreesWithErfc(const Samples& got) {
  for (size_t s = 0; s < kNumSamples; ++s) {
    const double want = std::erfc(kSamples[s]);
    if (!(std::fabs(got[s] - want) <= 1e-5 * want + 1e-30)) return false;
  }
  return true;
}

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) {
    std::iota(parent.begin(), parent.end(), 0);
  }
  size_t Find(size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void Join(size_t a, size_t b) { parent[Find(a)] = Find(b); }
};

int RecoverInBlock(ir::Block& block) {
  const auto& ops = block.operations();
  // Candidates: named ops other than constants, by position.
  std::vector<size_t> named;
  std::map<const ir::Operation*, size_t> index_of;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i]->is(OpCode::kConstant) || ops[i]->num_regions() > 0 ||
        !NamedErfc(ops[i]->loc())) {
      continue;
    }
    index_of[ops[i].get()] = named.size();
    named.push_back(i);
  }
  if (named.empty()) return 0;
  // The block's ops that read each value (a use inside an op's regions
  // counts as that op's).
  std::map<const ir::Value*, std::set<const ir::Operation*>> readers;
  for (const auto& op : ops) {
    op->Walk([&](ir::Operation& inner) {
      for (const ir::Value* v : inner.operands()) readers[v].insert(op.get());
    });
  }
  UnionFind sets(named.size());
  for (size_t c = 0; c < named.size(); ++c) {
    for (const ir::Value* v : ops[named[c]]->operands()) {
      auto it = index_of.find(v->defining_op());
      if (it != index_of.end()) sets.Join(c, it->second);
    }
  }
  std::map<size_t, std::vector<ir::Operation*>> components;
  for (size_t c = 0; c < named.size(); ++c) {
    components[sets.Find(c)].push_back(ops[named[c]].get());
  }

  int rebuilt = 0;
  std::set<const ir::Operation*> removed;
  for (auto& [root, members] : components) {
    std::set<const ir::Operation*> in_component(members.begin(), members.end());
    std::set<ir::Value*> inputs;
    std::vector<ir::Value*> outputs;
    for (ir::Operation* op : members) {
      for (ir::Value* v : op->operands()) {
        const ir::Operation* def = v->defining_op();
        if (in_component.count(def) != 0) continue;
        if (def != nullptr && FloatSplat(*def)) continue;
        inputs.insert(v);
      }
      for (int r = 0; r < op->num_results(); ++r) {
        for (const ir::Operation* reader : readers[op->result(r)]) {
          if (in_component.count(reader) == 0) {
            outputs.push_back(op->result(r));
            break;
          }
        }
      }
    }
    if (inputs.size() != 1 || outputs.size() != 1) continue;
    ir::Value* x = *inputs.begin();
    ir::Value* y = outputs.front();
    if (!IsF32Tensor(x->type()) || !(x->type() == y->type())) continue;
    std::optional<Samples> values = Evaluate(members, x, y);
    if (!values || !AgreesWithErfc(*values)) continue;

    // One chlo.erfc where the expansion's result was made; its readers
    // read the new op, and the expansion goes.
    ir::Operation* last = y->defining_op();
    auto erfc = std::make_unique<ir::Operation>(
        "chlo.erfc", std::vector<ir::Type>{y->type()}, last->loc());
    erfc->AddOperand(x);
    erfc->SetAttr(kFloatExpansionAttr, ir::Attribute::Unit());
    ir::Operation* made = block.InsertBefore(
        static_cast<size_t>(block.IndexOf(last)), std::move(erfc));
    for (const auto& op : ops) {
      if (in_component.count(op.get()) != 0) continue;
      op->Walk([&](ir::Operation& inner) {
        for (int i = 0; i < inner.num_operands(); ++i) {
          if (inner.operand(i) == y) inner.SetOperand(i, made->result(0));
        }
      });
    }
    removed.insert(in_component.begin(), in_component.end());
    ++rebuilt;
  }
  if (rebuilt == 0) return 0;

  // Drop the expansions, then the constants only they read.
  std::vector<std::unique_ptr<ir::Operation>> kept;
  for (auto& op : block.TakeOperations()) {
    if (removed.count(op.get()) == 0) kept.push_back(std::move(op));
  }
  std::set<const ir::Value*> still_read;
  for (const auto& op : kept) {
    op->Walk([&](ir::Operation& inner) {
      for (const ir::Value* v : inner.operands()) still_read.insert(v);
    });
  }
  std::vector<std::unique_ptr<ir::Operation>> live;
  for (auto& op : kept) {
    const bool dead_constant = op->is(OpCode::kConstant) &&
                               NamedErfc(op->loc()) &&
                               still_read.count(op->result(0)) == 0;
    if (!dead_constant) live.push_back(std::move(op));
  }
  block.SetOperations(std::move(live));
  return rebuilt;
}

}  // namespace

bool NamesErfc(const ir::Module& module) {
  bool found = false;
  module.op().Walk([&](ir::Operation& op) {
    if (!found && !op.is(OpCode::kConstant) && NamedErfc(op.loc())) {
      found = true;
    }
  });
  return found;
}

int RecoverErfc(ir::Module& module) {
  // Every block first: rebuilding changes a block's op list, not the
  // blocks nested in it.
  std::vector<ir::Block*> blocks;
  module.op().Walk([&](ir::Operation& op) {
    for (int r = 0; r < op.num_regions(); ++r) {
      for (const auto& block : op.region(r).blocks()) {
        blocks.push_back(block.get());
      }
    }
  });
  int rebuilt = 0;
  for (ir::Block* block : blocks) rebuilt += RecoverInBlock(*block);
  return rebuilt;
}

}  // namespace kiln::compile
