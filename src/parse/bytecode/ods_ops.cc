#include "parse/bytecode/ods_ops.h"

#include <unordered_map>

#include "base/status.h"
#include "base/strings.h"

namespace kiln::parse::bytecode {
namespace {

// "?name", "name" or "operandSegmentSizes:2" (see ods_ops.def).
OdsProperty ParseProperty(std::string_view item) {
  OdsProperty property;
  if (StartsWith(item, "?")) {
    property.kind = OdsProperty::Kind::kOptional;
    item.remove_prefix(1);
  }
  size_t colon = item.find(':');
  if (colon != std::string_view::npos) {
    std::string_view name = item.substr(0, colon);
    property.kind = name == "resultSegmentSizes"
                        ? OdsProperty::Kind::kResultSegments
                        : OdsProperty::Kind::kOperandSegments;
    property.num_segments =
        static_cast<int>(ParseInt64(item.substr(colon + 1)).value_or(0));
    item = name;
  }
  property.name = item;
  return property;
}

const std::unordered_map<std::string_view, OdsOpInfo>& OdsOps() {
  static const auto* kOps = [] {
    auto* ops = new std::unordered_map<std::string_view, OdsOpInfo>();
    // Lines after an op's first add layouts of other versions.
    auto add = [ops](std::string_view name, std::string_view properties) {
      OdsLayout layout;
      for (std::string_view item : StrSplit(properties, ',')) {
        layout.push_back(ParseProperty(item));
      }
      OdsOpInfo& info = (*ops)[name];
      info.name = name;
      info.layouts.push_back(std::move(layout));
    };
#define KILN_ODS_OP(name, properties) add(name, properties);
#include "parse/bytecode/ods_ops.def"
#undef KILN_ODS_OP
    return ops;
  }();
  return *kOps;
}

}  // namespace

const OdsOpInfo* LookupOdsOp(std::string_view full_name) {
  const auto& ops = OdsOps();
  auto it = ops.find(full_name);
  return it == ops.end() ? nullptr : &it->second;
}

}  // namespace kiln::parse::bytecode
