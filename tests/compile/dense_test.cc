// dot_general and convolution through oneDNN against Kiln's own kernels
// (the reference tier), as whole programs compiled both ways
// (CompileOptions::use_onednn), over dimension numbers, layouts, padding,
// strides, dilation, groups and element types; and the cases that must
// fall back to Kiln's kernels.
//
// Tolerance. oneDNN adds the K products of each result element in another
// order than Kiln's k-ordered loop (blocked, with FMA). Either sum is
// within K * u * S of the exact one (S the sum of the products' absolute
// values, u = 2^-24 the f32 unit roundoff; the standard bound for
// recursive summation, and FMA only tightens it), so the two differ by at
// most 2 K u S. Both round the f32 sum to the result type at the end: a
// bf16 or f16 result may then land one unit in the last place apart (2^-7
// or 2^-10 of S at most). S is computed by running the reference program
// on the inputs' absolute values. Integer (int8 into s32) results must be
// equal.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include "exec/kernels/element.h"
#include "exec/kernels/onednn.h"
#include "program_runner.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using ir::ElementType;

struct TypeInfo {
  ElementType type;
  const char* name;
  double result_ulp;  // relative spacing of the type, 0 for exact types
};

const TypeInfo kF32{ElementType::kF32, "f32", 0};
const TypeInfo kBF16{ElementType::kBF16, "bf16", 0x1p-7};
const TypeInfo kF16{ElementType::kF16, "f16", 0x1p-10};
const TypeInfo kI8{ElementType::kI8, "i8", 0};
const TypeInfo kUI8{ElementType::kUI8, "ui8", 0};
const TypeInfo kI32{ElementType::kI32, "i32", 0};

bool IsIntegerType(ElementType type) {
  return type == ElementType::kI8 || type == ElementType::kUI8 ||
         type == ElementType::kI32;
}

// Random values of `type` (floats in [-1, 1], rounded to the type), or
// their absolute values.
HostArray RandomArray(const TypeInfo& t, const std::vector<int64_t>& dims,
                      uint32_t seed, bool absolute = false) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::uniform_int_distribution<int> bytes(-128, 127);
  HostArray array{{t.type, dims}, {}};
  for (int64_t i = 0; i < count; ++i) {
    float v = dist(engine);
    int b = bytes(engine);
    if (absolute) {
      v = std::fabs(v);
      b = std::abs(b) > 127 ? 127 : std::abs(b);
    }
    switch (t.type) {
      case ElementType::kF32:
        array.bytes.append(reinterpret_cast<const char*>(&v), 4);
        break;
      case ElementType::kBF16: {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        uint16_t top = static_cast<uint16_t>(bits >> 16);  // exact bf16
        array.bytes.append(reinterpret_cast<const char*>(&top), 2);
        break;
      }
      case ElementType::kF16: {
        uint16_t half = exec::FloatToHalf(v);
        array.bytes.append(reinterpret_cast<const char*>(&half), 2);
        break;
      }
      case ElementType::kI8:
        array.bytes.push_back(static_cast<char>(b));
        break;
      case ElementType::kUI8:
        array.bytes.push_back(static_cast<char>(absolute ? b : b + 128));
        break;
      default:
        ADD_FAILURE() << "no random " << t.name;
    }
  }
  return array;
}

std::vector<double> Values(const HostArray& array) {
  std::vector<double> values;
  const char* data = array.bytes.data();
  int64_t count = array.shape.num_elements();
  for (int64_t i = 0; i < count; ++i) {
    switch (array.shape.type) {
      case ElementType::kF32: {
        float v;
        std::memcpy(&v, data + 4 * i, 4);
        values.push_back(v);
        break;
      }
      case ElementType::kBF16: {
        uint16_t top;
        std::memcpy(&top, data + 2 * i, 2);
        uint32_t bits = static_cast<uint32_t>(top) << 16;
        float v;
        std::memcpy(&v, &bits, 4);
        values.push_back(v);
        break;
      }
      case ElementType::kF16: {
        uint16_t half;
        std::memcpy(&half, data + 2 * i, 2);
        values.push_back(exec::HalfToFloat(half));
        break;
      }
      case ElementType::kI32: {
        int32_t v;
        std::memcpy(&v, data + 4 * i, 4);
        values.push_back(v);
        break;
      }
      default:
        ADD_FAILURE() << "unexpected result type";
        return values;
    }
  }
  return values;
}

int CountOneDnnSteps(const exec::Plan& plan) {
  int count = 0;
  for (const exec::Step& step : plan.main().steps)
    count += exec::IsOneDnnKernel(*step.kernel);
  return count;
}

// Compiles `text` (@main of two arguments) with and without oneDNN and
// checks the results agree within the bound above, `products` being the
// number of products summed per result element. Returns whether the
// oneDNN compilation has a oneDNN step.
bool ExpectOneDnnMatchesReference(const std::string& text,
                                  const TypeInfo& lhs_type,
                                  const std::vector<int64_t>& lhs_dims,
                                  const TypeInfo& rhs_type,
                                  const std::vector<int64_t>& rhs_dims,
                                  const TypeInfo& result_type,
                                  int64_t products) {
  SCOPED_TRACE(text);
  compile::CompileOptions with, without;
  with.onednn_min_multiply_adds = 0;  // small cases cover the mappings
  without.use_onednn = false;
  auto fast = CompileText(text, with);
  auto reference = CompileText(text, without);
  EXPECT_OK(fast.status());
  EXPECT_OK(reference.status());
  if (!fast.ok() || !reference.ok()) return false;
  EXPECT_EQ(CountOneDnnSteps(**reference), 0);
  std::vector<HostArray> inputs{RandomArray(lhs_type, lhs_dims, 11),
                                RandomArray(rhs_type, rhs_dims, 12)};
  std::vector<HostArray> absolute{RandomArray(lhs_type, lhs_dims, 11, true),
                                  RandomArray(rhs_type, rhs_dims, 12, true)};
  auto got = RunPlan(**fast, inputs);
  auto want = RunPlan(**reference, inputs);
  auto bound = RunPlan(**reference, absolute);
  EXPECT_OK(got.status());
  EXPECT_OK(want.status());
  EXPECT_OK(bound.status());
  if (!got.ok() || !want.ok() || !bound.ok()) return false;
  std::vector<double> g = Values((*got)[0]), w = Values((*want)[0]),
                      s = Values((*bound)[0]);
  EXPECT_EQ(g.size(), w.size());
  const double f32_sums = 2.0 * static_cast<double>(products) * 0x1p-24;
  int64_t bad = 0;
  for (size_t i = 0; i < g.size() && i < w.size(); ++i) {
    double tolerance = IsIntegerType(result_type.type)
                           ? 0
                           : (f32_sums + result_type.result_ulp) * s[i] + 1e-30;
    if (!(std::fabs(g[i] - w[i]) <= tolerance)) {
      if (++bad <= 5) {
        ADD_FAILURE() << "element " << i << ": oneDNN " << g[i]
                      << ", reference " << w[i] << ", tolerance " << tolerance;
      }
    }
  }
  EXPECT_EQ(bad, 0);
  return CountOneDnnSteps(**fast) > 0;
}

