#include "tools/check/check_targets.h"

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "ir/float_bits.h"
#include "tools/check/run_parallel.h"

namespace kiln::check {
namespace {

using compile::Lowering;
using compile::SlotId;
using exec::ArrayShape;
using ir::ElementType;

using Mode = Comparison::Mode;

// An integer whose order is the float order (for ULP distances).
int64_t UlpKey(ElementType type, uint64_t bits) {
  int width = ir::BitWidth(type);
  uint64_t sign = uint64_t{1} << (width - 1);
  uint64_t magnitude = bits & (sign - 1);
  return (bits & sign) ? -static_cast<int64_t>(magnitude)
                       : static_cast<int64_t>(magnitude);
}

// |a - b| for two ULP keys, computed in unsigned arithmetic: keys of
// large f64 values of opposite signs are more than INT64_MAX apart.
uint64_t UlpDistance(int64_t a, int64_t b) {
  return a >= b ? static_cast<uint64_t>(a) - static_cast<uint64_t>(b)
                : static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
}

uint64_t RawBits(ElementType type, const std::byte* data, int64_t index) {
  int bytes = ir::StorageBytes(type);
  uint64_t raw = 0;
  std::memcpy(&raw, data + index * bytes, bytes);
  int width = ir::BitWidth(type);
  if (width < 64) raw &= (uint64_t{1} << width) - 1;
  return raw;
}

// Whether two real components agree; the NaN and non-finite rules are the
// corpus's: equal passes, NaN matches NaN, other non-finite values must be
// equal.
bool CloseReal(double a, double b, ElementType type, uint64_t bits_a,
               uint64_t bits_b, const Comparison& c) {
  if (c.mode == Mode::kUlps) {
    // The ULP distance: 0 for equal values (and NaN against NaN), the
    // largest distance when either side is not finite, else the number of
    // representable values between them. Passes within [min, max].
    uint64_t distance;
    if ((std::isnan(a) && std::isnan(b)) || a == b) {
      distance = 0;
    } else if (!std::isfinite(a) || !std::isfinite(b)) {
      distance = ~uint64_t{0};
    } else {
      distance = UlpDistance(UlpKey(type, bits_a), UlpKey(type, bits_b));
    }
    return distance >= c.min_ulps && distance <= c.max_ulps;
  }
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true;
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  switch (c.mode) {
    case Mode::kExact:
      return false;
    case Mode::kAbsolute:
      return std::fabs(a - b) <= c.tolerance;
    case Mode::kUlps:
      return UlpDistance(UlpKey(type, bits_a), UlpKey(type, bits_b)) <=
             c.max_ulps;
  }
  return false;
}

std::string FormatIndex(const ArrayShape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.dims.size());
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    if (shape.dims[d] == 0) break;
    index[d] = flat % shape.dims[d];
    flat /= shape.dims[d];
  }
  return "[" + StrJoin(index, ", ") + "]";
}

std::string FormatElement(ElementType type, const std::byte* data, int64_t i) {
  if (ir::IsComplex(type)) {
    exec::c128 v = exec::LoadComplex(type, data, i);
    return StrCat("(", v.real(), ", ", v.imag(), ")");
  }
  if (ir::IsFloat(type)) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.9g", exec::LoadDouble(type, data, i));
    return text;
  }
  if (type == ElementType::kUI64) {
    uint64_t v;
    std::memcpy(&v, data + i * 8, 8);
    return std::to_string(v);
  }
  return std::to_string(exec::LoadInt(type, data, i));
}

}  // namespace

