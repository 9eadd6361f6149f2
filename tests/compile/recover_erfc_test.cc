// Rebuilding erfc from its expansion (compile/recover_erfc.h): an
// expansion named after erfc is replaced by one chlo.erfc that computes
// the same function; one that is not erfc, is not named so, or whose
// inner values are read elsewhere stays as it is.
//
// The expansions here are written by the test from Kiln's own fitted
// approximation (exec/kernels/fast_math.h: erf x / x = P(x^2) on |x| < 1,
// erfc x = e^(-x^2) R(1/x) beyond), op by op as a serializer would expand
// it, each op at a location like JAX's ("jit(f)/erfc").
#include "compile/recover_erfc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "program_runner.h"

namespace kiln::testing {
namespace {

using ir::ElementType;

constexpr double kSmall[] = {
    1.128379167e+00, -3.761262884e-01, 1.128361242e-01, -2.685480830e-02,
    5.190053212e-03, -8.024351373e-04, 7.898202138e-05};
constexpr double kLarge[] = {-1.26959191224344741e-06, 5.64245966817497169e-01,
                             -1.07707474076337438e-03, -2.70477631673791130e-01,
                             -7.77160489474895272e-02, 7.52313561963397937e-01,
                             -8.27763696080567546e-01, -2.47049253265604535e-01,
                             1.69249775530578717e+00,  -2.16488717968880406e+00,
                             1.45268168712516532e+00,  -5.27161757284243970e-01,
                             8.19785186273580824e-02};

// Writes ops of one function body as text: each returns its value's name.
class Writer {
 public:
  Writer(std::string type, std::string loc)
      : type_(std::move(type)), loc_(std::move(loc)) {}

  std::string Constant(double value) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.17e", value);
    return Op(std::string("stablehlo.constant dense<") + text + "> : " + type_);
  }
  std::string Binary(const char* name, const std::string& a,
                     const std::string& b) {
    return Op(std::string("stablehlo.") + name + " " + a + ", " + b + " : " +
              type_);
  }
  std::string Unary(const char* name, const std::string& a) {
    return Op(std::string("stablehlo.") + name + " " + a + " : " + type_);
  }
  std::string Less(const std::string& a, const std::string& b) {
    return Op("stablehlo.compare LT, " + a + ", " + b + " : (" + type_ + ", " +
              type_ + ") -> " + BoolType());
  }
  std::string Select(const std::string& c, const std::string& a,
                     const std::string& b) {
    return Op("stablehlo.select " + c + ", " + a + ", " + b + " : " +
              BoolType() + ", " + type_);
  }
  // Horner's rule over `coefficients` (highest power last) at `t`.
  std::string Polynomial(const double* coefficients, int count,
                         const std::string& t) {
    std::string p = Constant(coefficients[count - 1]);
    for (int i = count - 2; i >= 0; --i) {
      p = Binary("add", Binary("multiply", p, t), Constant(coefficients[i]));
    }
    return p;
  }
  // erfc(x), expanded: scale perturbs the first coefficient of the small
  // branch (1 leaves it erfc).
  std::string Erfc(const std::string& x, double scale = 1.0) {
    std::vector<double> small(std::begin(kSmall), std::end(kSmall));
    small[0] *= scale;
    std::string one = Constant(1.0), two = Constant(2.0), zero = Constant(0.0);
    std::string ax = Unary("abs", x);
    std::string p = Polynomial(small.data(), 7, Binary("multiply", x, x));
    std::string near = Binary("subtract", one, Binary("multiply", x, p));
    std::string clamped = Op("stablehlo.clamp " + one + ", " + ax + ", " +
                             Constant(10.0) + " : " + type_);
    std::string r = Polynomial(kLarge, 13, Binary("divide", one, clamped));
    std::string e = Unary(
        "exponential", Unary("negate", Binary("multiply", clamped, clamped)));
    std::string q = Binary("multiply", e, r);
    std::string far = Select(Less(x, zero), Binary("subtract", two, q), q);
    return Select(Less(ax, one), near, far);
  }

  std::string text() const { return text_; }

 private:
  std::string BoolType() const {
    return type_.substr(0, type_.rfind('x') + 1) + "i1>";
  }
  std::string Op(const std::string& body) {
    std::string name = "%v" + std::to_string(next_++);
    text_ += "    " + name + " = " + body + " loc(\"" + loc_ + "\")\n";
    return name;
  }