std::string TensorType(const std::vector<int64_t>& dims, const TypeInfo& t) {
  std::string text = "tensor<";
  for (int64_t d : dims) text += StrCat(d, "x");
  return text + t.name + ">";
}

struct DotCase {
  std::vector<int64_t> lhs, rhs;
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
};

std::string Dims(const std::vector<int64_t>& dims) {
  return StrCat("[", StrJoin(dims, ", "), "]");
}

// Runs one dot_general; returns whether it went through oneDNN.
bool CheckDot(const DotCase& c, const TypeInfo& lhs_type,
              const TypeInfo& rhs_type, const TypeInfo& result_type) {
  std::vector<int64_t> result;
  int64_t products = 1;
  for (int64_t d : c.lhs_batch) result.push_back(c.lhs[d]);
  auto free_dims = [&](const std::vector<int64_t>& dims,
                       const std::vector<int64_t>& batch,
                       const std::vector<int64_t>& contracting) {
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) ==
              contracting.end()) {
        result.push_back(dims[d]);
      }
    }
  };
  free_dims(c.lhs, c.lhs_batch, c.lhs_contracting);
  free_dims(c.rhs, c.rhs_batch, c.rhs_contracting);
  for (int64_t d : c.lhs_contracting) products *= c.lhs[d];
  std::string l = TensorType(c.lhs, lhs_type), r = TensorType(c.rhs, rhs_type),
              o = TensorType(result, result_type);
  std::string text =
      StrCat("func.func @main(%l: ", l, ", %r: ", r, ") -> ", o,
             " {\n  %d = stablehlo.dot_general %l, %r, ",
             c.lhs_batch.empty() ? ""
                                 : StrCat("batching_dims = ", Dims(c.lhs_batch),
                                          " x ", Dims(c.rhs_batch), ", "),
             "contracting_dims = ", Dims(c.lhs_contracting), " x ",
             Dims(c.rhs_contracting), " : (", l, ", ", r, ") -> ", o,
             "\n  return %d : ", o, "\n}");
  return ExpectOneDnnMatchesReference(text, lhs_type, c.lhs, rhs_type, c.rhs,
                                      result_type, products);
}

const std::vector<DotCase>& DotCases() {
  static const std::vector<DotCase> cases = {
      {{64, 32}, {32, 48}, {}, {}, {1}, {0}},         // plain
      {{32, 64}, {32, 48}, {}, {}, {0}, {0}},         // lhs transposed
      {{64, 32}, {48, 32}, {}, {}, {1}, {1}},         // rhs transposed
      {{32, 64}, {48, 32}, {}, {}, {0}, {1}},         // both transposed
      {{4, 16, 24}, {4, 24, 8}, {0}, {0}, {2}, {1}},  // leading batch
      {{16, 4, 24}, {24, 4, 8}, {1}, {1}, {2}, {0}},  // batch in the middle
      {{24, 16, 4}, {8, 24, 4}, {2}, {2}, {0}, {1}},  // trailing batch
      {{2, 3, 8, 16}, {2, 3, 16, 4}, {0, 1}, {0, 1}, {3}, {2}},  // two batch
      {{3, 2, 8, 16}, {2, 16, 3, 4}, {0, 1}, {2, 0}, {3}, {1}},  // permuted
      {{8, 6, 5}, {6, 5, 7}, {}, {}, {1, 2}, {0, 1}},   // contracting merge
      {{8, 6, 5}, {5, 6, 7}, {}, {}, {2, 1}, {0, 1}},   // reversed pairs
      {{6, 8, 5}, {5, 7, 6}, {}, {}, {0, 2}, {2, 0}},   // unmergeable: copies
      {{3, 5, 16}, {16, 7, 2}, {}, {}, {2}, {0}},       // two free dims each
      {{32}, {32, 16}, {}, {}, {0}, {0}},               // vector x matrix
      {{16, 32}, {32}, {}, {}, {1}, {0}},               // matrix x vector
      {{8, 1}, {1, 8}, {}, {}, {1}, {0}},               // k = 1
      {{1, 40}, {40, 1}, {}, {}, {1}, {0}},             // m = n = 1
      {{4, 4096}, {4096, 4}, {}, {}, {1}, {0}},         // long sums
      {{5, 7, 130}, {5, 130, 65}, {0}, {0}, {2}, {1}},  // odd sizes
      // 256 rows and more (where other float types take oneDNN's rhs
      // layout).
      {{256, 40}, {40, 72}, {}, {}, {1}, {0}},     // plain
      {{300, 33}, {65, 33}, {}, {}, {1}, {1}},     // rhs transposed
      {{2, 160, 24}, {24, 40}, {}, {}, {2}, {0}},  // free dims merge
      {{33, 270}, {33, 17}, {}, {}, {0}, {0}},     // lhs transposed
  };
  return cases;
}

TEST(DenseTest, DotGeneralF32MatchesReferenceOverDimensionNumbers) {
  for (const DotCase& c : DotCases()) {
    EXPECT_TRUE(CheckDot(c, kF32, kF32, kF32))
        << "not through oneDNN: " << Dims(c.lhs) << " x " << Dims(c.rhs);
  }
}

TEST(DenseTest, DotGeneralNarrowAndIntegerTypesMatchReference) {
  const DotCase cases[] = {
      {{64, 32}, {32, 48}, {}, {}, {1}, {0}},
      {{32, 64}, {48, 32}, {}, {}, {0}, {1}},
      {{4, 16, 600}, {4, 600, 8}, {0}, {0}, {2}, {1}},
  };
  struct Types {
    const TypeInfo &lhs, &rhs, &result;
  };
  const Types types[] = {{kBF16, kBF16, kBF16}, {kBF16, kBF16, kF32},
                         {kF16, kF16, kF16},    {kF16, kF16, kF32},
                         {kF32, kBF16, kF32},   {kBF16, kF32, kBF16},
                         {kI8, kI8, kI32},      {kUI8, kI8, kI32}};
  for (const Types& t : types) {
    for (const DotCase& c : cases) {
      bool used = CheckDot(c, t.lhs, t.rhs, t.result);
      // bf16 and mixed floats run on every AVX-512 CPU (oneDNN emulates
      // bf16 where the CPU lacks it); f16 and int8 where it implements
      // them.
      if (t.lhs.type == ElementType::kBF16 ||
          t.rhs.type == ElementType::kBF16) {
        EXPECT_TRUE(used || !__builtin_cpu_supports("avx512f"))
            << t.lhs.name << " x " << t.rhs.name << " -> " << t.result.name;
      }
    }
  }
}

