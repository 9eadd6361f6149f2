// The StableHLO testdata corpus of ../shared through the plugin's C API, as
// a framework would run it: each file is parsed with Kiln's parser, its
// @main rewritten so that every check custom call (@check.expect_eq,
// @check.expect_close, @check.expect_almost_eq) is removed and its two
// operands are returned instead, printed as MLIR text with Kiln's printer,
// compiled with PJRT_Client_Compile, executed, read back with
// ToHostBuffer, and each (actual, expected) pair compared on the host with
// the corpus's tolerances (the comparison `kiln check` uses). A second
// pass makes the constants @inputs returns into arguments of @main,
// uploaded with BufferFromHostBuffer, so that the plugin computes at run
// time what it would otherwise fold while compiling.
//
// A case that fails here must also fail under `kiln check` (so the C API
// loses nothing the compiler can do) or be listed below with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "exec/array_shape.h"
#include "ir/operation.h"
#include "ir/printer.h"
#include "parse/parse.h"
#include "plugin_harness.h"
#include "support/test_support.h"
#include "tools/check/check_targets.h"
#include "tools/check/corpus.h"

namespace kiln::testing {
namespace {

// Cases allowed to fail through the C API although `kiln check` passes
// them, with why. Empty: the C API path loses nothing.
const std::map<std::string, std::string>& KnownCApiOnlyFailures() {
  static const auto* known = new std::map<std::string, std::string>{};
  return *known;
}

// One check of the original program: how its returned pair compares.
struct PairCheck {
  std::string target;
  check::Comparison comparison;
  exec::ArrayShape shape;
};

struct Outcome {
  enum Kind { kPassed, kFailed, kSkipped } kind = kPassed;
  std::string reason;
};

// The comparison a check custom call makes, from its target and attributes
// (the tolerances of shared/corpus/README.md, as tools/check applies them).
bool ComparisonFor(const std::string& target, const ir::Operation& op,
                   check::Comparison* comparison) {
  using Mode = check::Comparison::Mode;
  if (target == "check.expect_eq") {
    *comparison = {.mode = Mode::kExact};
  } else if (target == "check.expect_close") {
    *comparison = {.mode = Mode::kUlps, .max_ulps = check::kExpectCloseUlps};
    ir::Attribute max = op.GetAttr("max_ulp_difference");
    if (max.is(ir::AttrKind::kInteger)) {
      comparison->max_ulps = static_cast<uint64_t>(max.int_value());
    }
    ir::Attribute min = op.GetAttr("min_ulp_difference");
    if (min.is(ir::AttrKind::kInteger)) {
      comparison->min_ulps = static_cast<uint64_t>(min.int_value());
    }
  } else if (target == "check.expect_almost_eq") {
    // The custom call of testdata/ allows 1e-3; the check dialect's op
    // (math/) its attribute, else 1e-4.
    *comparison = {.mode = Mode::kAbsolute,
                   .tolerance = op.is(ir::OpCode::kCustomCall)
                                    ? check::kExpectAlmostEqTolerance
                                    : check::kCheckOpDefaultTolerance};
    ir::Attribute tolerance = op.GetAttr("tolerance");
    if (tolerance.is(ir::AttrKind::kFloat)) {
      comparison->tolerance = tolerance.float_value();
    }
  } else {
    return false;
  }
  return true;
}

// The check an op makes: the target of a `stablehlo.custom_call
// @check.*` (testdata/) or the name of a `check` dialect op (math/); ""
// for other ops.
std::string CheckTarget(const ir::Operation& op) {
  if (op.is(ir::OpCode::kCustomCall)) {
    ir::Attribute target = op.GetAttr("call_target_name");
    if (target.is(ir::AttrKind::kString) &&
        target.string_value().rfind("check.", 0) == 0) {
      return target.string_value();
    }
    return "";
  }
  return op.dialect() == "check" ? op.name() : "";
}

// Rewrites @main: its check custom calls go, their operands become its
// results (actual, expected, actual, expected, ...). Returns the checks in
// order, or an empty list (and `why`) when the case cannot be rewritten.
std::vector<PairCheck> ReturnCheckedPairs(ir::Module& module,
                                          std::string* why) {
  ir::Operation* main = module.LookupFunction("main");
  if (main == nullptr) {
    *why = "no @main";
    return {};
  }
  ir::Block& body = ir::func::Body(*main);
  std::vector<PairCheck> checks;
  std::vector<ir::Value*> returned;
  for (size_t i = 0; i < body.operations().size();) {
    const ir::Operation& op = *body.operations()[i];
    std::string target = CheckTarget(op);
    if (target.empty()) {
      ++i;
      continue;
    }
    PairCheck pair;
    pair.target = target;
    if (!ComparisonFor(pair.target, op, &pair.comparison)) {
      *why = "unknown check @" + pair.target;
      return {};
    }
    if (op.num_operands() != 2) {
      *why = "@" + pair.target + " with " + std::to_string(op.num_operands()) +
             " operands";
      return {};
    }
    const ir::Type& type = op.operand(0)->type();
    if (!type.IsTensor() || !type.HasStaticShape() ||
        type != op.operand(1)->type()) {
      *why = "@" + pair.target + " compares " + type.ToString() + " with " +
             op.operand(1)->type().ToString();
      return {};
    }
    pair.shape = exec::ArrayShape{type.StorageElementType(), type.shape()};
    returned.push_back(op.operand(0));
    returned.push_back(op.operand(1));
    checks.push_back(std::move(pair));
    body.Remove(i);
  }
  // Checks nested in regions (none in testdata) would stay behind.
  bool nested = false;
  main->Walk([&](ir::Operation& op) {
    if (!CheckTarget(op).empty()) nested = true;
  });
  if (nested) {
    *why = "a check inside a region";
    return {};
  }
  if (checks.empty()) {
    *why = "no checks in @main";
    return {};
  }
  ir::Operation* terminator = body.terminator();
  if (terminator == nullptr) {
    *why = "@main has no return";
    return {};
  }
  terminator->set_operands(returned);
  std::vector<ir::Type> result_types;
  for (const ir::Value* value : returned) result_types.push_back(value->type());
  main->SetAttr("function_type",
                ir::Attribute::TypeAttr(ir::Type::Function(
                    ir::func::FunctionType(*main).inputs(), result_types)));
  main->RemoveAttr("res_attrs");
  return checks;
}

// The PJRT buffer type holding an IR element type, or INVALID when PJRT
// has none (f6 types, tf32).
PJRT_Buffer_Type BufferTypeOf(ir::ElementType type) {
  using E = ir::ElementType;
  static const auto* table = new std::map<E, PJRT_Buffer_Type>{
      {E::kI1, PJRT_Buffer_Type_PRED},
      {E::kI2, PJRT_Buffer_Type_S2},
      {E::kI4, PJRT_Buffer_Type_S4},
      {E::kI8, PJRT_Buffer_Type_S8},
      {E::kI16, PJRT_Buffer_Type_S16},
      {E::kI32, PJRT_Buffer_Type_S32},
      {E::kI64, PJRT_Buffer_Type_S64},
      {E::kUI2, PJRT_Buffer_Type_U2},
      {E::kUI4, PJRT_Buffer_Type_U4},
      {E::kUI8, PJRT_Buffer_Type_U8},
      {E::kUI16, PJRT_Buffer_Type_U16},
      {E::kUI32, PJRT_Buffer_Type_U32},
      {E::kUI64, PJRT_Buffer_Type_U64},
      {E::kF4E2M1FN, PJRT_Buffer_Type_F4E2M1FN},
      {E::kF8E3M4, PJRT_Buffer_Type_F8E3M4},
      {E::kF8E4M3, PJRT_Buffer_Type_F8E4M3},
      {E::kF8E4M3FN, PJRT_Buffer_Type_F8E4M3FN},
      {E::kF8E4M3FNUZ, PJRT_Buffer_Type_F8E4M3FNUZ},
      {E::kF8E4M3B11FNUZ, PJRT_Buffer_Type_F8E4M3B11FNUZ},
      {E::kF8E5M2, PJRT_Buffer_Type_F8E5M2},
      {E::kF8E5M2FNUZ, PJRT_Buffer_Type_F8E5M2FNUZ},
      {E::kF8E8M0FNU, PJRT_Buffer_Type_F8E8M0FNU},
      {E::kBF16, PJRT_Buffer_Type_BF16},
      {E::kF16, PJRT_Buffer_Type_F16},
      {E::kF32, PJRT_Buffer_Type_F32},
      {E::kF64, PJRT_Buffer_Type_F64},
      {E::kC64, PJRT_Buffer_Type_C64},
      {E::kC128, PJRT_Buffer_Type_C128},
  };
  auto it = table->find(type);
  return it == table->end() ? PJRT_Buffer_Type_INVALID : it->second;
}

// One argument of the rewritten @main: the bytes @inputs returned.
struct HostInput {
  PJRT_Buffer_Type type = PJRT_Buffer_Type_INVALID;
  std::vector<int64_t> dims;
  std::string bytes;  // Kiln's dense storage (one byte per sub-byte value)
};

// Rewrites @main so that the values of `call @inputs()` (constants in
// testdata) become its arguments, to be uploaded as buffers: the program
// then computes at run time instead of folding its constant inputs while
// compiling. Returns false (and `why`) when the case does not have that
// form.
bool InputsAsArguments(ir::Module& module, std::vector<HostInput>* inputs,
                       std::string* why) {
  ir::Operation* main = module.LookupFunction("main");
  ir::Operation* producer = module.LookupFunction("inputs");
  if (main == nullptr || producer == nullptr) {
    *why = "no @inputs";
    return false;
  }
  ir::Block& body = ir::func::Body(*main);
  if (body.num_arguments() != 0) {
    *why = "@main has arguments";
    return false;
  }
  int64_t call_at = -1;
  for (size_t i = 0; i < body.operations().size(); ++i) {
    const ir::Operation& op = *body.operations()[i];
    ir::Attribute callee = op.GetAttr("callee");
    if (op.is(ir::OpCode::kCall) && callee.is(ir::AttrKind::kSymbolRef) &&
        callee.symbol_root() == "inputs") {
      if (call_at >= 0) {
        *why = "@inputs called twice";
        return false;
      }
      call_at = static_cast<int64_t>(i);
    }
  }
  if (call_at < 0) {
    *why = "@main does not call @inputs";
    return false;
  }
  // The values @inputs returns, each a constant.
  ir::Operation* ret = ir::func::Body(*producer).terminator();
  ir::Operation* call = body.operations()[call_at].get();
  if (ret == nullptr || ret->num_operands() != call->num_results()) {
    *why = "@inputs does not return its results";
    return false;
  }
  for (const ir::Value* value : ret->operands()) {
    const ir::Operation* constant = value->defining_op();
    ir::Attribute data =
        constant == nullptr ? ir::Attribute() : constant->GetAttr("value");
    const ir::Type& type = value->type();
    if (constant == nullptr || !constant->is(ir::OpCode::kConstant) ||
        !data.is(ir::AttrKind::kDenseElements) || !type.IsTensor() ||
        !type.HasStaticShape()) {
      *why = "an input is not a dense constant";
      return false;
    }
    HostInput input;
    input.type = BufferTypeOf(type.StorageElementType());
    if (input.type == PJRT_Buffer_Type_INVALID) {
      *why = "no PJRT buffer type for " + type.ToString();
      return false;
    }
    input.dims = type.shape();
    input.bytes = data.DenseDataExpanded();
    inputs->push_back(std::move(input));
  }
  // Block arguments take the call's place in every use.
  std::map<const ir::Value*, ir::Value*> replacement;
  std::vector<ir::Type> argument_types;
  for (int i = 0; i < call->num_results(); ++i) {
    ir::Value* argument = body.AddArgument(call->result(i)->type());
    replacement[call->result(i)] = argument;
    argument_types.push_back(argument->type());
  }
  main->Walk([&](ir::Operation& op) {
    for (int i = 0; i < op.num_operands(); ++i) {
      auto it = replacement.find(op.operand(i));
      if (it != replacement.end()) op.SetOperand(i, it->second);
    }
  });
  body.Remove(static_cast<size_t>(call_at));
  main->SetAttr("function_type",
                ir::Attribute::TypeAttr(ir::Type::Function(
                    argument_types, ir::func::FunctionType(*main).results())));
  main->RemoveAttr("arg_attrs");
  return true;
}

std::string RelativeName(const std::string& path) {
  size_t at = path.find("stablehlo/");
  return at == std::string::npos ? path : path.substr(at + 10);
}

class CorpusThroughCApiTest : public PluginTest {
 protected:
  static int Workers() {
    int cores = static_cast<int>(std::thread::hardware_concurrency());
    return std::clamp(cores, 2, 8);
  }
  CorpusThroughCApiTest() : PluginTest(Workers()) {}

