// Source locations of ops and block arguments, in MLIR's forms:
// unknown, "file":line:col (with optional range end), "name"(child),
// callsite(callee at caller), fused<metadata>[locs].
#ifndef KILN_IR_LOCATION_H_
#define KILN_IR_LOCATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/attributes.h"

namespace kiln::ir {

enum class LocationKind : uint8_t {
  kUnknown,
  kFileLineCol,
  kName,
  kCallSite,
  kFused,
};

class Location {
 public:
  Location() = default;  // unknown

  static Location Unknown() { return Location(); }
  static Location FileLineCol(std::string file, int64_t line, int64_t column,
                              int64_t end_line = 0, int64_t end_column = 0);
  // `child` may be unknown (then printed as just "name").
  static Location Name(std::string name, Location child = Location());
  static Location CallSite(Location callee, Location caller);
  static Location Fused(std::vector<Location> locations,
                        Attribute metadata = Attribute());

  LocationKind kind() const;
  bool IsUnknown() const { return kind() == LocationKind::kUnknown; }

  const std::string& file() const;    // kFileLineCol
  int64_t line() const;
  int64_t column() const;
  int64_t end_line() const;    // 0 when no range
  int64_t end_column() const;  // 0 when no range
  const std::string& name() const;    // kName
  Location child() const;             // kName
  Location callee() const;            // kCallSite
  Location caller() const;            // kCallSite
  const std::vector<Location>& fused() const;  // kFused
  Attribute fused_metadata() const;

  // The text inside loc(...).
  std::string ToString() const;
  // A short "file:line:col" for error messages (the innermost file
  // location), or empty when there is none.
  std::string ShortString() const;

  friend bool operator==(const Location& a, const Location& b);

  struct Storage;

 private:
  explicit Location(std::shared_ptr<const Storage> storage)
      : storage_(std::move(storage)) {}
  std::shared_ptr<const Storage> storage_;
};

}  // namespace kiln::ir

#endif  // KILN_IR_LOCATION_H_
