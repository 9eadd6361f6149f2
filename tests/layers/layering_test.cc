// The layers of src/ include only what the table in docs/architecture.md
// ("Layers", the rows under its `layering table` marker) allows them: a
// layer's own files, and for each other path the layers or the headers its
// row names. The table is read from the doc, so the doc and the check are
// one fact.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

// Layer -> what it may include besides itself: a layer's name (any header
// under it: "ir") or one header ("compile/pipeline.h").
using LayerTable = std::map<std::string, std::set<std::string>>;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Strip(std::string text) {
  const char* space = " \t`";
  text.erase(0, text.find_first_not_of(space));
  size_t end = text.find_last_not_of(space);
  text.erase(end == std::string::npos ? 0 : end + 1);
  return text;
}

// The rows `| layer | a, b, ... |` that follow the marker line, up to the
// first line that is not a table row.
LayerTable ParseTable(const std::string& doc) {
  LayerTable table;
  size_t marker = doc.find("<!-- layering table");
  if (marker == std::string::npos) return table;
  std::istringstream lines(doc.substr(doc.find('\n', marker) + 1));
  std::string line;
  int row = 0;
  while (std::getline(lines, line) && !line.empty() && line[0] == '|') {
    if (row++ < 2) continue;  // the header and its rule
    std::vector<std::string> cells;
    std::stringstream cell_stream(line.substr(1));
    std::string cell;
    while (std::getline(cell_stream, cell, '|')) cells.push_back(cell);
    if (cells.size() < 2) continue;
    std::set<std::string>& allowed = table[Strip(cells[0])];
    std::stringstream items(cells[1]);
    std::string item;
    while (std::getline(items, item, ',')) {
      item = Strip(item);
      if (!item.empty() && item != "-") allowed.insert(item);
    }
  }
  return table;
}

// The quoted includes of a source file, with their line numbers (includes
// in comments are not includes).
std::vector<std::pair<int, std::string>> Includes(const std::string& text) {
  std::vector<std::pair<int, std::string>> includes;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    size_t hash = line.find_first_not_of(" \t");
    if (hash == std::string::npos || line.compare(hash, 8, "#include") != 0) {
      continue;
    }
    size_t open = line.find('"', hash);
    size_t close = open == std::string::npos ? open : line.find('"', open + 1);
    if (close == std::string::npos) continue;
    includes.emplace_back(number, line.substr(open + 1, close - open - 1));
  }
  return includes;
}

// Why `layer` may not include `header`, or "" where it may.
std::string Refusal(const LayerTable& table, const std::string& layer,
                    const std::string& header) {
  auto row = table.find(layer);
  if (row == table.end()) {
    return "the layer has no row in the table";
  }
  std::string top = header.substr(0, header.find('/'));
  if (top == layer || row->second.count(top) > 0 ||
      row->second.count(header) > 0) {
    return "";
  }
  std::string allowed;
  for (const std::string& item : row->second) {
    allowed += (allowed.empty() ? "" : ", ") + item;
  }
  return layer + " may include only itself and: " +
         (allowed.empty() ? "nothing" : allowed);
}

// Every include of a file under `src` that its layer's row refuses, as
// "path:line includes header (why)".
std::vector<std::string> Violations(const LayerTable& table,
                                    const fs::path& src) {
  std::vector<std::string> violations;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    std::string extension = entry.path().extension().string();
    if (extension != ".cc" && extension != ".h" && extension != ".c" &&
        extension != ".def") {
      continue;
    }
    fs::path relative = fs::relative(entry.path(), src);
    std::string layer = relative.begin()->string();
    if (relative.begin() == --relative.end()) continue;  // src/ itself
    for (const auto& [line, header] : Includes(ReadText(entry.path()))) {
      std::string why = Refusal(table, layer, header);
      if (!why.empty()) {
        violations.push_back("src/" + relative.string() + ":" +
                             std::to_string(line) + " includes " + header +
                             " (" + why + ")");
      }
    }
  }
  return violations;
}

fs::path SourceDir() { return fs::path(KILN_SOURCE_DIR); }

LayerTable DocTable() {
  return ParseTable(ReadText(SourceDir() / "docs" / "architecture.md"));
}

TEST(LayeringTest, TheDocHasTheTable) {
  LayerTable table = DocTable();
  EXPECT_GE(table.size(), 8u) << "docs/architecture.md lost its table";
  EXPECT_TRUE(table.count("base") && table.at("base").empty());
  // Every folder of src/ is a layer with a row: a new one takes its place
  // in the table when it is made.
  for (const auto& entry : fs::directory_iterator(SourceDir() / "src")) {
    if (!entry.is_directory()) continue;
    EXPECT_TRUE(table.count(entry.path().filename().string()))
        << entry.path().filename() << " has no row in the layering table";
  }
}

TEST(LayeringTest, NoIncludeCrossesTheTable) {
  std::vector<std::string> violations =
      Violations(DocTable(), SourceDir() / "src");
  std::string list;
  for (const std::string& violation : violations) list += violation + "\n";
  EXPECT_TRUE(violations.empty()) << list;
}

TEST(LayeringTest, TheCheckCatchesAnUpwardInclude) {
  LayerTable table = ParseTable(
      "<!-- layering table -->\n"
      "| layer | may include |\n"
      "| --- | --- |\n"
      "| `base` | - |\n"
      "| `ir` | `base` |\n"
      "| `runtime` | `base`, `ir`, `compile/pipeline.h` |\n");
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(Refusal(table, "ir", "base/status.h"), "");
  EXPECT_EQ(Refusal(table, "ir", "ir/type.h"), "");
  EXPECT_EQ(Refusal(table, "runtime", "compile/pipeline.h"), "");
  EXPECT_NE(Refusal(table, "runtime", "compile/lowering.h"), "");
  EXPECT_NE(Refusal(table, "base", "ir/type.h"), "");
  EXPECT_NE(Refusal(table, "parse", "base/status.h"), "");
  auto found = Includes(
      "// #include \"runtime/client.h\" in a comment\n"
      "#include <vector>\n"
      "  #include \"ir/type.h\"\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], std::make_pair(3, std::string("ir/type.h")));
}

}  // namespace
}  // namespace kiln::testing