  // Runs one file on `device` (a one-device executable assigned to it),
  // with its inputs as constants of the program or, when
  // `inputs_as_arguments`, as uploaded buffers.
  Outcome RunFile(const std::string& path, int device,
                  bool inputs_as_arguments) {
    auto text = ReadFile(path);
    if (!text.ok()) return {Outcome::kFailed, text.status().ToString()};
    auto module = parse::ParseModule(*text, path);
    if (!module.ok()) {
      return {Outcome::kFailed, "parse: " + module.status().ToString()};
    }
    std::string why;
    std::vector<PairCheck> checks = ReturnCheckedPairs(**module, &why);
    if (checks.empty()) return {Outcome::kSkipped, why};
    std::vector<HostInput> inputs;
    if (inputs_as_arguments && !InputsAsArguments(**module, &inputs, &why)) {
      return {Outcome::kSkipped, why};
    }
    std::string program = ir::PrintModule(**module);

    PJRT_LoadedExecutable* loaded = nullptr;
    ErrorInfo compiled =
        TryCompile(program, JaxCompileOptions(1, 1, false, {device}), &loaded);
    if (compiled.code != PJRT_Error_Code_OK) {
      return {Outcome::kFailed, "compile: " + Describe(compiled)};
    }
    if (inputs_as_arguments) {
      // The rewrite reached the plugin: it sees the inputs as parameters.
      PJRT_Executable* executable = GetExecutable(loaded);
      auto kinds = KILN_ARGS(PJRT_Executable_ParameterMemoryKinds_Args);
      kinds.executable = executable;
      PJRT_EXPECT_OK(api_, api_->PJRT_Executable_ParameterMemoryKinds(&kinds));
      EXPECT_EQ(kinds.num_parameters, inputs.size()) << path;
      DestroyExecutable(executable);
    }
    std::vector<PJRT_Buffer*> arguments;
    for (const HostInput& input : inputs) {
      PJRT_Buffer* buffer =
          Upload(input.bytes.data(), input.type, input.dims, Devices()[device]);
      if (buffer != nullptr) arguments.push_back(buffer);
    }
    Outcome outcome =
        arguments.size() == inputs.size()
            ? RunAndCompare(loaded, checks, arguments)
            : Outcome{Outcome::kFailed, "BufferFromHostBuffer failed"};
    DestroyBuffers(arguments);
    DestroyLoadedExecutable(loaded);
    return outcome;
  }

