#include "pjrt/named_values.h"

#include <cstdlib>

#include "pjrt/args.h"

namespace kiln::pjrt {
namespace {

// Bounds on what a caller may pass, so that a garbage count is an error
// rather than a huge allocation or a long read.
constexpr size_t kMaxNamedValues = 4096;
constexpr size_t kMaxNamedValueBytes = size_t{1} << 20;

}  // namespace

PJRT_NamedValue& NamedValueList::Add(std::string_view name,
                                     PJRT_NamedValue_Type type) {
  const std::string& stored = strings_.emplace_back(name);
  PJRT_NamedValue& value = values_.emplace_back();
  value.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  value.extension_start = nullptr;
  value.name = stored.c_str();
  value.name_size = stored.size();
  value.type = type;
  value.value_size = 1;
  return value;
}

void NamedValueList::AddString(std::string_view name, std::string_view value) {
  PJRT_NamedValue& entry = Add(name, PJRT_NamedValue_kString);
  const std::string& stored = strings_.emplace_back(value);
  entry.string_value = stored.c_str();
  entry.value_size = stored.size();
}

void NamedValueList::AddInt64(std::string_view name, int64_t value) {
  Add(name, PJRT_NamedValue_kInt64).int64_value = value;
}

void NamedValueList::AddInt64List(std::string_view name,
                                  std::vector<int64_t> values) {
  PJRT_NamedValue& entry = Add(name, PJRT_NamedValue_kInt64List);
  const std::vector<int64_t>& stored = lists_.emplace_back(std::move(values));
  entry.int64_array_value = stored.data();
  entry.value_size = stored.size();
}

void NamedValueList::AddFloat(std::string_view name, float value) {
  Add(name, PJRT_NamedValue_kFloat).float_value = value;
}

void NamedValueList::AddBool(std::string_view name, bool value) {
  Add(name, PJRT_NamedValue_kBool).bool_value = value;
}

std::string NamedValue::ToString() const {
  std::string text = StrCat(name, "=");
  if (const auto* s = std::get_if<std::string>(&value)) {
    StrAppend(text, "\"", EscapeForMessage(*s), "\"");
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    StrAppend(text, *i);
  } else if (const auto* list = std::get_if<std::vector<int64_t>>(&value)) {
    StrAppend(text, "[", StrJoin(*list, ","), "]");
  } else if (const auto* f = std::get_if<float>(&value)) {
    StrAppend(text, *f);
  } else {
    StrAppend(text, std::get<bool>(value));
  }
  return text;
}

StatusOr<std::vector<NamedValue>> ReadNamedValues(const PJRT_NamedValue* values,
                                                  size_t count,
                                                  std::string_view what) {
  std::vector<NamedValue> result;
  if (count == 0) return result;
  if (values == nullptr) {
    return InvalidArgumentError(what, " is null, but its count is ", count);
  }
  if (count > kMaxNamedValues) {
    return InvalidArgumentError(what, " has ", count,
                                " entries; Kiln accepts at most ",
                                kMaxNamedValues);
  }
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& in = values[i];
    const std::string entry = StrCat(what, "[", i, "]");
    RETURN_IF_ERROR(
        CheckStruct(&in, PJRT_STRUCT_SIZE(PJRT_NamedValue, value_size), entry));
    if (in.name == nullptr && in.name_size > 0) {
      return InvalidArgumentError(entry, ".name is null");
    }
    if (in.name_size > kMaxNamedValueBytes) {
      return InvalidArgumentError(entry, ".name_size is ", in.name_size,
                                  ", over the limit of ", kMaxNamedValueBytes);
    }
    NamedValue out;
    out.name.assign(in.name == nullptr ? "" : in.name, in.name_size);
    const int type = RawEnumValue(in.type);
    switch (type) {
      case PJRT_NamedValue_kString:
        if (in.value_size > kMaxNamedValueBytes) {
          return InvalidArgumentError(
              entry, " (", out.name, ") has a string of ", in.value_size,
              " bytes, over the limit of ", kMaxNamedValueBytes);
        }
        if (in.string_value == nullptr && in.value_size > 0) {
          return InvalidArgumentError(entry, " (", out.name,
                                      ") has a null string value");
        }
        out.value = std::string(in.value_size == 0 ? "" : in.string_value,
                                in.value_size);
        break;
      case PJRT_NamedValue_kInt64:
        out.value = in.int64_value;
        break;
      case PJRT_NamedValue_kInt64List:
        if (in.value_size > kMaxNamedValueBytes / sizeof(int64_t)) {
          return InvalidArgumentError(entry, " (", out.name, ") has a list of ",
                                      in.value_size, " values, over the limit");
        }
        if (in.int64_array_value == nullptr && in.value_size > 0) {
          return InvalidArgumentError(entry, " (", out.name,
                                      ") has a null list");
        }
        out.value = std::vector<int64_t>(in.int64_array_value,
                                         in.int64_array_value + in.value_size);
        break;
      case PJRT_NamedValue_kFloat:
        out.value = in.float_value;
        break;
      case PJRT_NamedValue_kBool:
        out.value = in.bool_value;
        break;
      default:
        return InvalidArgumentError(entry, " (", out.name, ") has type ", type,
                                    ", which is not a PJRT_NamedValue_Type");
    }
    result.push_back(std::move(out));
  }
  return result;
}

StatusOr<int64_t> IntegerOption(const NamedValue& option) {
  if (const auto* i = std::get_if<int64_t>(&option.value)) return *i;
  if (const auto* s = std::get_if<std::string>(&option.value)) {
    if (std::optional<int64_t> parsed = ParseInt64(StripWhitespace(*s))) {
      return *parsed;
    }
    return InvalidArgumentError("option ", option.ToString(),
                                " is not an integer");
  }
  return InvalidArgumentError("option ", option.ToString(),
                              " must be an int64 or a numeric string");
}

StatusOr<double> NumberOption(const NamedValue& option) {
  if (const auto* i = std::get_if<int64_t>(&option.value)) {
    return static_cast<double>(*i);
  }
  if (const auto* f = std::get_if<float>(&option.value)) return *f;
  if (const auto* s = std::get_if<std::string>(&option.value)) {
    std::string text(StripWhitespace(*s));
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size()) return value;
    return InvalidArgumentError("option ", option.ToString(),
                                " is not a number");
  }
  return InvalidArgumentError("option ", option.ToString(),
                              " must be an int64, a float or a numeric "
                              "string");
}

}  // namespace kiln::pjrt
