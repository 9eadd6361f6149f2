// Checks include/pjrt_c_api.h against the measured tables of PJRT 0.112 in
// shared/abi/, line by line: every struct's size and alignment, every
// field's offset, every constant's value, every function type's signature,
// and the order of the 138 PJRT_Api slots (also against
// include/pjrt_c_api_slots.def, the list the plugin fills its table from). The
// compiler measures Kiln's side (offsetof, sizeof, the types themselves); the
// tables are read at test time.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "pjrt_c_api.h"
#include "support/test_support.h"

namespace kiln::testing {
namespace {

using Row = std::vector<std::string>;

std::vector<Row> ReadTable(const std::string& path) {
  std::vector<Row> rows;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Row row;
    size_t start = 0;
    while (true) {
      size_t tab = line.find('\t', start);
      row.push_back(line.substr(start, tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string TablePath(const std::string& shared, const std::string& table) {
  return shared + "/abi/pjrt_c_api_0.112." + table + ".tsv";
}

// ---- What the header declares, measured by the compiler. ----

struct StructFact {
  size_t size;
  size_t align;
};

const std::map<std::string, StructFact>& HeaderStructs() {
  static const auto* facts = new std::map<std::string, StructFact>{
#define KILN_ABI_STRUCT(S) {#S, {sizeof(struct S), alignof(struct S)}},
#include "abi_entries_expand.h"
  };
  return *facts;
}

// Keyed by "Struct.field".
const std::map<std::string, size_t>& HeaderFieldOffsets() {
  static const auto* facts = new std::map<std::string, size_t>{
#define KILN_ABI_FIELD(S, f) {#S "." #f, offsetof(struct S, f)},
#include "abi_entries_expand.h"
  };
  return *facts;
}

const std::map<std::string, int64_t>& HeaderConstants() {
  static const auto* facts = new std::map<std::string, int64_t>{
#define KILN_ABI_CONSTANT(C) {#C, static_cast<int64_t>(C)},
#include "abi_entries_expand.h"
  };
  return *facts;
}

// ---- Rendering a C type the way the tables print it. ----

// Types the header names with a typedef render as that name.
template <typename T>
struct TypeName {
  static constexpr const char* kName = nullptr;
};
#define KILN_ABI_TYPE_NAME(T)                \
  template <>                                \
  struct TypeName<T> {                       \
    static constexpr const char* kName = #T; \
  };
#include "abi_entries_expand.h"
// The one function-pointer typedef that other function types use as a
// parameter type (PJRT_SendCallback takes a PJRT_CallbackError*).
template <>
struct TypeName<PJRT_CallbackError> {
  static constexpr const char* kName = "PJRT_CallbackError";
};

template <typename T>
std::string Render();

template <typename T>
struct FunctionParts;
template <typename R, typename... Args>
struct FunctionParts<R(Args...)> {
  static std::string Render(const std::string& declarator) {
    std::string result = kiln::testing::Render<R>();
    if (result.back() != '*') result += ' ';
    result += declarator + "(";
    bool first = true;
    ((result += (first ? "" : ", ") + kiln::testing::Render<Args>(),
      first = false),
     ...);
    return result + ")";
  }
};

// Renders T without looking up a typedef name for T itself (the table's
// signature column spells out each function type).
template <typename T>
std::string Expand() {
  if constexpr (std::is_function_v<T>) {
    return FunctionParts<T>::Render("");
  } else if constexpr (std::is_pointer_v<T> &&
                       std::is_function_v<std::remove_pointer_t<T>>) {
    return FunctionParts<std::remove_pointer_t<T>>::Render("(*)");
  } else {
    return Render<T>();
  }
}

template <typename T>
std::string Render() {
  if constexpr (TypeName<T>::kName != nullptr) {
    return TypeName<T>::kName;
  } else if constexpr (std::is_const_v<T>) {
    return "const " + Render<std::remove_const_t<T>>();
  } else if constexpr (std::is_pointer_v<T>) {
    using Pointee = std::remove_pointer_t<T>;
    if constexpr (std::is_function_v<Pointee>) {
      return Expand<T>();
    } else {
      std::string pointee = Render<Pointee>();
      return pointee + (pointee.back() == '*' ? "*" : " *");
    }
  } else if constexpr (std::is_function_v<T>) {
    return Expand<T>();
  } else if constexpr (std::is_same_v<T, void>) {
    return "void";
  } else if constexpr (std::is_same_v<T, bool>) {
    return "_Bool";
  } else if constexpr (std::is_same_v<T, char>) {
    return "char";
  } else if constexpr (std::is_same_v<T, int>) {
    return "int";
  } else if constexpr (std::is_same_v<T, float>) {
    return "float";
  } else if constexpr (std::is_same_v<T, size_t>) {
    // Also uint64_t on LP64; function types use size_t only.
    return "size_t";
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return "int64_t";
  } else {
    static_assert(sizeof(T) == 0, "a type the ABI test cannot render");
  }
}

const std::map<std::string, std::string>& HeaderFunctionTypes() {
  static const auto* facts = new std::map<std::string, std::string>{
#define KILN_ABI_FUNCTION_TYPE(F) {#F, Expand<F>()},
#include "abi_entries_expand.h"
  };
  return *facts;
}

// The PJRT_Api slots as the header declares them, with their signatures.
struct SlotFact {
  std::string name;
  size_t offset;
  std::string signature;
};
const std::vector<SlotFact>& HeaderApiSlots() {
  static const auto* facts = new std::vector<SlotFact>{
#define KILN_ABI_API_SLOT(F)  \
  {#F, offsetof(PJRT_Api, F), \
   Expand<std::remove_pointer_t<decltype(PJRT_Api::F)>>()},
#include "abi_entries_expand.h"
  };
  return *facts;
}

// The slots the plugin fills, in the order of include/pjrt_c_api_slots.def.
const std::vector<std::string>& PluginSlotOrder() {
  static const auto* names = new std::vector<std::string>{
#define KILN_PJRT_SLOT(name, minor, state) #name,
#include "pjrt_c_api_slots.def"
  };
  return *names;
}

// Counts lines and mismatches; reports each mismatch as a test failure.
struct Tally {
  const char* table;
  int lines = 0;
  int mismatches = 0;

  void Check(bool ok, const std::string& what) {
    ++lines;
    if (!ok) {
      ++mismatches;
      ADD_FAILURE() << table << ": " << what;
    }
  }
  ~Tally() {
    std::printf("ABI %s: checked %d lines, %d match, %d mismatch\n", table,
                lines, lines - mismatches, mismatches);
  }
};

TEST(AbiTest, EveryStructSizeAndFieldOffsetMatchesTheLayoutTable) {
  KILN_REQUIRE_SHARED_DIR(shared);
  Tally tally{"layout"};
  std::set<std::string> seen_structs, seen_fields;
  for (const Row& row : ReadTable(TablePath(shared, "layout"))) {
    ASSERT_EQ(row.size(), 4u) << "malformed layout row";
    const std::string& name = row[0];
    if (row[1] == "-") {
      seen_structs.insert(name);
      auto it = HeaderStructs().find(name);
      if (it == HeaderStructs().end()) {
        tally.Check(false, "struct " + name + " is missing from the header");
        continue;
      }
      std::string align = "align=" + std::to_string(it->second.align);
      tally.Check(std::to_string(it->second.size) == row[2] && align == row[3],
                  "struct " + name + ": header has size " +
                      std::to_string(it->second.size) + " " + align +
                      ", table has " + row[2] + " " + row[3]);
    } else {
      std::string key = name + "." + row[1];
      seen_fields.insert(key);
      auto it = HeaderFieldOffsets().find(key);
      if (it == HeaderFieldOffsets().end()) {
        tally.Check(false, "field " + key + " is missing from the header");
        continue;
      }
      tally.Check(std::to_string(it->second) == row[2],
                  "field " + key + ": header offset " +
                      std::to_string(it->second) + ", table offset " + row[2]);
    }
  }
  // Nothing the header declares may be absent from the table either.
  for (const auto& [name, fact] : HeaderStructs()) {
    EXPECT_TRUE(seen_structs.count(name))
        << "struct " << name << " is not in the layout table";
  }
  for (const auto& [key, offset] : HeaderFieldOffsets()) {
    EXPECT_TRUE(seen_fields.count(key))
        << "field " << key << " is not in the layout table";
  }
  EXPECT_EQ(tally.mismatches, 0);
  EXPECT_EQ(tally.lines,
            static_cast<int>(seen_structs.size() + seen_fields.size()));
}

TEST(AbiTest, EveryConstantMatchesTheConstantsTable) {
  KILN_REQUIRE_SHARED_DIR(shared);
  Tally tally{"constants"};
  std::set<std::string> seen;
  for (const Row& row : ReadTable(TablePath(shared, "constants"))) {
    ASSERT_EQ(row.size(), 3u) << "malformed constants row";
    const std::string& name = row[1];
    seen.insert(name);
    auto it = HeaderConstants().find(name);
    if (it == HeaderConstants().end()) {
      tally.Check(false, name + " is missing from the header");
      continue;
    }
    tally.Check(
        std::to_string(it->second) == row[2],
        name + ": header " + std::to_string(it->second) + ", table " + row[2]);
  }
  for (const auto& [name, value] : HeaderConstants()) {
    EXPECT_TRUE(seen.count(name)) << name << " is not in the constants table";
  }
  EXPECT_EQ(tally.mismatches, 0);
}

TEST(AbiTest, EveryFunctionTypeMatchesTheFunctionTypesTable) {
  KILN_REQUIRE_SHARED_DIR(shared);
  Tally tally{"function_types"};
  std::set<std::string> seen;
  for (const Row& row : ReadTable(TablePath(shared, "function_types"))) {
    ASSERT_EQ(row.size(), 2u) << "malformed function_types row";
    seen.insert(row[0]);
    auto it = HeaderFunctionTypes().find(row[0]);
    if (it == HeaderFunctionTypes().end()) {
      tally.Check(false, row[0] + " is missing from the header");
      continue;
    }
    tally.Check(it->second == row[1], row[0] + ": header \"" + it->second +
                                          "\", table \"" + row[1] + "\"");
  }
  for (const auto& [name, signature] : HeaderFunctionTypes()) {
    EXPECT_TRUE(seen.count(name)) << name << " is not in the table";
  }
  EXPECT_EQ(tally.mismatches, 0);
}

TEST(AbiTest, ApiTableSlotsAreInOrderAtTheirOffsets) {
  KILN_REQUIRE_SHARED_DIR(shared);
  Tally tally{"api_table"};
  std::map<std::string, const SlotFact*> slots;
  for (const SlotFact& slot : HeaderApiSlots()) slots[slot.name] = &slot;
  std::vector<std::string> table_order;
  size_t previous_offset = 0;
  for (const Row& row : ReadTable(TablePath(shared, "api_table"))) {
    ASSERT_EQ(row.size(), 4u) << "malformed api_table row";
    const std::string& name = row[0];
    if (row[2] != "function") {
      // The three header fields of PJRT_Api.
      auto it = HeaderFieldOffsets().find("PJRT_Api." + name);
      tally.Check(it != HeaderFieldOffsets().end() &&
                      std::to_string(it->second) == row[1],
                  "PJRT_Api." + name + " is not at offset " + row[1]);
      continue;
    }
    table_order.push_back(name);
    auto it = slots.find(name);
    if (it == slots.end()) {
      tally.Check(false, "slot " + name + " is missing from the header");
      continue;
    }
    const SlotFact& slot = *it->second;
    tally.Check(std::to_string(slot.offset) == row[1] &&
                    slot.signature == row[3] && slot.offset > previous_offset,
                "slot " + name + ": header offset " +
                    std::to_string(slot.offset) + " signature \"" +
                    slot.signature + "\", table offset " + row[1] +
                    " signature \"" + row[3] + "\"");
    previous_offset = slot.offset;
  }
  EXPECT_EQ(table_order.size(), 138u);
  // The last slot ends the struct: nothing follows it.
  EXPECT_EQ(previous_offset + sizeof(void*), sizeof(PJRT_Api));
  // The plugin fills the same slots in the same order.
  EXPECT_EQ(PluginSlotOrder(), table_order)
      << "include/pjrt_c_api_slots.def does not list the PJRT_Api slots in "
         "table order";
  EXPECT_EQ(tally.mismatches, 0);
}

}  // namespace
}  // namespace kiln::testing