Status Compare(const ArrayShape& shape, const std::byte* actual,
               const std::byte* expected, const Comparison& c) {
  ElementType type = shape.type;
  int64_t count = shape.num_elements();
  int64_t mismatches = 0;
  int64_t first = -1;
  for (int64_t i = 0; i < count; ++i) {
    bool same;
    if (ir::IsComplex(type)) {
      ElementType part = ir::ComplexComponentType(type);
      int part_bytes = ir::StorageBytes(part);
      const std::byte* a = actual + i * 2 * part_bytes;
      const std::byte* b = expected + i * 2 * part_bytes;
      same =
          CloseReal(exec::LoadDouble(part, a, 0), exec::LoadDouble(part, b, 0),
                    part, RawBits(part, a, 0), RawBits(part, b, 0), c) &&
          CloseReal(exec::LoadDouble(part, a, 1), exec::LoadDouble(part, b, 1),
                    part, RawBits(part, a, 1), RawBits(part, b, 1), c);
    } else if (ir::IsFloat(type)) {
      same = CloseReal(exec::LoadDouble(type, actual, i),
                       exec::LoadDouble(type, expected, i), type,
                       RawBits(type, actual, i), RawBits(type, expected, i), c);
    } else {
      same = RawBits(type, actual, i) == RawBits(type, expected, i);
    }
    if (!same) {
      if (first < 0) first = i;
      ++mismatches;
    }
  }
  if (mismatches == 0) return OkStatus();
  return AbortedError("check failed: element ", FormatIndex(shape, first),
                      " is ", FormatElement(type, actual, first), ", expected ",
                      FormatElement(type, expected, first), " (", mismatches,
                      " of ", count, " elements differ)");
}

namespace {

class CheckKernel : public exec::Kernel {
 public:
  CheckKernel(ArrayShape shape, Comparison comparison)
      : shape_(std::move(shape)), comparison_(comparison) {}
  Status Run(exec::RunContext& ctx, const exec::Step& step) const override {
    int actual = comparison_.expected_first ? 1 : 0;
    RETURN_IF_ERROR(Compare(shape_, ctx.slot(step.inputs[actual]),
                            ctx.slot(step.inputs[1 - actual]), comparison_));
    // check.eq returns an i1 `true`.
    for (exec::SlotId out : step.outputs) {
      if (ctx.slot_info(out).byte_size() > 0) {
        std::memset(ctx.slot(out), 1, ctx.slot_info(out).byte_size());
      }
    }
    return OkStatus();
  }

 private:
  ArrayShape shape_;
  Comparison comparison_;
};

// Checks of two operands (or one operand and the `value` attribute).
Status LowerCheck(Lowering& lowering, const ir::Operation& op, Comparison c,
                  bool against_value) {
  ASSIGN_OR_RETURN(SlotId actual, lowering.Operand(op, 0));
  const ArrayShape& shape = lowering.shape(actual);
  SlotId expected;
  if (against_value) {
    ir::Attribute value = op.GetAttr("value");
    if (!value.is(ir::AttrKind::kDenseElements)) {
      return InvalidArgumentError(op.Describe(), ": missing value");
    }
    std::string data = value.DenseDataExpanded();
    ElementType type = value.type().StorageElementType();
    if (type != shape.type ||
        static_cast<int64_t>(data.size()) != shape.byte_size()) {
      return InvalidArgumentError(op.Describe(), ": expected value of type ",
                                  value.type().ToString(), " for ",
                                  shape.ToString());
    }
    // Canonical storage: i1 as 0/1, sub-byte integers extended.
    for (int64_t i = 0; i < shape.num_elements(); ++i) {
      if (ir::IsInteger(type) || ir::IsBool(type)) {
        exec::StoreInt(
            type, reinterpret_cast<std::byte*>(data.data()), i,
            exec::LoadInt(type, reinterpret_cast<const std::byte*>(data.data()),
                          i));
      }
    }
    ASSIGN_OR_RETURN(expected, lowering.NewConstant(shape, data));
  } else {
    ASSIGN_OR_RETURN(expected, lowering.Operand(op, 1));
    if (lowering.shape(expected) != shape) {
      return InvalidArgumentError(op.Describe(), ": compares ",
                                  shape.ToString(), " with ",
                                  lowering.shape(expected).ToString());
    }
  }
  std::vector<SlotId> outputs;
  for (int i = 0; i < op.num_results(); ++i) {
    ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, i));
    outputs.push_back(out);
  }
  lowering.Emit(op, std::make_unique<CheckKernel>(shape, c), {actual, expected},
                std::move(outputs), /*foldable=*/false);
  return OkStatus();
}

double ToleranceAttr(const ir::Operation& op, double fallback) {
  ir::Attribute tolerance = op.GetAttr("tolerance");
  if (tolerance.is(ir::AttrKind::kFloat)) return tolerance.float_value();
  return fallback;
}