// Integer dots of 8- and 16-bit operands whose largest possible sum a
// float holds exactly run as float dots (f32 up to 2^24, f64 up to 2^53)
// and must give the integer dot's results exactly; one whose sums can
// leave the result's range stays with the integer loops, which wrap.
// Against sums in int64 here, with the operands' extreme values present.
TEST(DenseTest, NarrowIntegerDotsAreExact) {
  struct Case {
    std::string lhs, rhs, result;
    int64_t m, k, n;
  };
  const Case cases[] = {
      {"i8", "i8", "i32", 16, 1024, 24},     // f32: 1024 * 2^14 = 2^24
      {"i8", "i8", "i32", 8, 3000, 20},      // f64
      {"ui8", "ui8", "ui32", 8, 1500, 20},   // f64, unsigned
      {"ui8", "i8", "i32", 12, 600, 40},     // f32, mixed signs
      {"i16", "i16", "i64", 8, 500, 16},     // f64
      {"i16", "i16", "i32", 8, 64, 16},      // may wrap: integer loops
  };
  auto bits = [](const std::string& type) {
    return std::stoi(type.substr(type[0] == 'u' ? 2 : 1));
  };
  auto type_of = [](const std::string& name) {
    if (name == "i8") return ElementType::kI8;
    if (name == "ui8") return ElementType::kUI8;
    if (name == "i16") return ElementType::kI16;
    if (name == "i32") return ElementType::kI32;
    if (name == "ui32") return ElementType::kUI32;
    return ElementType::kI64;
  };
  std::mt19937 rng(41);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.lhs + " x " + c.rhs + " -> " + c.result + " k " +
                 std::to_string(c.k));
    // Values over each type's whole range, its two ends included.
    auto values = [&](const std::string& type, int64_t count) {
      const bool is_unsigned = type[0] == 'u';
      const int64_t low = is_unsigned ? 0 : -(int64_t{1} << (bits(type) - 1));
      const int64_t high =
          (int64_t{1} << (bits(type) - (is_unsigned ? 0 : 1))) - 1;
      std::uniform_int_distribution<int64_t> pick(low, high);
      std::vector<int64_t> v(count);
      for (int64_t& x : v) x = pick(rng);
      for (int64_t i = 0; i < count; i += 7) v[i] = (i % 14) ? high : low;
      return v;
    };
    std::vector<int64_t> a = values(c.lhs, c.m * c.k);
    std::vector<int64_t> b = values(c.rhs, c.k * c.n);
    auto host = [&](const std::string& type, std::vector<int64_t> dims,
                    const std::vector<int64_t>& v) {
      if (bits(type) == 8) {
        std::vector<int8_t> narrow(v.begin(), v.end());
        return HostArray::Of(type_of(type), std::move(dims), narrow);
      }
      std::vector<int16_t> narrow(v.begin(), v.end());
      return HostArray::Of(type_of(type), std::move(dims), narrow);
    };
    auto tensor = [](int64_t r, int64_t cols, const std::string& type) {
      return "tensor<" + std::to_string(r) + "x" + std::to_string(cols) + "x" +
             type + ">";
    };
    const std::string program =
        "func.func @main(%a: " + tensor(c.m, c.k, c.lhs) +
        ", %b: " + tensor(c.k, c.n, c.rhs) + ") -> " +
        tensor(c.m, c.n, c.result) + " {\n" +
        "  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] "
        ": (" + tensor(c.m, c.k, c.lhs) + ", " + tensor(c.k, c.n, c.rhs) +
        ") -> " + tensor(c.m, c.n, c.result) + "\n" +
        "  return %r : " + tensor(c.m, c.n, c.result) + "\n}\n";
    ASSERT_OK_AND_ASSIGN(
        auto out, RunText(program, {host(c.lhs, {c.m, c.k}, a),
                                    host(c.rhs, {c.k, c.n}, b)}));
    const bool wide = c.result == "i64";
    std::vector<int64_t> got;
    if (wide) {
      got = out[0].As<int64_t>();
    } else {
      std::vector<int32_t> narrow = out[0].As<int32_t>();
      got.assign(narrow.begin(), narrow.end());
    }
    ASSERT_EQ(got.size(), static_cast<size_t>(c.m * c.n));
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        int64_t sum = 0;
        for (int64_t p = 0; p < c.k; ++p) sum += a[i * c.k + p] * b[p * c.n + j];
        // The result type's bits of the sum (an int32 result wraps).
        const int64_t want = wide ? sum : static_cast<int32_t>(
                                              static_cast<uint32_t>(sum));
        const int64_t have =
            wide ? got[i * c.n + j]
                 : static_cast<int32_t>(static_cast<uint32_t>(got[i * c.n + j]));
        ASSERT_EQ(have, want) << i << " " << j;
      }
    }
  }
}

// An f32 matmul of two dimensions runs as oneDNN's sgemm over the
// operands in place (no scratch), transposed ones included. From 256 rows
// the other float types read their rhs in oneDNN's layout, reordered into
// the step's scratch each run; where oneDNN's AVX-512 kernels run, that
// layout is a blocked one, so the scratch holds a copy. A batch of several
// matmuls stays with the primitive.
TEST(DenseTest, TwoDimensionalF32MatmulsRunAsSgemm) {
  auto kernel_for = [](int64_t m, ElementType type,
                       std::vector<int64_t> batch = {}) {
    exec::OneDnnMatmulParams p;
    p.lhs_type = p.rhs_type = p.result_type = type;
    p.batch = batch;
    p.m = m;
    p.k = 64;
    p.n = 96;
    for (int64_t size : batch) {
      p.lhs_strides.push_back(size > 1 ? p.m * p.k : 1);
      p.rhs_strides.push_back(size > 1 ? p.k * p.n : 1);
    }
    p.lhs_strides.insert(p.lhs_strides.end(), {p.k, 1});
    p.rhs_strides.insert(p.rhs_strides.end(), {1, p.k});  // transposed
    return exec::MakeOneDnnMatmulKernel(p);
  };
  for (int64_t m : {1, 16, 256, 1024}) {
    exec::OneDnnKernel f32 = kernel_for(m, ElementType::kF32);
    ASSERT_NE(f32.kernel, nullptr) << m;
    EXPECT_EQ(f32.implementation, "sgemm") << m;
    EXPECT_EQ(f32.scratch_bytes, 0) << m;
    EXPECT_TRUE(exec::IsOneDnnKernel(*f32.kernel));
  }
  EXPECT_EQ(kernel_for(256, ElementType::kF32, {1}).implementation, "sgemm");
  exec::OneDnnKernel batched = kernel_for(256, ElementType::kF32, {2});
  ASSERT_NE(batched.kernel, nullptr);
  EXPECT_NE(batched.implementation, "sgemm");
  if (__builtin_cpu_supports("avx512f")) {
    exec::OneDnnKernel bf16 = kernel_for(256, ElementType::kBF16);
    ASSERT_NE(bf16.kernel, nullptr);
    EXPECT_GE(bf16.scratch_bytes, 64 * 96 * 2) << bf16.implementation;
  }
  // Checked against the reference over the same shapes (DotCases has
  // more).
  EXPECT_TRUE(
      CheckDot({{256, 64}, {64, 96}, {}, {}, {1}, {0}}, kF32, kF32, kF32));
  EXPECT_TRUE(
      CheckDot({{64, 256}, {96, 64}, {}, {}, {0}, {1}}, kF32, kF32, kF32));
}

// The steps of `plan` that compute an add, and those that broadcast into
// an array of `elements`.
std::pair<int, int> AddsAndBroadcasts(const exec::Plan& plan,
                                      int64_t elements) {
  int adds = 0, broadcasts = 0;
  for (const exec::Step& step : plan.main().steps) {
    adds += step.where.find("stablehlo.add") != std::string::npos;
    broadcasts +=
        step.where.find("stablehlo.broadcast_in_dim") != std::string::npos &&
        plan.slots()[step.outputs[0]].shape.num_elements() == elements;
  }
  return {adds, broadcasts};
}