  // Runs every file of corpus/stablehlo/<folder> (testdata/ without its
  // dynamic/ and quantized/ parts) and checks that each failure is one
  // `kiln check` shares or a listed one.
  void RunFolder(const std::string& shared, const std::string& folder,
                 bool inputs_as_arguments);

  Outcome RunAndCompare(PJRT_LoadedExecutable* loaded,
                        const std::vector<PairCheck>& checks,
                        const std::vector<PJRT_Buffer*>& arguments = {}) {
    ExecuteResult result = Execute(loaded, {arguments});
    if (result.error.code != PJRT_Error_Code_OK) {
      return {Outcome::kFailed, "execute: " + Describe(result.error)};
    }
    Outcome outcome;
    for (PJRT_Event* event : result.events) {
      ErrorInfo done = AwaitAndDestroy(event);
      if (done.code != PJRT_Error_Code_OK && outcome.kind == Outcome::kPassed) {
        outcome = {Outcome::kFailed, "run: " + Describe(done)};
      }
    }
    const std::vector<PJRT_Buffer*>& outputs = result.outputs[0];
    if (outcome.kind == Outcome::kPassed &&
        outputs.size() != 2 * checks.size()) {
      outcome = {Outcome::kFailed,
                 "the executable has " + std::to_string(outputs.size()) +
                     " outputs; expected " + std::to_string(2 * checks.size())};
    }
    for (size_t i = 0; outcome.kind == Outcome::kPassed && i < checks.size();
         ++i) {
      const PairCheck& pair = checks[i];
      std::vector<uint8_t> actual, expected;
      ErrorInfo read = TryDownload(outputs[2 * i], &actual);
      if (read.code == PJRT_Error_Code_OK) {
        read = TryDownload(outputs[2 * i + 1], &expected);
      }
      std::string label = "check " + std::to_string(i) + " (@" + pair.target +
                          " of " + pair.shape.ToString() + "): ";
      if (read.code != PJRT_Error_Code_OK) {
        outcome = {Outcome::kFailed, label + "ToHostBuffer: " + Describe(read)};
        break;
      }
      int64_t bytes = pair.shape.byte_size();
      if (static_cast<int64_t>(actual.size()) != bytes ||
          static_cast<int64_t>(expected.size()) != bytes) {
        outcome = {Outcome::kFailed,
                   label + "read " + std::to_string(actual.size()) + " and " +
                       std::to_string(expected.size()) + " bytes; expected " +
                       std::to_string(bytes)};
        break;
      }
      Status same = check::Compare(
          pair.shape, reinterpret_cast<const std::byte*>(actual.data()),
          reinterpret_cast<const std::byte*>(expected.data()), pair.comparison);
      if (!same.ok()) {
        outcome = {Outcome::kFailed, label + std::string(same.message())};
      }
    }
    DestroyBuffers(outputs);
    return outcome;
  }
};

// The runner itself: a case whose expected value is wrong must fail, one
// whose value is within the tolerance must pass.
TEST_F(CorpusThroughCApiTest, RunnerTellsRightFromWrong) {
  // 0.1 + 0.2 in f32 is 0.300000012 (0x3e99999a); 0.3 is 0x3e99999a too,
  // so expect_close passes; 0.31 is 0.01 away, past expect_almost_eq's
  // 1e-3; the i32 sum 2 + 2 is exactly 4, not 5.
  constexpr char kProgram[] = R"mlir(
module @jit_main {
  func.func public @main() -> tensor<f32> {
    %a = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %b = stablehlo.constant dense<2.000000e-01> : tensor<f32>
    %sum = stablehlo.add %a, %b : tensor<f32>
    %close = stablehlo.constant dense<3.000000e-01> : tensor<f32>
    %far = stablehlo.constant dense<3.100000e-01> : tensor<f32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %four = stablehlo.add %two, %two : tensor<i32>
    %five = stablehlo.constant dense<5> : tensor<i32>
    stablehlo.custom_call @check.expect_close(%sum, %close) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
    stablehlo.custom_call @check.expect_almost_eq(%sum, %far) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
    stablehlo.custom_call @check.expect_eq(%four, %five) {has_side_effect = true} : (tensor<i32>, tensor<i32>) -> ()
    return %sum : tensor<f32>
  }
}
)mlir";
  auto module = parse::ParseModule(kProgram, "runner_test.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::string why;
  std::vector<PairCheck> checks = ReturnCheckedPairs(**module, &why);
  ASSERT_EQ(checks.size(), 3u) << why;
  PJRT_LoadedExecutable* loaded = Compile(ir::PrintModule(**module));
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(NumOutputs(loaded), 6u);
  Outcome all = RunAndCompare(loaded, checks);
  EXPECT_EQ(all.kind, Outcome::kFailed);
  // The first failing pair is reported: the almost_eq one.
  EXPECT_NE(all.reason.find("check 1 (@check.expect_almost_eq"),
            std::string::npos)
      << all.reason;
  Outcome first = RunAndCompare(loaded, {checks[0]});
  EXPECT_EQ(first.kind, Outcome::kFailed)
      << "the executable has 6 outputs; one pair expects 2";
  DestroyLoadedExecutable(loaded);

  // Only the close pair: passes.
  auto close_only = parse::ParseModule(kProgram, "runner_test.mlir");
  ASSERT_TRUE(close_only.ok());
  ir::Block& body = ir::func::Body(*(*close_only)->LookupFunction("main"));
  // Drop the last two checks (the ops before the return).
  body.Remove(body.operations().size() - 2);
  body.Remove(body.operations().size() - 2);
  checks = ReturnCheckedPairs(**close_only, &why);
  ASSERT_EQ(checks.size(), 1u) << why;
  loaded = Compile(ir::PrintModule(**close_only));
  ASSERT_NE(loaded, nullptr);
  Outcome passed = RunAndCompare(loaded, checks);
  EXPECT_EQ(passed.kind, Outcome::kPassed) << passed.reason;
  DestroyLoadedExecutable(loaded);
}

TEST_F(CorpusThroughCApiTest, Testdata) {
  KILN_REQUIRE_SHARED_DIR(shared);
  RunFolder(shared, "testdata", /*inputs_as_arguments=*/false);
}

TEST_F(CorpusThroughCApiTest, TestdataWithInputsAsArguments) {
  KILN_REQUIRE_SHARED_DIR(shared);
  RunFolder(shared, "testdata", /*inputs_as_arguments=*/true);
}

// math/: accuracy tests of elementary functions, checked with the check
// dialect's expect_close (3 ULP).
TEST_F(CorpusThroughCApiTest, Math) {
  KILN_REQUIRE_SHARED_DIR(shared);
  RunFolder(shared, "math", /*inputs_as_arguments=*/false);
}

void CorpusThroughCApiTest::RunFolder(const std::string& shared,
                                      const std::string& folder,
                                      bool inputs_as_arguments) {
  // testdata/'s top folder only: dynamic/ has no checks, quantized/ uses
  // types PJRT buffers cannot hold.
  std::vector<std::string> files;
  for (const std::string& file :
       ListFiles(shared + "/corpus/stablehlo/" + folder, ".mlir")) {
    if (file.find("/testdata/dynamic/") == std::string::npos &&
        file.find("/testdata/quantized/") == std::string::npos) {
      files.push_back(file);
    }
  }
  ASSERT_FALSE(files.empty());
  auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> outcomes(files.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < device_count_; ++w) {
    workers.emplace_back([&, w] {
      for (size_t i = next++; i < files.size(); i = next++) {
        outcomes[i] = RunFile(files[i], w, inputs_as_arguments);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  int passed = 0, failed = 0, skipped = 0, unexpected = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    std::string name = RelativeName(files[i]);
    switch (outcomes[i].kind) {
      case Outcome::kPassed:
        ++passed;
        break;
      case Outcome::kSkipped:
        ++skipped;
        std::printf("skipped %s: %s\n", name.c_str(),
                    outcomes[i].reason.c_str());
        break;
      case Outcome::kFailed: {
        ++failed;
        std::printf("failed %s: %s\n", name.c_str(),
                    outcomes[i].reason.c_str());
        auto known = KnownCApiOnlyFailures().find(name);
        if (known != KnownCApiOnlyFailures().end()) {
          std::printf("  known: %s\n", known->second.c_str());
          break;
        }
        // Allowed only when the compiler fails it too, run as `kiln check`
        // runs it (without folding when the inputs were arguments: then
        // nothing folds through the C API either).
        check::CorpusOptions direct_options;
        direct_options.fold_constants = !inputs_as_arguments;
        std::vector<check::CaseResult> direct =
            check::RunCorpusFile(files[i], direct_options);
        bool direct_passes =
            !direct.empty() &&
            std::all_of(direct.begin(), direct.end(), [](const auto& r) {
              return r.outcome == check::CaseResult::Outcome::kPassed;
            });
        if (direct_passes) {
          ++unexpected;
          ADD_FAILURE() << name << " passes under kiln check but fails "
                        << "through the C API: " << outcomes[i].reason;
        } else {
          std::printf("  also fails under kiln check: %s\n",
                      direct.empty() ? "(no case)" : direct[0].reason.c_str());
        }
        break;
      }
    }
  }
  std::printf(
      "%s through the C API%s: %d passed, %d failed, %d skipped of %zu "
      "(%d workers, %.1f s)\n",
      folder.c_str(), inputs_as_arguments ? " (inputs as arguments)" : "",
      passed, failed, skipped, files.size(), device_count_, seconds);
  EXPECT_EQ(unexpected, 0);
  EXPECT_GT(passed, 0);
}

}  // namespace
}  // namespace kiln::testing