// Values recorded by interpreter.probe, compared by
// check.expect_serialized_eq (the reference interpreter writes them to
// files; here they stay in memory for the run).
struct ProbeStore {
  std::mutex mutex;
  std::map<std::string, std::vector<std::string>> values;  // per iteration
};

class ProbeKernel : public exec::Kernel {
 public:
  ProbeKernel(std::shared_ptr<ProbeStore> store, std::string id, bool record,
              int64_t iteration)
      : store_(std::move(store)),
        id_(std::move(id)),
        record_(record),
        iteration_(iteration) {}
  Status Run(exec::RunContext& ctx, const exec::Step& step) const override {
    exec::SlotId input = step.inputs[0];
    std::string bytes(reinterpret_cast<const char*>(ctx.slot(input)),
                      ctx.slot_info(input).byte_size());
    std::lock_guard<std::mutex> lock(store_->mutex);
    if (record_) {
      store_->values[id_].push_back(bytes);
      if (!step.outputs.empty()) ctx.CopySlot(input, step.outputs[0]);
      return OkStatus();
    }
    auto it = store_->values.find(id_);
    if (it == store_->values.end() ||
        iteration_ >= static_cast<int64_t>(it->second.size())) {
      return AbortedError("check failed: probe \"", id_, "\" iteration ",
                          iteration_, " was not recorded");
    }
    if (it->second[iteration_] != bytes) {
      return AbortedError("check failed: value differs from probe \"", id_,
                          "\"");
    }
    return OkStatus();
  }

 private:
  std::shared_ptr<ProbeStore> store_;
  std::string id_;
  bool record_;
  int64_t iteration_;
};

}  // namespace