// A dense layer's bias as JAX writes it (`x @ w + b`: dot_general, two
// broadcasts of b, add) is added by the sgemm that computes the product:
// no step is left for the add or the large broadcast. Where the product
// is read by anyone else, the bias runs along another dimension, or
// fusion is off, the add stays a step of its own. Every variant against
// sums computed here.
TEST(DenseTest, ADenseLayersBiasIsAddedByItsMatmul) {
  // [2, 128, 128] x [128, 64]: 2^21 multiply-adds, past oneDNN's minimum.
  const std::string x = "tensor<2x128x128xf32>", w = "tensor<128x64xf32>",
                    y = "tensor<2x128x64xf32>";
  auto program = [&](const std::string& bias_type, const std::string& bias_dims,
                     bool return_product) {
    return "func.func @main(%x: " + x + ", %w: " + w + ", %b: " + bias_type +
           ") -> (" + y + (return_product ? ", " + y : "") +
           ") {\n"
           "  %p = stablehlo.dot_general %x, %w, contracting_dims = [2] x [0] "
           ": (" +
           x + ", " + w + ") -> " + y +
           "\n"
           "  %b1 = stablehlo.broadcast_in_dim %b, dims = " +
           bias_dims + " : (" + bias_type +
           ") -> tensor<1x128x64xf32>\n"
           "  %b2 = stablehlo.broadcast_in_dim %b1, dims = [0, 1, 2] : "
           "(tensor<1x128x64xf32>) -> " +
           y +
           "\n"
           "  %s = stablehlo.add %p, %b2 : " +
           y +
           "\n"
           "  return %s" +
           (return_product ? ", %p" : "") + " : " + y +
           (return_product ? ", " + y : "") + "\n}\n";
  };
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> xs(2 * 128 * 128), ws(128 * 64), along_rows(64),
      along_both(128 * 64);
  for (auto* values : {&xs, &ws, &along_rows, &along_both}) {
    for (float& v : *values) v = uniform(rng);
  }
  compile::CompileOptions unfused;
  unfused.fuse_elementwise = false;
  struct Case {
    std::string name;
    std::string text;
    std::vector<int64_t> bias_dims;
    const std::vector<float>* bias;
    bool fused_add;  // the add runs with the matmul
    compile::CompileOptions options;
  };
  const std::vector<Case> cases = {
      {"bias of each column",
       program("tensor<64xf32>", "[2]", false),
       {64},
       &along_rows,
       true,
       {}},
      {"bias of each row and column",
       program("tensor<128x64xf32>", "[1, 2]", false),
       {128, 64},
       &along_both,
       false,
       {}},
      {"product read twice",
       program("tensor<64xf32>", "[2]", true),
       {64},
       &along_rows,
       false,
       {}},
      {"fusion off",
       program("tensor<64xf32>", "[2]", false),
       {64},
       &along_rows,
       false,
       unfused},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_OK_AND_ASSIGN(auto plan, CompileText(c.text, c.options));
    auto [adds, large_broadcasts] = AddsAndBroadcasts(*plan, 2 * 128 * 64);
    EXPECT_EQ(adds, c.fused_add ? 0 : 1);
    if (c.fused_add) {
      EXPECT_EQ(large_broadcasts, 0);
    }
    ASSERT_OK_AND_ASSIGN(
        auto out,
        RunPlan(*plan,
                {HostArray::Of(ElementType::kF32, {2, 128, 128}, xs),
                 HostArray::Of(ElementType::kF32, {128, 64}, ws),
                 HostArray::Of(ElementType::kF32, c.bias_dims, *c.bias)}));
    std::vector<float> got = out[0].As<float>();
    for (int64_t row = 0; row < 256; row += 3) {
      for (int64_t j = 0; j < 64; ++j) {
        double want = c.bias->size() == 64 ? (*c.bias)[j]
                                           : (*c.bias)[(row % 128) * 64 + j];
        for (int64_t i = 0; i < 128; ++i) {
          want += double{xs[row * 128 + i]} * ws[i * 64 + j];
        }
        ASSERT_NEAR(got[row * 64 + j], want, 1e-4) << row << " " << j;
      }
    }
  }
}

// A convolution's bias as JAX writes it (`conv(x, k) + b`, NHWC, b
// broadcast along the features) is added by the oneDNN primitive: no step
// is left for the add or the large broadcast. Where the convolution's
// value is read by anyone else, the features are not the last dimension,
// or fusion is off, the add stays a step. Every variant against sums
// computed here.
TEST(DenseTest, AConvolutionsBiasIsAddedByItsPrimitive) {
  // [2, 16, 16, 16] * [3, 3, 16, 16]: 9 * 2^17 multiply-adds, past
  // oneDNN's minimum (2^20).
  constexpr int N = 2, H = 16, W = 16, C = 16, O = 16;
  auto program = [&](bool nhwc, bool return_conv) {
    const std::string x = "tensor<2x16x16x16xf32>", k = "tensor<3x3x16x16xf32>",
                      y = nhwc ? "tensor<2x16x16x16xf32>"
                               : "tensor<2x16x16x16xf32>";
    const std::string layout = nhwc ? "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
                                    : "[b, 0, 1, f]x[0, 1, i, o]->[b, f, 0, 1]";
    const std::string feature_dim = nhwc ? "3" : "1";
    return "func.func @main(%x: " + x + ", %k: " + k +
           ", %b: tensor<16xf32>) -> (" + y + (return_conv ? ", " + y : "") +
           ") {\n  %c = stablehlo.convolution(%x, %k) dim_numbers = " + layout +
           ", window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : "
           "i64, feature_group_count = 1 : i64} : (" +
           x + ", " + k + ") -> " + y +
           "\n  %bb = stablehlo.broadcast_in_dim %b, dims = [" + feature_dim +
           "] : (tensor<16xf32>) -> " + y +
           "\n  %s = stablehlo.add %c, %bb : " + y + "\n  return %s" +
           (return_conv ? ", %c" : "") + " : " + y +
           (return_conv ? ", " + y : "") + "\n}\n";
  };
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> xs(N * H * W * C), ks(3 * 3 * C * O), bs(O);
  for (auto* values : {&xs, &ks, &bs}) {
    for (float& v : *values) v = uniform(rng);
  }
  compile::CompileOptions unfused;
  unfused.fuse_elementwise = false;
  struct Case {
    std::string name;
    std::string text;
    bool nhwc;
    bool fused_add;
    compile::CompileOptions options;
  };
  const std::vector<Case> cases = {
      {"NHWC", program(true, false), true, true, {}},
      {"features second", program(false, false), false, false, {}},
      {"convolution read twice", program(true, true), true, false, {}},
      {"fusion off", program(true, false), true, false, unfused},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_OK_AND_ASSIGN(auto plan, CompileText(c.text, c.options));
    auto [adds, large_broadcasts] = AddsAndBroadcasts(*plan, N * H * W * O);
    EXPECT_EQ(adds, c.fused_add ? 0 : 1);
    if (c.fused_add) {
      EXPECT_EQ(large_broadcasts, 0);
    }
    ASSERT_OK_AND_ASSIGN(
        auto out,
        RunPlan(*plan, {HostArray::Of(ElementType::kF32, {N, H, W, C}, xs),
                        HostArray::Of(ElementType::kF32, {3, 3, C, O}, ks),
                        HostArray::Of(ElementType::kF32, {O}, bs)}));
    std::vector<float> got = out[0].As<float>();
    for (int n = 0; n < N; ++n) {
      for (int y = 0; y < H; ++y) {
        for (int x = 0; x < W; x += 3) {
          for (int o = 0; o < O; ++o) {
            double want = bs[o];
            for (int dy = 0; dy < 3; ++dy) {
              for (int dx = 0; dx < 3; ++dx) {
                const int iy = y + dy - 1, ix = x + dx - 1;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                for (int i = 0; i < C; ++i) {
                  want += double{xs[((n * H + iy) * W + ix) * C + i]} *
                          ks[((dy * 3 + dx) * C + i) * O + o];
                }
              }
            }
            const int64_t at = c.nhwc ? ((n * H + y) * W + x) * O + o
                                      : ((n * O + o) * H + y) * W + x;
            ASSERT_NEAR(got[at], want, 1e-4)
                << n << " " << y << " " << x << " " << o;
          }
        }
      }
    }
  }
}

