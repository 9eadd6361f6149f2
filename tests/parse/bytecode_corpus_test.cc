// The bytecode reader on the shared corpus: every portable artifact of
// ../shared/corpus decodes, to the ops its StableHLO text shows, and the
// artifact from a future version is rejected.

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <string>

#include "base/file.h"
#include "parse/bytecode/reader.h"
#include "support/test_support.h"

namespace kiln::parse::bytecode {
namespace {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// Drops comment lines (the CHECK lines show VHLO, not the program).
std::string StripComments(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line.substr(first, 2) != "//") {
      out.append(line);
      out.push_back('\n');
    }
    start = end + 1;
  }
  return out;
}

// How many times each op appears in StableHLO text: generic names
// ("stablehlo.add"(...)) and pretty ones (stablehlo.add %x), plus the func
// dialect's short forms and the compact reduce. Attribute keys (stablehlo.attr
// = ...) and attribute / type names (#stablehlo..., !stablehlo...) are not ops.
std::map<std::string, int> OpNamesInText(const std::string& raw) {
  std::string text = StripComments(raw);
  std::map<std::string, int> counts;
  for (std::string_view dialect : {"stablehlo.", "func.", "chlo."}) {
    for (size_t pos = text.find(dialect); pos != std::string::npos;
         pos = text.find(dialect, pos + 1)) {
      size_t start = pos;
      if (start > 0 && text[start - 1] == '"') --start;
      if (start > 0) {
        char before = text[start - 1];
        if (IsNameChar(before) || before == '.' || before == '#' ||
            before == '!' || before == '@' || before == '"') {
          continue;
        }
      }
      size_t end = pos + dialect.size();
      while (end < text.size() && IsNameChar(text[end])) ++end;
      std::string name = text.substr(pos, end - pos);
      if (end < text.size() && text[end] == '"') ++end;
      if (end >= text.size() ||
          !(std::isspace(static_cast<unsigned char>(text[end])) ||
            text[end] == '(')) {
        continue;
      }
      size_t next = text.find_first_not_of(" \t\n", end);
      if (next != std::string::npos && text[next] == '=') continue;
      ++counts[name];
    }
  }
  // The compact reduce form `applies stablehlo.add` stands for a body of
  // that op and a stablehlo.return.
  for (size_t pos = text.find(" applies "); pos != std::string::npos;
       pos = text.find(" applies ", pos + 1)) {
    ++counts["stablehlo.return"];
  }
  // `return` and `call` inside functions are func.return and func.call.
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos) {
      std::string_view body = line.substr(first);
      if (body.substr(0, 7) == "return " || body == "return")
        ++counts["func.return"];
      if (body.find("= call @") != std::string_view::npos)
        ++counts["func.call"];
    }
    pos = end + 1;
  }
  return counts;
}

std::map<std::string, int> OpNamesInModule(const ir::Module& module) {
  std::map<std::string, int> counts;
  module.op().Walk([&](ir::Operation& op) {
    if (&op != &module.op()) ++counts[op.name()];
  });
  return counts;
}

std::set<std::string> FunctionNamesInText(const std::string& raw) {
  std::string text = StripComments(raw);
  std::set<std::string> names;
  for (size_t pos = text.find("func.func "); pos != std::string::npos;
       pos = text.find("func.func ", pos + 1)) {
    size_t at = text.find('@', pos);
    size_t end = at + 1;
    while (end < text.size() && IsNameChar(text[end])) ++end;
    names.insert(text.substr(at + 1, end - at - 1));
  }
  return names;
}

std::string Describe(const std::map<std::string, int>& expected,
                     const std::map<std::string, int>& actual) {
  std::string out;
  std::set<std::string> keys;
  for (const auto& [name, count] : expected) keys.insert(name);
  for (const auto& [name, count] : actual) keys.insert(name);
  for (const std::string& name : keys) {
    int want = expected.count(name) ? expected.at(name) : 0;
    int got = actual.count(name) ? actual.at(name) : 0;
    if (want != got)
      StrAppend(out, " ", name, ": text ", want, ", bytecode ", got, ";");
  }
  return out;
}