void RegisterCheckTargets(compile::CustomCallRegistry& registry) {
  Comparison exact{Mode::kExact};
  Comparison close{.mode = Mode::kUlps, .max_ulps = kExpectCloseUlps};
  registry.Register("check.expect_eq",
                    [exact](Lowering& l, const ir::Operation& op) {
                      return LowerCheck(l, op, exact, false);
                    });
  registry.Register("check.expect_close",
                    [close](Lowering& l, const ir::Operation& op) {
                      Comparison c = close;
                      ir::Attribute ulps = op.GetAttr("max_ulp_difference");
                      if (ulps.is(ir::AttrKind::kInteger))
                        c.max_ulps = static_cast<uint64_t>(ulps.int_value());
                      ir::Attribute min = op.GetAttr("min_ulp_difference");
                      if (min.is(ir::AttrKind::kInteger))
                        c.min_ulps = static_cast<uint64_t>(min.int_value());
                      return LowerCheck(l, op, c, false);
                    });
  registry.Register("check.expect_almost_eq", [](Lowering& l,
                                                 const ir::Operation& op) {
    // The custom call of testdata/ uses 1e-3; the check op its attribute.
    double fallback = op.is(ir::OpCode::kCustomCall) ? kExpectAlmostEqTolerance
                                                     : kCheckOpDefaultTolerance;
    return LowerCheck(
        l, op,
        {.mode = Mode::kAbsolute, .tolerance = ToleranceAttr(op, fallback)},
        false);
  });
  registry.Register("check.eq", [](Lowering& l, const ir::Operation& op) {
    // check.eq(expected, actual): the expected value comes first.
    return LowerCheck(l, op,
                      {.mode = Mode::kAbsolute,
                       .tolerance = kCheckOpDefaultTolerance,
                       .expected_first = true},
                      false);
  });
  registry.Register("check.expect_eq_const",
                    [exact](Lowering& l, const ir::Operation& op) {
                      return LowerCheck(l, op, exact, true);
                    });
  registry.Register(
      "check.expect_almost_eq_const", [](Lowering& l, const ir::Operation& op) {
        return LowerCheck(
            l, op,
            {.mode = Mode::kAbsolute,
             .tolerance = ToleranceAttr(op, kCheckOpDefaultTolerance)},
            true);
      });
  auto store = std::make_shared<ProbeStore>();
  auto probe = [store](bool record) {
    return [store, record](Lowering& l, const ir::Operation& op) -> Status {
      ir::Attribute id = op.GetAttr("probe_id");
      if (!id.is(ir::AttrKind::kString)) {
        return InvalidArgumentError(op.Describe(), ": missing probe_id");
      }
      ASSIGN_OR_RETURN(SlotId input, l.Operand(op, 0));
      std::vector<SlotId> outputs;
      if (op.num_results() > 0) {
        outputs.push_back(l.NewTemp(l.shape(input)));
        l.Bind(op.result(0), outputs[0]);
      }
      ir::Attribute iter = op.GetAttr("iter");
      int64_t iteration =
          iter.is(ir::AttrKind::kInteger) ? iter.int_value() : 0;
      l.Emit(op,
             std::make_unique<ProbeKernel>(store, id.string_value(), record,
                                           iteration),
             {input}, outputs, /*foldable=*/false);
      return OkStatus();
    };
  };
  registry.Register("interpreter.probe", probe(true));
  registry.Register("check.expect_serialized_eq", probe(false));
  // interpreter.run_parallel with one program: a call of it. Its `infeed`
  // functions make the queue that stablehlo.infeed reads from, in order.
  auto feed = std::make_shared<std::vector<std::vector<SlotId>>>();
  const compile::CustomCallRegistry* programs_registry = &registry;
  registry.Register(
      "interpreter.run_parallel",
      [feed, programs_registry](Lowering& l,
                                const ir::Operation& op) -> Status {
        ir::Attribute infeed = op.GetAttr("infeed");
        if (infeed.is(ir::AttrKind::kArray)) {
          for (const ir::Attribute& ref : infeed.array()) {
            const ir::Operation* producer =
                ref.is(ir::AttrKind::kSymbolRef)
                    ? l.module().LookupFunction(ref.symbol_root())
                    : nullptr;
            if (producer == nullptr) {
              return InvalidArgumentError(op.Describe(),
                                          ": bad infeed function");
            }
            ASSIGN_OR_RETURN(std::vector<std::vector<SlotId>> values,
                             l.LowerFunction(op, *producer, {}));
            for (auto& value : values) feed->push_back(std::move(value));
          }
        }
        ir::Attribute programs = op.GetAttr("programs");
        std::vector<std::string> names;
        std::vector<std::vector<std::string>> grid;
        if (programs.is(ir::AttrKind::kArray)) {
          for (const ir::Attribute& row : programs.array()) {
            if (!row.is(ir::AttrKind::kArray)) continue;
            grid.emplace_back();
            for (const ir::Attribute& ref : row.array()) {
              if (!ref.is(ir::AttrKind::kSymbolRef)) continue;
              names.push_back(ref.symbol_root());
              grid.back().push_back(ref.symbol_root());
            }
          }
        }
        if (names.size() > 1) {
          return LowerRunParallel(l, op, grid, *programs_registry);
        }
        if (names.size() != 1) {
          return InvalidArgumentError(op.Describe(), ": no programs");
        }
        const ir::Operation* callee = l.module().LookupFunction(names[0]);
        if (callee == nullptr) {
          return InvalidArgumentError(op.Describe(), ": no function @",
                                      names[0]);
        }
        std::vector<std::vector<SlotId>> arguments;
        for (const ir::Value* operand : op.operands()) {
          ASSIGN_OR_RETURN(std::vector<SlotId> leaves, l.Leaves(operand));
          arguments.push_back(std::move(leaves));
        }
        return l.InlineCall(op, *callee, arguments);
      });
  registry.Register("stablehlo.infeed",
                    [feed](Lowering& l, const ir::Operation& op) -> Status {
                      // Results: the values, then a token.
                      for (int i = 0; i + 1 < op.num_results(); ++i) {
                        if (feed->empty()) {
                          return FailedPreconditionError(
                              op.Describe(), ": the infeed queue is empty");
                        }
                        l.Bind(op.result(i), feed->front());
                        feed->erase(feed->begin());
                      }
                      if (op.num_results() > 0)
                        l.Bind(op.result(op.num_results() - 1), l.NewToken());
                      return OkStatus();
                    });
  registry.Register("stablehlo.outfeed",
                    [](Lowering& l, const ir::Operation& op) {
                      // The values go nowhere here; the result is a token.
                      l.Bind(op.result(0), l.NewToken());
                      return OkStatus();
                    });
  registry.Register("interpreter.print",
                    [](Lowering&, const ir::Operation&) { return OkStatus(); });
}

}  // namespace kiln::check