// Attention's scores: heads split from [batch, sequence, heads, dim] and
// moved before the sequence by a transpose, then contracted over dim. The
// dot reads the untransposed arrays through strides, and the transposes
// write nothing; where a transposed value is also returned, its step
// stays. Small (Kiln's matmul) and large (oneDNN) alike; the expected
// scores are summed here.
TEST(DenseTest, DotReadsTransposedOperandsInPlace) {
  for (int64_t sequence : {8, 64}) {
    const int64_t batch = 2, heads = 4, dim = 32;
    auto type = [&](bool heads_first) {
      return "tensor<" +
             (heads_first
                  ? std::to_string(batch) + "x" + std::to_string(heads) + "x" +
                        std::to_string(sequence)
                  : std::to_string(batch) + "x" + std::to_string(sequence) +
                        "x" + std::to_string(heads)) +
             "x" + std::to_string(dim) + "xf32>";
    };
    const std::string split = type(false), moved = type(true);
    const std::string scores =
        "tensor<" + std::to_string(batch) + "x" + std::to_string(heads) + "x" +
        std::to_string(sequence) + "x" + std::to_string(sequence) + "xf32>";
    for (bool return_query : {false, true}) {
      std::string text =
          "func.func @main(%x: " + split + ", %y: " + split + ") -> (" +
          scores + (return_query ? ", " + moved : "") +
          ") {\n"
          "  %q = stablehlo.transpose %x, dims = [0, 2, 1, 3] : (" +
          split + ") -> " + moved +
          "\n"
          "  %k = stablehlo.transpose %y, dims = [0, 2, 1, 3] : (" +
          split + ") -> " + moved +
          "\n"
          "  %s = stablehlo.dot_general %q, %k, batching_dims = [0, 1] x "
          "[0, 1], contracting_dims = [3] x [3] : (" +
          moved + ", " + moved + ") -> " + scores +
          "\n"
          "  return %s" +
          (return_query ? ", %q" : "") + " : " + scores +
          (return_query ? ", " + moved : "") + "\n}\n";
      ASSERT_OK_AND_ASSIGN(auto plan, CompileText(text));
      int transposes = 0;
      for (const exec::Step& step : plan->main().steps) {
        transposes +=
            step.where.find("stablehlo.transpose") != std::string::npos;
      }
      EXPECT_EQ(transposes, return_query ? 1 : 0) << sequence;
      const int64_t count = batch * sequence * heads * dim;
      std::vector<float> x(count), y(count);
      std::mt19937 rng(7);
      std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
      for (float& v : x) v = uniform(rng);
      for (float& v : y) v = uniform(rng);
      std::vector<int64_t> dims = {batch, sequence, heads, dim};
      ASSERT_OK_AND_ASSIGN(
          auto out,
          RunPlan(*plan, {HostArray::Of(ElementType::kF32, dims, x),
                          HostArray::Of(ElementType::kF32, dims, y)}));
      std::vector<float> got = out[0].As<float>();
      auto at = [&](const std::vector<float>& a, int64_t b, int64_t s,
                    int64_t h, int64_t d) {
        return a[((b * sequence + s) * heads + h) * dim + d];
      };
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t h = 0; h < heads; ++h) {
          for (int64_t i = 0; i < sequence; ++i) {
            for (int64_t j = 0; j < sequence; ++j) {
              double want = 0;
              for (int64_t d = 0; d < dim; ++d) {
                want += double{at(x, b, i, h, d)} * at(y, b, j, h, d);
              }
              const float value =
                  got[((b * heads + h) * sequence + i) * sequence + j];
              ASSERT_NEAR(value, want, 1e-4)
                  << b << " " << h << " " << i << " " << j;
            }
          }
        }
      }
      if (return_query) {
        std::vector<float> q = out[1].As<float>();
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t h = 0; h < heads; ++h) {
            for (int64_t i = 0; i < sequence; ++i) {
              for (int64_t d = 0; d < dim; ++d) {
                ASSERT_EQ(q[((b * heads + h) * sequence + i) * dim + d],
                          at(x, b, i, h, d));
              }
            }
          }
        }
      }
    }
  }
}

// A transpose that reorders an operand's free dimensions stays a copy: the
// result's dimensions follow the operand's.
TEST(DenseTest, DotKeepsTransposesThatReorderFreeDimensions) {
  const std::string text = R"(
func.func @main(%x: tensor<3x5x4xf32>, %y: tensor<4x2xf32>) -> tensor<5x3x2xf32> {
  %t = stablehlo.transpose %x, dims = [1, 0, 2] : (tensor<3x5x4xf32>) -> tensor<5x3x4xf32>
  %d = stablehlo.dot_general %t, %y, contracting_dims = [2] x [0] : (tensor<5x3x4xf32>, tensor<4x2xf32>) -> tensor<5x3x2xf32>
  return %d : tensor<5x3x2xf32>
})";
  std::vector<float> x(60), y(8);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i % 3) - 1;
  ASSERT_OK_AND_ASSIGN(
      auto out, RunText(text, {HostArray::Of(ElementType::kF32, {3, 5, 4}, x),
                               HostArray::Of(ElementType::kF32, {4, 2}, y)}));
  std::vector<float> got = out[0].As<float>();
  for (int64_t a = 0; a < 5; ++a) {
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t n = 0; n < 2; ++n) {
        float want = 0;
        for (int64_t k = 0; k < 4; ++k)
          want += x[(b * 5 + a) * 4 + k] * y[k * 2 + n];
        EXPECT_EQ(got[(a * 3 + b) * 2 + n], want) << a << " " << b << " " << n;
      }
    }
  }
}

