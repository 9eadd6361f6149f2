#include "ir/location.h"

#include "base/logging.h"
#include "base/strings.h"

namespace kiln::ir {

struct Location::Storage {
  LocationKind kind;
  std::string text;  // file or name
  int64_t line = 0, column = 0, end_line = 0, end_column = 0;
  std::vector<Location> children;  // name: [child]; callsite: [callee, caller]; fused
  Attribute metadata;
};

Location Location::FileLineCol(std::string file, int64_t line, int64_t column,
                               int64_t end_line, int64_t end_column) {
  auto s = std::make_shared<Storage>();
  s->kind = LocationKind::kFileLineCol;
  s->text = std::move(file);
  s->line = line;
  s->column = column;
  s->end_line = end_line;
  s->end_column = end_column;
  return Location(s);
}

Location Location::Name(std::string name, Location child) {
  auto s = std::make_shared<Storage>();
  s->kind = LocationKind::kName;
  s->text = std::move(name);
  s->children.push_back(std::move(child));
  return Location(s);
}

Location Location::CallSite(Location callee, Location caller) {
  auto s = std::make_shared<Storage>();
  s->kind = LocationKind::kCallSite;
  s->children = {std::move(callee), std::move(caller)};
  return Location(s);
}

Location Location::Fused(std::vector<Location> locations, Attribute metadata) {
  auto s = std::make_shared<Storage>();
  s->kind = LocationKind::kFused;
  s->children = std::move(locations);
  s->metadata = std::move(metadata);
  return Location(s);
}

LocationKind Location::kind() const {
  return storage_ ? storage_->kind : LocationKind::kUnknown;
}

namespace {
const std::string& EmptyString() {
  static const std::string kEmpty;
  return kEmpty;
}
}  // namespace

const std::string& Location::file() const {
  return kind() == LocationKind::kFileLineCol ? storage_->text : EmptyString();
}
int64_t Location::line() const { return storage_ ? storage_->line : 0; }
int64_t Location::column() const { return storage_ ? storage_->column : 0; }
int64_t Location::end_line() const { return storage_ ? storage_->end_line : 0; }
int64_t Location::end_column() const { return storage_ ? storage_->end_column : 0; }
const std::string& Location::name() const {
  return kind() == LocationKind::kName ? storage_->text : EmptyString();
}
Location Location::child() const {
  return kind() == LocationKind::kName ? storage_->children[0] : Location();
}
Location Location::callee() const {
  return kind() == LocationKind::kCallSite ? storage_->children[0] : Location();
}
Location Location::caller() const {
  return kind() == LocationKind::kCallSite ? storage_->children[1] : Location();
}
const std::vector<Location>& Location::fused() const {
  static const std::vector<Location> kNone;
  return kind() == LocationKind::kFused ? storage_->children : kNone;
}
Attribute Location::fused_metadata() const {
  return kind() == LocationKind::kFused ? storage_->metadata : Attribute();
}

namespace {
std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c >= 0x7f) {
      const char* hex = "0123456789ABCDEF";
      out.push_back('\\');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}
}  // namespace

std::string Location::ToString() const {
  switch (kind()) {
    case LocationKind::kUnknown: return "unknown";
    case LocationKind::kFileLineCol: {
      std::string out = StrCat(Quote(storage_->text), ":", storage_->line, ":",
                               storage_->column);
      if (storage_->end_line != 0 || storage_->end_column != 0) {
        if (storage_->end_line != 0 && storage_->end_line != storage_->line) {
          StrAppend(out, " to ", storage_->end_line, ":", storage_->end_column);
        } else {
          StrAppend(out, " to :", storage_->end_column);
        }
      }
      return out;
    }
    case LocationKind::kName: {
      std::string out = Quote(storage_->text);
      if (!storage_->children[0].IsUnknown()) {
        StrAppend(out, "(", storage_->children[0].ToString(), ")");
      }
      return out;
    }
    case LocationKind::kCallSite:
      return StrCat("callsite(", storage_->children[0].ToString(), " at ",
                    storage_->children[1].ToString(), ")");
    case LocationKind::kFused: {
      std::string out = "fused";
      if (storage_->metadata) StrAppend(out, "<", storage_->metadata.ToString(), ">");
      out += "[";
      out += StrJoin(storage_->children, ", ", [](std::string& o, const Location& l) {
        o += l.ToString();
      });
      out += "]";
      return out;
    }
  }
  return "unknown";
}

std::string Location::ShortString() const {
  switch (kind()) {
    case LocationKind::kFileLineCol:
      return StrCat(storage_->text, ":", storage_->line, ":", storage_->column);
    case LocationKind::kName: {
      std::string inner = storage_->children[0].ShortString();
      return inner.empty() ? storage_->text : inner;
    }
    case LocationKind::kCallSite: return storage_->children[0].ShortString();
    case LocationKind::kFused:
      for (const Location& l : storage_->children) {
        std::string inner = l.ShortString();
        if (!inner.empty()) return inner;
      }
      return "";
    default: return "";
  }
}

bool operator==(const Location& a, const Location& b) {
  if (a.storage_ == b.storage_) return true;
  if (a.kind() != b.kind()) return false;
  if (!a.storage_ || !b.storage_) return a.kind() == b.kind();
  const auto& x = *a.storage_;
  const auto& y = *b.storage_;
  return x.text == y.text && x.line == y.line && x.column == y.column &&
         x.end_line == y.end_line && x.end_column == y.end_column &&
         x.children == y.children && x.metadata == y.metadata;
}

}  // namespace kiln::ir
