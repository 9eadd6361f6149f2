// The op printer: SSA names, the generic op form, regions and blocks, and
// the module's resource section. Pretty forms are in print_pretty.cc.
#include "ir/printer.h"

#include <algorithm>

#include "base/strings.h"
#include "ir/print_util.h"
#include "ir/printer_impl.h"

namespace kiln::ir {

void Emitter::Emit(std::string_view text, bool glued) {
  if (text.empty()) return;
  char first = text.front();
  bool space = pending_space_ && !glued && first != ',' && first != ')' &&
               first != ']' && first != '}';
  if (space) out_ += ' ';
  out_ += text;
  char last = text.back();
  pending_space_ = last != '(' && last != '[' && last != '{';
}

void OpPrinter::BeginIsolatedScope() { counters_.push_back(Counters()); }
void OpPrinter::EndIsolatedScope() { counters_.pop_back(); }

const std::string& OpPrinter::NameOf(const Value* value) {
  auto it = names_.find(value);
  if (it != names_.end()) return it->second;
  static const std::string kUnknown = "%<<unknown>>";
  return kUnknown;
}

void OpPrinter::NameResults(const Operation& op) {
  if (op.num_results() == 0) return;
  std::string base = StrCat("%", counters_.back().values++);
  if (op.num_results() == 1) {
    names_[op.result(0)] = base;
    return;
  }
  for (int i = 0; i < op.num_results(); ++i)
    names_[op.result(i)] = StrCat(base, "#", i);
}

void OpPrinter::NameBlockArguments(const Block& block) {
  for (int i = 0; i < block.num_arguments(); ++i) {
    names_[block.argument(i)] = StrCat("%arg", counters_.back().arguments++);
  }
}

void OpPrinter::PrintLocation(const Location& loc) {
  if (!options_.locations) return;
  StrAppend(out_, " loc(", loc.ToString(), ")");
}

void OpPrinter::PrintBlockArgument(const Value* value) {
  StrAppend(out_, NameOf(value), ": ", value->type().ToString());
  PrintLocation(value->loc());
}

std::string OpPrinter::OpName(const Operation& op) const {
  if (in_func_body_ && op.dialect() == "func") return op.name().substr(5);
  return op.name();
}

std::string OpPrinter::AttrDict(const std::vector<NamedAttribute>& entries) {
  return Attribute::Dictionary(entries).ToString();
}

void OpPrinter::PrintOp(const Operation& op, int indent) {
  out_.append(indent, ' ');
  NameResults(op);
  if (op.num_results() > 0) {
    const std::string& first = NameOf(op.result(0));
    if (op.num_results() == 1) {
      out_ += first;
    } else {
      StrAppend(out_, first.substr(0, first.find('#')), ":", op.num_results());
    }
    out_ += " = ";
  }
  if (options_.generic || !PrintPretty(op, indent)) PrintGeneric(op, indent);
  PrintLocation(op.loc());
  out_ += '\n';
}

void OpPrinter::PrintGeneric(const Operation& op, int indent) {
  bool isolated = op.is(OpCode::kFunc) || op.is(OpCode::kModule);
  StrAppend(out_, QuoteString(op.name()), "(");
  std::vector<Type> operand_types;
  for (int i = 0; i < op.num_operands(); ++i) {
    if (i) out_ += ", ";
    out_ += NameOf(op.operand(i));
    operand_types.push_back(op.operand(i)->type());
  }
  out_ += ")";
  if (!op.successors().empty()) {
    out_ += "[";
    for (size_t i = 0; i < op.successors().size(); ++i) {
      if (i) out_ += ", ";
      out_ += "^<<successor>>";
    }
    out_ += "]";
  }
  if (!op.properties().empty())
    StrAppend(out_, " <", AttrDict(op.properties().entries()), ">");
  if (op.num_regions() > 0) {
    if (isolated) BeginIsolatedScope();
    out_ += " (";
    for (int r = 0; r < op.num_regions(); ++r) {
      if (r) out_ += ", ";
      PrintRegion(op.region(r), indent, /*print_entry_args=*/true);
    }
    out_ += ")";
    if (isolated) EndIsolatedScope();
  }
  if (!op.attributes().empty())
    StrAppend(out_, " ", AttrDict(op.attributes().entries()));
  StrAppend(out_, " : ",
            Type::Function(operand_types, op.result_types()).ToString());
}

void OpPrinter::PrintRegion(const Region& region, int indent,
                            bool print_entry_args, bool func_body) {
  bool saved_func_body = in_func_body_;
  in_func_body_ = func_body;
  out_ += "{\n";
  for (int b = 0; b < region.num_blocks(); ++b) {
    const Block& block = region.block(b);
    if (b > 0 || print_entry_args) NameBlockArguments(block);
    // A block label is needed for later blocks, for entry arguments, and
    // for an empty entry block (so that it does not read back as no block,
    // or the next block taking its place).
    bool label = b > 0 || (print_entry_args && block.num_arguments() > 0) ||
                 (block.empty() && block.num_arguments() == 0);
    if (label) {
      out_.append(indent, ' ');
      StrAppend(out_, "^bb", b);
      if (block.num_arguments() > 0) {
        out_ += "(";
        for (int i = 0; i < block.num_arguments(); ++i) {
          if (i) out_ += ", ";
          PrintBlockArgument(block.argument(i));
        }
        out_ += ")";
      }
      out_ += ":\n";
    }
    for (const auto& op : block.operations()) PrintOp(*op, indent + 2);
  }
  out_.append(indent, ' ');
  out_ += "}";
  in_func_body_ = saved_func_body;
}

std::vector<NamedAttribute> OpPrinter::RemainingAttributes(
    const Operation& op, const std::vector<std::string>& skip) const {
  std::vector<NamedAttribute> entries;
  auto keep = [&skip](const std::string& name) {
    return std::find(skip.begin(), skip.end(), name) == skip.end();
  };
  for (const auto& entry : op.properties()) {
    if (keep(entry.first)) entries.push_back(entry);
  }
  for (const auto& entry : op.attributes()) {
    if (keep(entry.first)) entries.push_back(entry);
  }
  std::sort(entries.begin(), entries.end(),
            [](const NamedAttribute& a, const NamedAttribute& b) {
              return a.first < b.first;
            });
  return entries;
}

void OpPrinter::PrintModuleResources(const Module& module) {
  std::vector<const ResourceBlob*> blobs;
  for (const auto& [key, blob] : module.resources()) {
    if (blob && blob->present) blobs.push_back(blob.get());
  }
  if (blobs.empty()) return;
  out_ += "\n{-#\n  dialect_resources: {\n    builtin: {\n";
  const char* hex = "0123456789ABCDEF";
  for (size_t i = 0; i < blobs.size(); ++i) {
    const ResourceBlob& blob = *blobs[i];
    std::string key =
        IsBareIdentifier(blob.key) ? blob.key : QuoteString(blob.key);
    StrAppend(out_, "      ", key, ": \"0x");
    uint32_t alignment = static_cast<uint32_t>(blob.alignment);
    for (int b = 0; b < 4; ++b) {
      unsigned char c = static_cast<unsigned char>(alignment >> (8 * b));
      out_.push_back(hex[c >> 4]);
      out_.push_back(hex[c & 15]);
    }
    for (unsigned char c : blob.data) {
      out_.push_back(hex[c >> 4]);
      out_.push_back(hex[c & 15]);
    }
    out_ += i + 1 < blobs.size() ? "\",\n" : "\"\n";
  }
  out_ += "    }\n  }\n#-}\n";
}

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string out;
  OpPrinter printer(options, out);
  printer.PrintOp(module.op(), 0);
  printer.PrintModuleResources(module);
  return out;
}

std::string PrintOperation(const Operation& op, const PrintOptions& options) {
  std::string out;
  OpPrinter printer(options, out);
  printer.PrintOp(op, 0);
  return out;
}

}  // namespace kiln::ir