// The transpose of a dot that the dot computes itself (its operands
// swapped, TransposeOfDotIsTheDotOfSwappedOperands) has no copy to read
// through: a dot reading that transpose reads its slot as it is.
TEST(DenseTest, DotOfATransposedDotReadsTheTransposedValues) {
  for (int64_t n : {4, 5}) {  // square: the slot's shape cannot tell
    const std::string m = "4", k = "3", p = "2", ns = std::to_string(n);
    const std::string text =
        "func.func @main(%a: tensor<" + m + "x" + k + "xf32>, %b: tensor<" + k +
        "x" + ns + "xf32>, %c: tensor<" + m + "x" + p + "xf32>) -> tensor<" +
        ns + "x" + p +
        "xf32> {\n"
        "  %d1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] "
        ": (tensor<" +
        m + "x" + k + "xf32>, tensor<" + k + "x" + ns + "xf32>) -> tensor<" +
        m + "x" + ns +
        "xf32>\n"
        "  %t = stablehlo.transpose %d1, dims = [1, 0] : (tensor<" +
        m + "x" + ns + "xf32>) -> tensor<" + ns + "x" + m +
        "xf32>\n"
        "  %d2 = stablehlo.dot_general %t, %c, contracting_dims = [1] x [0] "
        ": (tensor<" +
        ns + "x" + m + "xf32>, tensor<" + m + "x" + p + "xf32>) -> tensor<" +
        ns + "x" + p +
        "xf32>\n"
        "  return %d2 : tensor<" +
        ns + "x" + p + "xf32>\n}\n";
    std::vector<float> a(4 * 3), b(3 * n), c(4 * 2);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 5) - 2;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 4) - 1;
    for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i % 3) - 1;
    ASSERT_OK_AND_ASSIGN(
        auto out, RunText(text, {HostArray::Of(ElementType::kF32, {4, 3}, a),
                                 HostArray::Of(ElementType::kF32, {3, n}, b),
                                 HostArray::Of(ElementType::kF32, {4, 2}, c)}));
    std::vector<float> got = out[0].As<float>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        float want = 0;  // ((a b)^T c)[i][j]
        for (int64_t r = 0; r < 4; ++r) {
          float ab = 0;
          for (int64_t q = 0; q < 3; ++q) ab += a[r * 3 + q] * b[q * n + i];
          want += ab * c[r * 2 + j];
        }
        EXPECT_EQ(got[i * 2 + j], want) << n << ": " << i << " " << j;
      }
    }
  }
}

TEST(DenseTest, EmptyDotFallsBackToKilnsKernel) {
  EXPECT_FALSE(CheckDot({{0, 8}, {8, 4}, {}, {}, {1}, {0}}, kF32, kF32, kF32));
  EXPECT_FALSE(CheckDot({{3, 0}, {0, 4}, {}, {}, {1}, {0}}, kF32, kF32, kF32));
}

struct ConvCase {
  std::string input_layout, kernel_layout, output_layout;  // "b01f", ...
  int64_t batch, in_features, out_features;
  std::vector<int64_t> spatial, window;
  std::vector<int64_t> strides, padding, lhs_dilation, rhs_dilation;
  int64_t feature_groups = 1, batch_groups = 1;
  bool reverse = false;
};

std::vector<int64_t> LayoutDims(const std::string& layout, int64_t b, int64_t f,
                                const std::vector<int64_t>& space) {
  std::vector<int64_t> dims;
  for (char c : layout) {
    if (c == 'b' || c == 'o')
      dims.push_back(b);
    else if (c == 'f' || c == 'i')
      dims.push_back(f);
    else
      dims.push_back(space[c - '0']);
  }
  return dims;
}

std::string LayoutText(const std::string& layout) {
  std::string text = "[";
  for (size_t i = 0; i < layout.size(); ++i) {
    if (i > 0) text += ", ";
    text += layout[i];
  }
  return text + "]";
}

// Runs one convolution; returns whether it went through oneDNN.
bool CheckConvolution(const ConvCase& c, const TypeInfo& input_type,
                      const TypeInfo& kernel_type,
                      const TypeInfo& result_type) {
  const size_t spatial = c.spatial.size();
  std::vector<int64_t> out_spatial;
  for (size_t d = 0; d < spatial; ++d) {
    int64_t dilated = (c.spatial[d] - 1) * c.lhs_dilation[d] + 1;
    int64_t window = (c.window[d] - 1) * c.rhs_dilation[d] + 1;
    int64_t padded = dilated + c.padding[2 * d] + c.padding[2 * d + 1];
    out_spatial.push_back((padded - window) / c.strides[d] + 1);
  }
  std::vector<int64_t> in =
      LayoutDims(c.input_layout, c.batch, c.in_features, c.spatial);
  std::vector<int64_t> ker =
      LayoutDims(c.kernel_layout, c.out_features,
                 c.in_features / c.feature_groups, c.window);
  std::vector<int64_t> out = LayoutDims(
      c.output_layout, c.batch / c.batch_groups, c.out_features, out_spatial);
  std::string pads;
  for (size_t d = 0; d < spatial; ++d) {
    pads += StrCat(d ? ", " : "", "[", c.padding[2 * d], ", ",
                   c.padding[2 * d + 1], "]");
  }
  std::string reverse;
  for (size_t d = 0; d < spatial; ++d)
    reverse += StrCat(d ? ", " : "", c.reverse && d == 0 ? "true" : "false");
  std::string i = TensorType(in, input_type), k = TensorType(ker, kernel_type),
              o = TensorType(out, result_type);
  std::string text = StrCat(
      "func.func @main(%x: ", i, ", %k: ", k, ") -> ", o,
      " {\n  %c = stablehlo.convolution(%x, %k) dim_numbers = ",
      LayoutText(c.input_layout), "x", LayoutText(c.kernel_layout), "->",
      LayoutText(c.output_layout), ", window = {stride = ", Dims(c.strides),
      ", pad = [", pads, "], lhs_dilate = ", Dims(c.lhs_dilation),
      ", rhs_dilate = ", Dims(c.rhs_dilation), ", reverse = [", reverse,
      "]} {batch_group_count = ", c.batch_groups,
      " : i64, feature_group_count = ", c.feature_groups, " : i64} : (", i,
      ", ", k, ") -> ", o, "\n  return %c : ", o, "\n}");
  int64_t products = c.in_features / c.feature_groups;
  for (int64_t w : c.window) products *= w;
  return ExpectOneDnnMatchesReference(text, input_type, in, kernel_type, ker,
                                      result_type, products);
}

