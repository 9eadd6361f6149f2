// PJRT_NamedValue lists: building them (attributes Kiln reports) and
// reading them (options a caller passes in).
#ifndef KILN_PJRT_NAMED_VALUES_H_
#define KILN_PJRT_NAMED_VALUES_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"
#include "pjrt_c_api.h"

namespace kiln::pjrt {

// A list of named values that owns its names and values, so the
// PJRT_NamedValue array it hands out stays valid as long as the list.
class NamedValueList {
 public:
  NamedValueList() = default;
  NamedValueList(const NamedValueList&) = delete;
  NamedValueList& operator=(const NamedValueList&) = delete;

  void AddString(std::string_view name, std::string_view value);
  void AddInt64(std::string_view name, int64_t value);
  void AddInt64List(std::string_view name, std::vector<int64_t> values);
  void AddFloat(std::string_view name, float value);
  void AddBool(std::string_view name, bool value);

  const PJRT_NamedValue* data() const { return values_.data(); }
  size_t size() const { return values_.size(); }

 private:
  PJRT_NamedValue& Add(std::string_view name, PJRT_NamedValue_Type type);

  std::deque<std::string> strings_;  // deque: elements never move
  std::deque<std::vector<int64_t>> lists_;
  std::vector<PJRT_NamedValue> values_;
};

// One named value read from a caller, copied out of its memory.
struct NamedValue {
  std::string name;
  std::variant<std::string, int64_t, std::vector<int64_t>, float, bool> value;

  // "cpu_device_count=4" (for logs and errors).
  std::string ToString() const;
};

// Copies `count` named values at `values` (which may be null when `count`
// is 0). `what` names the array in errors ("PJRT_Client_Create_Args.
// create_options"). Each entry is checked: struct_size, null pointers,
// known type, and sizes within sane bounds.
StatusOr<std::vector<NamedValue>> ReadNamedValues(const PJRT_NamedValue* values,
                                                  size_t count,
                                                  std::string_view what);

// The value of an integer option: int64, or a string holding a decimal
// integer (frameworks that pass options as text send numbers that way).
StatusOr<int64_t> IntegerOption(const NamedValue& option);

// The value of a numeric option: int64, float, or a string holding a
// decimal number.
StatusOr<double> NumberOption(const NamedValue& option);

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_NAMED_VALUES_H_