TEST(BytecodeCorpusTest, EveryArtifactDecodesToTheOpsOfItsText) {
  KILN_REQUIRE_SHARED_DIR(shared);
  std::vector<std::string> files =
      kiln::testing::ListFiles(shared + "/corpus/stablehlo/vhlo", ".mlir.bc");
  ASSERT_FALSE(files.empty());
  int decoded = 0;
  for (const std::string& path : files) {
    if (path.find("invalid_") != std::string::npos) continue;
    SCOPED_TRACE(path);
    ASSERT_OK_AND_ASSIGN(std::string bytes, ReadFile(path));
    ASSERT_OK_AND_ASSIGN(std::string text,
                         ReadFile(path.substr(0, path.size() - 3)));
    ASSERT_TRUE(LooksLikeBytecode(bytes));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                         ReadBytecodeModule(bytes, path));
    std::set<std::string> functions;
    for (ir::Operation* func : module->Functions()) {
      functions.insert(std::string(ir::func::Name(*func)));
    }
    EXPECT_EQ(functions, FunctionNamesInText(text));
    std::map<std::string, int> expected = OpNamesInText(text);
    std::map<std::string, int> actual = OpNamesInModule(*module);
    EXPECT_EQ(expected, actual) << "differences:" << Describe(expected, actual);
    ++decoded;
  }
  EXPECT_EQ(decoded, 33);
  std::printf("decoded %d VHLO artifacts\n", decoded);
}

TEST(BytecodeCorpusTest, RejectsTheArtifactFromAFutureVersion) {
  KILN_REQUIRE_SHARED_DIR(shared);
  ASSERT_OK_AND_ASSIGN(
      std::string bytes,
      ReadFile(shared + "/corpus/stablehlo/vhlo/invalid_vhlo_future.mlir.bc"));
  StatusOr<std::unique_ptr<ir::Module>> module =
      ReadBytecodeModule(bytes, "invalid_vhlo_future.mlir.bc");
  ASSERT_FALSE(module.ok());
  std::string_view message = module.status().message();
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("invalid_vhlo_future.mlir.bc"), std::string_view::npos)
      << message;
  EXPECT_NE(message.find("'StableHLO_v2.0.0'"), std::string_view::npos)
      << message;
  EXPECT_NE(message.find("VHLO 0.9.0 to 1.20.0"), std::string_view::npos)
      << message;
}

TEST(BytecodeCorpusTest, DecodesTheJaxModelArtifact) {
  KILN_REQUIRE_SHARED_DIR(shared);
  std::string path = shared + "/corpus/models/searchless_chess_9m.mlir.bc";
  ASSERT_OK_AND_ASSIGN(std::string bytes, ReadFile(path));
  ASSERT_OK_AND_ASSIGN(
      std::string text,
      ReadFile(shared + "/corpus/models/searchless_chess_9m.mlir"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                       ReadBytecodeModule(bytes, path));
  EXPECT_EQ(module->name(), "jit_predict_sequence");
  ir::Operation* main = module->LookupFunction("main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(ir::func::FunctionType(*main).inputs().size(), 95u);
  std::map<std::string, int> expected = OpNamesInText(text);
  std::map<std::string, int> actual = OpNamesInModule(*module);
  EXPECT_EQ(expected, actual) << "differences:" << Describe(expected, actual);
  // Module attributes stay builtin.
  EXPECT_EQ(
      module->op().GetAttr("mhlo.num_partitions"),
      ir::Attribute::Integer(1, ir::Type::Element(ir::ElementType::kI32)));
}

// Bad input gives an error, never a crash: every truncation and many
// corruptions of real artifacts (run these under ASan/UBSan too).
TEST(BytecodeCorpusTest, SurvivesTruncatedAndCorruptedArtifacts) {
  KILN_REQUIRE_SHARED_DIR(shared);
  std::string dir = shared + "/corpus/stablehlo/vhlo/";
  int errors = 0;
  for (const char* name : {"vhlo_emit_version_api.1_1_0.mlir.bc",
                           "stablehlo_legalize_to_vhlo.0_9_0.mlir.bc",
                           "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"}) {
    SCOPED_TRACE(name);
    ASSERT_OK_AND_ASSIGN(std::string bytes, ReadFile(dir + name));
    size_t step = bytes.size() < 1000 ? 1 : 97;
    for (size_t size = 0; size < bytes.size(); size += step) {
      StatusOr<std::unique_ptr<ir::Module>> module =
          ReadBytecodeModule(std::string_view(bytes).substr(0, size), name);
      EXPECT_FALSE(module.ok()) << "truncated to " << size << " bytes";
      ++errors;
    }
    for (size_t pos = 0; pos < bytes.size(); pos += step) {
      for (uint8_t value : {0x00, 0x7f, 0xff}) {
        std::string corrupted = bytes;
        corrupted[pos] = static_cast<char>(value);
        StatusOr<std::unique_ptr<ir::Module>> module =
            ReadBytecodeModule(corrupted, name);
        if (!module.ok()) {
          EXPECT_FALSE(module.status().message().empty());
          ++errors;
        }
      }
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace kiln::parse::bytecode