const std::vector<ConvCase>& ConvCases() {
  static const std::vector<ConvCase> cases = {
      // JAX's NHWC / HWIO, 3x3 "same" (ResNet's body).
      {"b01f",
       "01io",
       "b01f",
       2,
       8,
       16,
       {9, 9},
       {3, 3},
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       {1, 1}},
      // NCHW / OIHW, stride 2, asymmetric padding.
      {"bf01",
       "oi01",
       "bf01",
       1,
       8,
       16,
       {10, 9},
       {3, 3},
       {2, 2},
       {0, 1, 1, 0},
       {1, 1},
       {1, 1}},
      // 7x7 stride 2 pad 3 (ResNet's stem), 3 input features.
      {"b01f",
       "01io",
       "b01f",
       1,
       3,
       8,
       {20, 20},
       {7, 7},
       {2, 2},
       {3, 3, 3, 3},
       {1, 1},
       {1, 1}},
      // 1x1 stride 2 (ResNet's downsampling shortcut).
      {"b01f",
       "01io",
       "b01f",
       2,
       16,
       32,
       {8, 8},
       {1, 1},
       {2, 2},
       {0, 0, 0, 0},
       {1, 1},
       {1, 1}},
      // 1x1 over 49 positions (ResNet's last stage at batch 1): the
      // weights in the program's layout (kSmallPointwisePositions).
      {"b01f",
       "01io",
       "b01f",
       1,
       64,
       48,
       {7, 7},
       {1, 1},
       {1, 1},
       {0, 0, 0, 0},
       {1, 1},
       {1, 1}},
      // Kernel (rhs) dilation.
      {"b01f",
       "01io",
       "b01f",
       1,
       4,
       8,
       {12, 11},
       {3, 2},
       {1, 2},
       {2, 2, 1, 0},
       {1, 1},
       {2, 3}},
      // Feature groups, and depthwise.
      {"b01f",
       "01io",
       "b01f",
       1,
       8,
       6,
       {7, 7},
       {3, 3},
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       {1, 1},
       2},
      {"b01f",
       "01io",
       "b01f",
       2,
       8,
       8,
       {7, 7},
       {3, 3},
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       {1, 1},
       8},
      {"bf01",
       "oi01",
       "bf01",
       1,
       6,
       12,
       {6, 6},
       {3, 3},
       {2, 1},
       {1, 1, 0, 0},
       {1, 1},
       {1, 1},
       3},
      // 1-D and 3-D.
      {"b0f", "0io", "b0f", 2, 4, 5, {16}, {3}, {1}, {1, 1}, {1}, {1}},
      {"bf0", "oi0", "bf0", 1, 3, 4, {17}, {5}, {3}, {0, 2}, {1}, {2}},
      {"b012f",
       "012io",
       "b012f",
       1,
       3,
       4,
       {5, 6, 5},
       {2, 2, 2},
       {1, 1, 1},
       {0, 1, 1, 0, 0, 0},
       {1, 1, 1},
       {1, 1, 1}},
      // Output in another layout than the input; unusual layouts.
      {"bf01",
       "oi01",
       "b01f",
       2,
       4,
       6,
       {6, 7},
       {3, 3},
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       {1, 1}},
      {"f0b1",
       "i1o0",
       "01fb",
       3,
       4,
       5,
       {6, 7},
       {2, 3},
       {1, 2},
       {1, 0, 0, 1},
       {1, 1},
       {1, 1}},
      // A window as large as the padded input.
      {"b01f",
       "01io",
       "b01f",
       1,
       4,
       4,
       {3, 3},
       {3, 3},
       {1, 1},
       {0, 0, 0, 0},
       {1, 1},
       {1, 1}},
  };
  return cases;
}

TEST(DenseTest, ConvolutionF32MatchesReferenceOverLayoutsAndWindows) {
  for (const ConvCase& c : ConvCases()) {
    EXPECT_TRUE(CheckConvolution(c, kF32, kF32, kF32))
        << "not through oneDNN: " << c.input_layout << " " << Dims(c.spatial);
  }
}

TEST(DenseTest, ConvolutionNarrowAndIntegerTypesMatchReference) {
  const ConvCase& nhwc = ConvCases()[0];
  const ConvCase& grouped = ConvCases()[5];
  EXPECT_TRUE(CheckConvolution(nhwc, kBF16, kBF16, kBF16) ||
              !__builtin_cpu_supports("avx512f"));
  EXPECT_TRUE(CheckConvolution(nhwc, kBF16, kBF16, kF32) ||
              !__builtin_cpu_supports("avx512f"));
  CheckConvolution(grouped, kBF16, kBF16, kBF16);
  CheckConvolution(nhwc, kF16, kF16, kF16);
  CheckConvolution(nhwc, kF32, kBF16, kF32);
  CheckConvolution(nhwc, kI8, kI8, kI32);
  CheckConvolution(nhwc, kUI8, kI8, kI32);
}

TEST(DenseTest, TransposedAndReversedConvolutionsMatchReference) {
  // Input (lhs) dilation runs as a deconvolution: JAX's input gradient of
  // a stride-2 3x3 "same" convolution, other paddings, groups, and 1-D.
  const ConvCase cases[] = {
      {"b01f",
       "01io",
       "b01f",
       2,
       8,
       4,
       {5, 5},
       {3, 3},
       {1, 1},
       {1, 2, 1, 2},
       {2, 2},
       {1, 1}},
      {"bf01",
       "oi01",
       "bf01",
       1,
       4,
       6,
       {4, 6},
       {3, 2},
       {1, 1},
       {2, 0, 0, 1},
       {3, 2},
       {1, 1}},
      {"b01f",
       "01io",
       "b01f",
       1,
       8,
       6,
       {4, 4},
       {3, 3},
       {1, 1},
       {2, 2, 2, 2},
       {2, 2},
       {1, 1},
       2},
      {"b0f", "0io", "b0f", 2, 3, 5, {7}, {4}, {1}, {3, 3}, {2}, {2}},
  };
  for (const ConvCase& c : cases) {
    EXPECT_TRUE(CheckConvolution(c, kF32, kF32, kF32))
        << "not through oneDNN: " << Dims(c.spatial);
    ConvCase reversed = c;
    reversed.reverse = true;  // the kernel then needs no reversed copy
    EXPECT_TRUE(CheckConvolution(reversed, kF32, kF32, kF32));
  }
  // Window reversal alone: a reversed copy of the kernel.
  ConvCase reversed = ConvCases()[0];
  reversed.reverse = true;
  EXPECT_TRUE(CheckConvolution(reversed, kF32, kF32, kF32));
}

TEST(DenseTest, ConvolutionsOneDnnDoesNotMapFallBack) {
  // Batch groups (the weight gradient of a grouped convolution).
  EXPECT_FALSE(CheckConvolution({"b01f",
                                 "01io",
                                 "b01f",
                                 4,
                                 2,
                                 4,
                                 {5, 5},
                                 {3, 3},
                                 {1, 1},
                                 {1, 1, 1, 1},
                                 {1, 1},
                                 {1, 1},
                                 1,
                                 2},
                                kF32, kF32, kF32));
  // Negative padding (a crop).
  EXPECT_FALSE(CheckConvolution({"b01f",
                                 "01io",
                                 "b01f",
                                 1,
                                 4,
                                 4,
                                 {8, 8},
                                 {3, 3},
                                 {1, 1},
                                 {-1, 0, 0, -2},
                                 {1, 1},
                                 {1, 1}},
                                kF32, kF32, kF32));
  // Input dilation with window strides, or padding past the full
  // correlation.
  EXPECT_FALSE(CheckConvolution({"b01f",
                                 "01io",
                                 "b01f",
                                 1,
                                 4,
                                 4,
                                 {5, 5},
                                 {3, 3},
                                 {2, 2},
                                 {2, 2, 2, 2},
                                 {2, 2},
                                 {1, 1}},
                                kF32, kF32, kF32));
  EXPECT_FALSE(CheckConvolution({"b01f",
                                 "01io",
                                 "b01f",
                                 1,
                                 4,
                                 4,
                                 {5, 5},
                                 {3, 3},
                                 {1, 1},
                                 {3, 2, 2, 2},
                                 {2, 2},
                                 {1, 1}},
                                kF32, kF32, kF32));
}