  std::string type_, loc_, text_;
  int next_ = 0;
};

constexpr int64_t kCount = 64;
const std::string kType = "tensor<64xf32>";

std::string Program(const std::string& body, const std::string& result,
                    int arguments = 1) {
  std::string signature;
  for (int i = 0; i < arguments; ++i) {
    signature +=
        (i ? ", " : "") + std::string("%x") + std::to_string(i) + ": " + kType;
  }
  return "func.func @main(" + signature + ") -> " + kType + " {\n" + body +
         "    return " + result + " : " + kType + "\n}\n";
}

std::vector<float> Inputs() {
  std::vector<float> x(kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    x[i] = -9.5f + 19.0f * static_cast<float>(i) / (kCount - 1);
  }
  x[kCount / 2] = 0.0f;
  return x;
}

struct Rebuilt {
  int count = 0;
  std::string text;
  std::vector<float> values;
};

// Parses `text`, runs the pass, and runs the program on Inputs().
Rebuilt Recover(const std::string& text, int arguments = 1) {
  Rebuilt out;
  auto module = parse::ParseModule(text, "test.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  if (!module.ok()) return out;
  out.count = compile::RecoverErfc(**module);
  out.text = ir::PrintModule(**module);
  auto plan = compile::Compile(**module, {});
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return out;
  std::vector<HostArray> inputs(
      arguments, HostArray::Of(ElementType::kF32, {kCount}, Inputs()));
  auto results = RunPlan(**plan, inputs);
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  if (results.ok()) out.values = (*results)[0].As<float>();
  return out;
}

size_t Occurrences(const std::string& text, const std::string& piece) {
  size_t count = 0;
  for (size_t at = text.find(piece); at != std::string::npos;
       at = text.find(piece, at + 1)) {
    ++count;
  }
  return count;
}

// Within the expansion's own float error (it rounds x^2 before e^(-x^2):
// about x^2/2 ulps).
void ExpectErfc(const std::vector<float>& got, double scale = 1.0) {
  ASSERT_EQ(got.size(), static_cast<size_t>(kCount));
  std::vector<float> x = Inputs();
  for (int64_t i = 0; i < kCount; ++i) {
    const double want = std::erfc(x[i]) * scale;
    EXPECT_NEAR(got[i], want, 1e-5 * want + 1e-37) << "x = " << x[i];
  }
}

TEST(RecoverErfcTest, AnExpansionNamedErfcBecomesOneOp) {
  Writer w(kType, "jit(f)/erfc");
  std::string y = w.Erfc("%x0");
  // Around it, ops of other primitives: a GELU.
  std::string body = w.text() + "    %gelu = stablehlo.multiply %x0, " + y +
                     " : " + kType + " loc(\"jit(f)/mul\")\n";
  Rebuilt rebuilt = Recover(Program(body, "%gelu"));
  EXPECT_EQ(rebuilt.count, 1);
  EXPECT_EQ(Occurrences(rebuilt.text, "chlo.erfc"), 1u) << rebuilt.text;
  EXPECT_EQ(Occurrences(rebuilt.text, compile::kFloatExpansionAttr), 1u);
  // The expansion and the constants only it read are gone.
  EXPECT_EQ(Occurrences(rebuilt.text, "stablehlo.exponential"), 0u);
  EXPECT_EQ(Occurrences(rebuilt.text, "stablehlo.constant"), 0u)
      << rebuilt.text;
  ASSERT_EQ(rebuilt.values.size(), static_cast<size_t>(kCount));
  std::vector<float> x = Inputs();
  for (int64_t i = 0; i < kCount; ++i) {
    const double want = x[i] * std::erfc(x[i]);
    EXPECT_NEAR(rebuilt.values[i], want, 2e-6 * std::fabs(want) + 1e-37)
        << "x = " << x[i];
  }
}

TEST(RecoverErfcTest, NamesAsJaxWritesThemUnderTransformations) {
  for (const char* loc :
       {"jit(f)/jvp(erfc)", "jit(f)/vmap(jvp(erfc))", "erfc"}) {
    Writer w(kType, loc);
    std::string y = w.Erfc("%x0");
    Rebuilt rebuilt = Recover(Program(w.text(), y));
    EXPECT_EQ(rebuilt.count, 1) << loc;
    ExpectErfc(rebuilt.values);
  }
}

TEST(RecoverErfcTest, EachExpansionOfAFunctionIsRebuilt) {
  Writer w(kType, "jit(f)/erfc");
  std::string a = w.Erfc("%x0");
  std::string b = w.Erfc("%x1");
  std::string body = w.text() + "    %sum = stablehlo.add " + a + ", " + b +
                     " : " + kType + " loc(\"jit(f)/add\")\n";
  Rebuilt rebuilt = Recover(Program(body, "%sum", 2), 2);
  EXPECT_EQ(rebuilt.count, 2);
  EXPECT_EQ(Occurrences(rebuilt.text, "chlo.erfc"), 2u);
  ExpectErfc(rebuilt.values, 2.0);
}

TEST(RecoverErfcTest, WhatIsNotErfcStays) {
  // Named erfc, but one coefficient is off: the check at sample points
  // refuses it, and the program computes what it says.
  Writer wrong(kType, "jit(f)/erfc");
  std::string y = wrong.Erfc("%x0", 1.01);
  Rebuilt kept = Recover(Program(wrong.text(), y));
  EXPECT_EQ(kept.count, 0);
  EXPECT_EQ(Occurrences(kept.text, "chlo.erfc"), 0u);
  EXPECT_GT(Occurrences(kept.text, "stablehlo.exponential"), 0u);

  // erfc, but not named so.
  Writer unnamed(kType, "jit(f)/my_function");
  y = unnamed.Erfc("%x0");
  Rebuilt anonymous = Recover(Program(unnamed.text(), y));
  EXPECT_EQ(anonymous.count, 0);
  ExpectErfc(anonymous.values);

  // erfc, but one of its inner values is also read outside: rebuilding
  // would leave that value without its op.
  Writer shared(kType, "jit(f)/erfc");
  y = shared.Erfc("%x0");
  std::string body = shared.text() + "    %both = stablehlo.add " + y +
                     ", %v3 : " + kType + " loc(\"jit(f)/add\")\n";
  Rebuilt read_inside = Recover(Program(body, "%both"));
  EXPECT_EQ(read_inside.count, 0);
  EXPECT_EQ(Occurrences(read_inside.text, "chlo.erfc"), 0u);
}

TEST(RecoverErfcTest, OnlyFloat32ExpansionsAreRebuilt) {
  Writer w("tensor<64xf64>", "jit(f)/erfc");
  std::string y = w.Erfc("%x0");
  std::string text =
      "func.func @main(%x0: tensor<64xf64>) -> tensor<64xf64> {\n" + w.text() +
      "    return " + y + " : tensor<64xf64>\n}\n";
  auto module = parse::ParseModule(text, "test.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(compile::RecoverErfc(**module), 0);
}

}  // namespace
}  // namespace kiln::testing