// Small integers, exact in f32 however a dot adds its products.
std::vector<float> SmallIntegers(int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<float> values(count);
  for (float& v : values) v = static_cast<float>(dist(engine));
  return values;
}

// transpose(dot_general(dy, x)) with the free dimensions swapped, the way
// reverse-mode JAX writes a weight gradient, is lowered as the dot of the
// swapped operands: no transposing step (as many steps as the dot alone),
// and the values of the transpose, computed here by a plain loop. Where
// the dot has another reader, or the permutation is not the swap, the
// transpose is its own step, with the same values.
TEST(DenseTest, TransposeOfDotIsTheDotOfSwappedOperands) {
  constexpr int64_t kB = 2, kR = 6, kM = 5, kN = 7;
  const std::vector<float> dy = SmallIntegers(kB * kR * kM, 1);
  const std::vector<float> x = SmallIntegers(kB * kR * kN, 2);
  // want[b][n][m] = sum_r x[b][r][n] * dy[b][r][m]
  std::vector<float> want(kB * kN * kM, 0.0f);
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t n = 0; n < kN; ++n)
      for (int64_t m = 0; m < kM; ++m)
        for (int64_t r = 0; r < kR; ++r)
          want[(b * kN + n) * kM + m] +=
              x[(b * kR + r) * kN + n] * dy[(b * kR + r) * kM + m];
  const std::vector<HostArray> inputs{
      HostArray::Of(ElementType::kF32, {kB, kR, kM}, dy),
      HostArray::Of(ElementType::kF32, {kB, kR, kN}, x)};
  const std::string head = R"(
func.func @main(%dy: tensor<2x6x5xf32>, %x: tensor<2x6x7xf32>) -> )";
  const std::string dot =
      "  %d = stablehlo.dot_general %dy, %x, batching_dims = [0] x [0], "
      "contracting_dims = [1] x [1] : (tensor<2x6x5xf32>, tensor<2x6x7xf32>) "
      "-> tensor<2x5x7xf32>\n";
  const std::string swap =
      "  %t = stablehlo.transpose %d, dims = [0, 2, 1] : (tensor<2x5x7xf32>) "
      "-> tensor<2x7x5xf32>\n";
  const std::string dot_alone = head + "tensor<2x5x7xf32> {\n" + dot +
                                "  return %d : tensor<2x5x7xf32>\n}";
  const std::string transposed = head + "tensor<2x7x5xf32> {\n" + dot + swap +
                                 "  return %t : tensor<2x7x5xf32>\n}";
  const std::string both =
      head + "(tensor<2x5x7xf32>, tensor<2x7x5xf32>) {\n" + dot + swap +
      "  return %d, %t : tensor<2x5x7xf32>, tensor<2x7x5xf32>\n}";
  for (bool onednn : {true, false}) {
    SCOPED_TRACE(onednn ? "oneDNN" : "Kiln's kernels");
    compile::CompileOptions options;
    options.use_onednn = onednn;
    options.onednn_min_multiply_adds = 0;
    ASSERT_OK_AND_ASSIGN(auto alone, CompileText(dot_alone, options));
    ASSERT_OK_AND_ASSIGN(auto plan, CompileText(transposed, options));
    EXPECT_EQ(plan->main().steps.size(), alone->main().steps.size());
    ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
    EXPECT_EQ(out[0].As<float>(), want);

    ASSERT_OK_AND_ASSIGN(auto shared, CompileText(both, options));
    EXPECT_GT(shared->main().steps.size(), alone->main().steps.size());
    ASSERT_OK_AND_ASSIGN(auto outs, RunPlan(*shared, inputs));
    ASSERT_EQ(outs.size(), 2u);
    EXPECT_EQ(outs[1].As<float>(), want);
    const std::vector<float> d = outs[0].As<float>();
    for (int64_t b = 0; b < kB; ++b)
      for (int64_t m = 0; m < kM; ++m)
        for (int64_t n = 0; n < kN; ++n)
          EXPECT_EQ(d[(b * kM + m) * kN + n], want[(b * kN + n) * kM + m]);
  }
  // The batch dimension moved: not the swap, so a transposing step.
  const std::string moved =
      head + "tensor<5x2x7xf32> {\n" + dot +
      "  %t = stablehlo.transpose %d, dims = [1, 0, 2] : (tensor<2x5x7xf32>) "
      "-> tensor<5x2x7xf32>\n  return %t : tensor<5x2x7xf32>\n}";
  ASSERT_OK_AND_ASSIGN(auto alone, CompileText(dot_alone));
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(moved));
  EXPECT_GT(plan->main().steps.size(), alone->main().steps.size());
  ASSERT_OK_AND_ASSIGN(auto out, RunPlan(*plan, inputs));
  const std::vector<float> got = out[0].As<float>();
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t b = 0; b < kB; ++b)
      for (int64_t n = 0; n < kN; ++n)
        EXPECT_EQ(got[(m * kB + b) * kN + n], want[(b * kN + n) * kM + m]);
}

// One plan run from several threads at once: each run's oneDNN scratch is
// its own (in its arena), so concurrent runs give the results of a lone
// run, bit for bit.
TEST(DenseTest, OnePlanRunsConcurrentlyFromSeveralThreads) {
  const std::string text = R"(
func.func @main(%x: tensor<2x12x12x16xf32>, %k: tensor<3x3x16x32xf32>, %w: tensor<32x64xf32>) -> tensor<2x12x12x64xf32> {
  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x12x12x16xf32>, tensor<3x3x16x32xf32>) -> tensor<2x12x12x32xf32>
  %d = stablehlo.dot_general %c, %w, contracting_dims = [3] x [0] : (tensor<2x12x12x32xf32>, tensor<32x64xf32>) -> tensor<2x12x12x64xf32>
  return %d : tensor<2x12x12x64xf32>
})";
  compile::CompileOptions options;
  options.onednn_min_multiply_adds = 0;
  ASSERT_OK_AND_ASSIGN(auto plan, CompileText(text, options));
  ASSERT_EQ(CountOneDnnSteps(*plan), 2);
  constexpr int kThreads = 4;
  std::vector<std::vector<HostArray>> inputs(kThreads), alone(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    inputs[t] = {RandomArray(kF32, {2, 12, 12, 16}, 100 + t),
                 RandomArray(kF32, {3, 3, 16, 32}, 200 + t),
                 RandomArray(kF32, {32, 64}, 300 + t)};
    ASSERT_OK_AND_ASSIGN(alone[t], RunPlan(*plan, inputs[t]));
  }
  std::vector<std::string> together(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) {
        auto out = RunPlan(*plan, inputs[t]);
        if (!out.ok() || (*out)[0].bytes != alone[t][0].bytes) {
          together[t] =
              out.ok() ? "different results" : out.status().ToString();
          return;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(together[t], "") << t;
}

}  // namespace
}  // namespace kiln::testing
