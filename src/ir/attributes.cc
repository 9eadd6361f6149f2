#include "ir/attributes.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "base/logging.h"

namespace kiln::ir {

struct Attribute::Storage {
  AttrKind kind;
  bool bool_value = false;
  int64_t int_value = 0;
  double float_value = 0;
  std::string text;  // string value, symbol root, struct name, opaque text
  Type type;
  std::vector<Attribute> array;
  std::vector<NamedAttribute> dictionary;  // dictionary, struct fields
  ElementType dense_type = ElementType::kI64;
  std::vector<int64_t> ints;     // dense int array, bounds, etc.
  std::vector<double> floats;    // dense float array
  std::string data;              // dense elements
  bool splat = false;
  std::shared_ptr<ResourceBlob> resource;
  std::vector<std::string> nested;  // symbol ref
  EnumKind enum_kind = EnumKind::kComparisonDirection;
  // Struct payloads (only the one matching `kind` is used).
  DotDimensionNumbers dot;
  GatherDimensionNumbers gather;
  ScatterDimensionNumbers scatter;
  ConvDimensionNumbers conv;
  DotAlgorithm dot_algorithm;
  ChannelHandle channel;
  OutputOperandAlias alias;
  ResultAccuracy accuracy;
};

namespace {

std::shared_ptr<Attribute::Storage> New(AttrKind kind) {
  auto storage = std::make_shared<Attribute::Storage>();
  storage->kind = kind;
  return storage;
}

struct EnumTable {
  EnumKind kind;
  std::string_view name;
  std::vector<std::string_view> values;  // index = numeric value
};

const std::vector<EnumTable>& EnumTables() {
  static const std::vector<EnumTable> kTables = {
      {EnumKind::kComparisonDirection, "comparison_direction",
       {"EQ", "NE", "GE", "GT", "LE", "LT"}},
      {EnumKind::kComparisonType, "comparison_type",
       {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}},
      {EnumKind::kPrecision, "precision", {"DEFAULT", "HIGH", "HIGHEST"}},
      {EnumKind::kFftType, "fft_type", {"FFT", "IFFT", "RFFT", "IRFFT"}},
      {EnumKind::kRngAlgorithm, "rng_algorithm", {"DEFAULT", "THREE_FRY", "PHILOX"}},
      {EnumKind::kRngDistribution, "rng_distribution", {"", "UNIFORM", "NORMAL"}},
      {EnumKind::kTranspose, "transpose",
       {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}},
      {EnumKind::kResultAccuracyMode, "result_accuracy_mode",
       {"DEFAULT", "HIGHEST", "TOLERANCE"}},
  };
  return kTables;
}

const EnumTable& TableFor(EnumKind kind) {
  for (const EnumTable& table : EnumTables()) {
    if (table.kind == kind) return table;
  }
  KILN_CHECK(false) << "unknown enum kind";
}

}  // namespace

std::string_view EnumKindName(EnumKind kind) { return TableFor(kind).name; }

std::string_view EnumValueName(EnumKind kind, int64_t value) {
  const EnumTable& table = TableFor(kind);
  if (value < 0 || value >= static_cast<int64_t>(table.values.size())) return {};
  return table.values[value];
}

std::optional<int64_t> ParseEnumValue(EnumKind kind, std::string_view name) {
  const EnumTable& table = TableFor(kind);
  for (size_t i = 0; i < table.values.size(); ++i) {
    if (!table.values[i].empty() && table.values[i] == name) {
      return static_cast<int64_t>(i);
    }
  }
  return std::nullopt;
}

std::optional<EnumKind> ParseEnumKindName(std::string_view name) {
  for (const EnumTable& table : EnumTables()) {
    if (table.name == name) return table.kind;
  }
  return std::nullopt;
}

Attribute Attribute::Unit() {
  static const Attribute kUnitAttr(New(AttrKind::kUnit));
  return kUnitAttr;
}

Attribute Attribute::Bool(bool value) {
  static const Attribute kTrue = [] {
    auto s = New(AttrKind::kBool);
    s->bool_value = true;
    return Attribute(s);
  }();
  static const Attribute kFalse(New(AttrKind::kBool));
  return value ? kTrue : kFalse;
}

Attribute Attribute::Integer(int64_t value, Type type) {
  auto s = New(AttrKind::kInteger);
  s->int_value = value;
  s->type = std::move(type);
  return Attribute(s);
}

Attribute Attribute::Float(double value, Type type) {
  auto s = New(AttrKind::kFloat);
  s->float_value = value;
  s->type = std::move(type);
  return Attribute(s);
}

Attribute Attribute::String(std::string value) {
  auto s = New(AttrKind::kString);
  s->text = std::move(value);
  return Attribute(s);
}

Attribute Attribute::TypeAttr(Type type) {
  auto s = New(AttrKind::kType);
  s->type = std::move(type);
  return Attribute(s);
}

Attribute Attribute::Array(std::vector<Attribute> elements) {
  auto s = New(AttrKind::kArray);
  s->array = std::move(elements);
  return Attribute(s);
}

Attribute Attribute::Dictionary(std::vector<NamedAttribute> entries) {
  auto s = New(AttrKind::kDictionary);
  s->dictionary = NamedAttrList(std::move(entries)).entries();
  return Attribute(s);
}

Attribute Attribute::DenseIntArray(ElementType type, std::vector<int64_t> values) {
  auto s = New(AttrKind::kDenseArray);
  s->dense_type = type;
  s->ints = std::move(values);
  return Attribute(s);
}

Attribute Attribute::DenseFloatArray(ElementType type, std::vector<double> values) {
  auto s = New(AttrKind::kDenseArray);
  s->dense_type = type;
  s->floats = std::move(values);
  return Attribute(s);
}

Attribute Attribute::DenseBoolArray(std::vector<bool> values) {
  std::vector<int64_t> ints(values.begin(), values.end());
  return DenseIntArray(ElementType::kI1, std::move(ints));
}

Attribute Attribute::DenseElements(Type type, std::string data, bool splat) {
  auto s = New(AttrKind::kDenseElements);
  s->type = std::move(type);
  s->data = std::move(data);
  s->splat = splat;
  return Attribute(s);
}

Attribute Attribute::DenseResource(Type type, std::shared_ptr<ResourceBlob> blob) {
  auto s = New(AttrKind::kDenseResource);
  s->type = std::move(type);
  s->resource = std::move(blob);
  return Attribute(s);
}

Attribute Attribute::SymbolRef(std::string root, std::vector<std::string> nested) {
  auto s = New(AttrKind::kSymbolRef);
  s->text = std::move(root);
  s->nested = std::move(nested);
  return Attribute(s);
}

Attribute Attribute::Enum(EnumKind kind, int64_t value) {
  auto s = New(AttrKind::kEnum);
  s->enum_kind = kind;
  s->int_value = value;
  return Attribute(s);
}

Attribute Attribute::Dot(DotDimensionNumbers value) {
  auto s = New(AttrKind::kDotDimensionNumbers);
  s->dot = std::move(value);
  return Attribute(s);
}

Attribute Attribute::Gather(GatherDimensionNumbers value) {
  auto s = New(AttrKind::kGatherDimensionNumbers);
  s->gather = std::move(value);
  return Attribute(s);
}

Attribute Attribute::Scatter(ScatterDimensionNumbers value) {
  auto s = New(AttrKind::kScatterDimensionNumbers);
  s->scatter = std::move(value);
  return Attribute(s);
}

Attribute Attribute::Conv(ConvDimensionNumbers value) {
  auto s = New(AttrKind::kConvDimensionNumbers);
  s->conv = std::move(value);
  return Attribute(s);
}

Attribute Attribute::DotAlgorithmAttr(DotAlgorithm value) {
  auto s = New(AttrKind::kDotAlgorithm);
  s->dot_algorithm = std::move(value);
  return Attribute(s);
}

Attribute Attribute::Channel(ChannelHandle value) {
  auto s = New(AttrKind::kChannelHandle);
  s->channel = value;
  return Attribute(s);
}

Attribute Attribute::OutputOperandAliasAttr(OutputOperandAlias value) {
  auto s = New(AttrKind::kOutputOperandAlias);
  s->alias = std::move(value);
  return Attribute(s);
}

Attribute Attribute::ResultAccuracyAttr(ResultAccuracy value) {
  auto s = New(AttrKind::kResultAccuracy);
  s->accuracy = value;
  return Attribute(s);
}

Attribute Attribute::Bounds(std::vector<int64_t> bounds) {
  auto s = New(AttrKind::kTypeExtensions);
  s->ints = std::move(bounds);
  return Attribute(s);
}

Attribute Attribute::DialectStruct(std::string name,
                                   std::vector<NamedAttribute> fields) {
  auto s = New(AttrKind::kDialectStruct);
  s->text = std::move(name);
  s->dictionary = std::move(fields);
  return Attribute(s);
}

Attribute Attribute::Opaque(std::string text) {
  auto s = New(AttrKind::kOpaque);
  s->text = std::move(text);
  return Attribute(s);
}

AttrKind Attribute::kind() const {
  KILN_CHECK(storage_) << "kind() of a null Attribute";
  return storage_->kind;
}

#define KILN_ATTR_EXPECT(expected) \
  KILN_CHECK(is(AttrKind::expected)) << "attribute is not " #expected ": " << ToString()

bool Attribute::bool_value() const {
  KILN_ATTR_EXPECT(kBool);
  return storage_->bool_value;
}
int64_t Attribute::int_value() const {
  KILN_ATTR_EXPECT(kInteger);
  return storage_->int_value;
}
double Attribute::float_value() const {
  KILN_ATTR_EXPECT(kFloat);
  return storage_->float_value;
}
const std::string& Attribute::string_value() const {
  KILN_ATTR_EXPECT(kString);
  return storage_->text;
}
Type Attribute::type() const {
  KILN_CHECK(storage_) << "type() of a null Attribute";
  return storage_->type;
}
const std::vector<Attribute>& Attribute::array() const {
  KILN_ATTR_EXPECT(kArray);
  return storage_->array;
}
const std::vector<NamedAttribute>& Attribute::dictionary() const {
  KILN_ATTR_EXPECT(kDictionary);
  return storage_->dictionary;
}
Attribute Attribute::Get(std::string_view key) const {
  if (!is(AttrKind::kDictionary)) return Attribute();
  for (const auto& [name, value] : storage_->dictionary) {
    if (name == key) return value;
  }
  return Attribute();
}
ElementType Attribute::dense_array_type() const {
  KILN_ATTR_EXPECT(kDenseArray);
  return storage_->dense_type;
}
const std::vector<int64_t>& Attribute::dense_ints() const {
  KILN_ATTR_EXPECT(kDenseArray);
  return storage_->ints;
}
const std::vector<double>& Attribute::dense_floats() const {
  KILN_ATTR_EXPECT(kDenseArray);
  return storage_->floats;
}
int64_t Attribute::dense_array_size() const {
  KILN_ATTR_EXPECT(kDenseArray);
  return IsFloat(storage_->dense_type) ? storage_->floats.size()
                                       : storage_->ints.size();
}
const std::string& Attribute::dense_data() const {
  KILN_ATTR_EXPECT(kDenseElements);
  return storage_->data;
}
bool Attribute::dense_is_splat() const {
  KILN_ATTR_EXPECT(kDenseElements);
  return storage_->splat;
}
std::string Attribute::DenseDataExpanded() const {
  KILN_ATTR_EXPECT(kDenseElements);
  if (!storage_->splat) return storage_->data;
  int64_t count = storage_->type.NumElements();
  if (count <= 0) return std::string();
  std::string out;
  out.reserve(storage_->data.size() * count);
  for (int64_t i = 0; i < count; ++i) out.append(storage_->data);
  return out;
}
const std::shared_ptr<ResourceBlob>& Attribute::resource() const {
  KILN_ATTR_EXPECT(kDenseResource);
  return storage_->resource;
}
const std::string& Attribute::symbol_root() const {
  KILN_ATTR_EXPECT(kSymbolRef);
  return storage_->text;
}
const std::vector<std::string>& Attribute::symbol_nested() const {
  KILN_ATTR_EXPECT(kSymbolRef);
  return storage_->nested;
}
EnumKind Attribute::enum_kind() const {
  KILN_ATTR_EXPECT(kEnum);
  return storage_->enum_kind;
}
int64_t Attribute::enum_value() const {
  KILN_ATTR_EXPECT(kEnum);
  return storage_->int_value;
}
const DotDimensionNumbers& Attribute::dot() const {
  KILN_ATTR_EXPECT(kDotDimensionNumbers);
  return storage_->dot;
}
const GatherDimensionNumbers& Attribute::gather() const {
  KILN_ATTR_EXPECT(kGatherDimensionNumbers);
  return storage_->gather;
}
const ScatterDimensionNumbers& Attribute::scatter() const {
  KILN_ATTR_EXPECT(kScatterDimensionNumbers);
  return storage_->scatter;
}
const ConvDimensionNumbers& Attribute::conv() const {
  KILN_ATTR_EXPECT(kConvDimensionNumbers);
  return storage_->conv;
}
const DotAlgorithm& Attribute::dot_algorithm() const {
  KILN_ATTR_EXPECT(kDotAlgorithm);
  return storage_->dot_algorithm;
}
const ChannelHandle& Attribute::channel_handle() const {
  KILN_ATTR_EXPECT(kChannelHandle);
  return storage_->channel;
}
const OutputOperandAlias& Attribute::output_operand_alias() const {
  KILN_ATTR_EXPECT(kOutputOperandAlias);
  return storage_->alias;
}
const ResultAccuracy& Attribute::result_accuracy() const {
  KILN_ATTR_EXPECT(kResultAccuracy);
  return storage_->accuracy;
}
const std::vector<int64_t>& Attribute::bounds() const {
  KILN_ATTR_EXPECT(kTypeExtensions);
  return storage_->ints;
}
const std::string& Attribute::struct_name() const {
  KILN_ATTR_EXPECT(kDialectStruct);
  return storage_->text;
}
const std::vector<NamedAttribute>& Attribute::struct_fields() const {
  KILN_ATTR_EXPECT(kDialectStruct);
  return storage_->dictionary;
}
const std::string& Attribute::opaque_text() const {
  KILN_ATTR_EXPECT(kOpaque);
  return storage_->text;
}
#undef KILN_ATTR_EXPECT

std::optional<std::vector<int64_t>> Attribute::AsIntVector() const {
  if (!storage_) return std::nullopt;
  switch (storage_->kind) {
    case AttrKind::kDenseArray:
      if (IsFloat(storage_->dense_type)) return std::nullopt;
      return storage_->ints;
    case AttrKind::kArray: {
      std::vector<int64_t> values;
      for (const Attribute& element : storage_->array) {
        if (!element.is(AttrKind::kInteger)) return std::nullopt;
        values.push_back(element.int_value());
      }
      return values;
    }
    case AttrKind::kDenseElements: {
      if (!storage_->type.IsTensor()) return std::nullopt;
      Type element = storage_->type.element();
      if (!element.is(TypeKind::kElement)) return std::nullopt;
      ElementType et = element.element_type();
      if (!IsInteger(et) && !IsBool(et)) return std::nullopt;
      int bytes = StorageBytes(et);
      std::string data = DenseDataExpanded();
      std::vector<int64_t> values;
      for (size_t offset = 0; offset + bytes <= data.size(); offset += bytes) {
        uint64_t raw = 0;
        std::memcpy(&raw, data.data() + offset, bytes);
        int bits = bytes * 8;
        if (IsSignedInteger(et) && bits < 64 && (raw >> (bits - 1)) & 1) {
          raw |= ~0ULL << bits;  // sign-extend
        }
        values.push_back(static_cast<int64_t>(raw));
      }
      return values;
    }
    default:
      return std::nullopt;
  }
}

bool operator==(const Attribute& a, const Attribute& b) {
  if (a.storage_ == b.storage_) return true;
  if (!a.storage_ || !b.storage_) return false;
  const Attribute::Storage& x = *a.storage_;
  const Attribute::Storage& y = *b.storage_;
  if (x.kind != y.kind) return false;
  switch (x.kind) {
    case AttrKind::kUnit: return true;
    case AttrKind::kBool: return x.bool_value == y.bool_value;
    case AttrKind::kInteger: return x.int_value == y.int_value && x.type == y.type;
    case AttrKind::kFloat: {
      // Compare bit patterns so that NaN == NaN and 0.0 != -0.0.
      return std::memcmp(&x.float_value, &y.float_value, sizeof(double)) == 0 &&
             x.type == y.type;
    }
    case AttrKind::kString: return x.text == y.text;
    case AttrKind::kType: return x.type == y.type;
    case AttrKind::kArray: return x.array == y.array;
    case AttrKind::kDictionary: return x.dictionary == y.dictionary;
    case AttrKind::kDenseArray:
      if (x.dense_type != y.dense_type || x.ints != y.ints) return false;
      if (x.floats.size() != y.floats.size()) return false;
      return x.floats.empty() ||
             std::memcmp(x.floats.data(), y.floats.data(),
                         x.floats.size() * sizeof(double)) == 0;
    case AttrKind::kDenseElements:
      if (x.type != y.type) return false;
      if (x.splat == y.splat) return x.data == y.data;
      // A splat equals the same value written out in full.
      return a.DenseDataExpanded() == b.DenseDataExpanded();
    case AttrKind::kDenseResource:
      return x.type == y.type && x.resource && y.resource &&
             x.resource->key == y.resource->key &&
             x.resource->data == y.resource->data;
    case AttrKind::kSymbolRef: return x.text == y.text && x.nested == y.nested;
    case AttrKind::kEnum:
      return x.enum_kind == y.enum_kind && x.int_value == y.int_value;
    case AttrKind::kDotDimensionNumbers: return x.dot == y.dot;
    case AttrKind::kGatherDimensionNumbers: return x.gather == y.gather;
    case AttrKind::kScatterDimensionNumbers: return x.scatter == y.scatter;
    case AttrKind::kConvDimensionNumbers: return x.conv == y.conv;
    case AttrKind::kDotAlgorithm: return x.dot_algorithm == y.dot_algorithm;
    case AttrKind::kChannelHandle: return x.channel == y.channel;
    case AttrKind::kOutputOperandAlias: return x.alias == y.alias;
    case AttrKind::kResultAccuracy:
      return std::memcmp(&x.accuracy.atol, &y.accuracy.atol, sizeof(double)) == 0 &&
             std::memcmp(&x.accuracy.rtol, &y.accuracy.rtol, sizeof(double)) == 0 &&
             x.accuracy.ulps == y.accuracy.ulps && x.accuracy.mode == y.accuracy.mode;
    case AttrKind::kTypeExtensions: return x.ints == y.ints;
    case AttrKind::kDialectStruct: return x.text == y.text && x.dictionary == y.dictionary;
    case AttrKind::kOpaque: return x.text == y.text;
  }
  return false;
}

size_t Attribute::Hash() const {
  if (!storage_) return 0;
  // Hash the printed form: attributes are hashed rarely (cache keys), and
  // this keeps Hash consistent with == for every kind.
  return std::hash<std::string>()(ToString());
}

NamedAttrList::NamedAttrList(std::vector<NamedAttribute> entries) {
  for (auto& [name, value] : entries) Set(std::move(name), std::move(value));
}

Attribute NamedAttrList::Get(std::string_view name) const {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), name,
      [](const NamedAttribute& entry, std::string_view key) { return entry.first < key; });
  if (it != entries_.end() && it->first == name) return it->second;
  return Attribute();
}

void NamedAttrList::Set(std::string name, Attribute value) {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), name,
      [](const NamedAttribute& entry, const std::string& key) { return entry.first < key; });
  if (it != entries_.end() && it->first == name) {
    it->second = std::move(value);
  } else {
    entries_.insert(it, {std::move(name), std::move(value)});
  }
}

bool NamedAttrList::Erase(std::string_view name) {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), name,
      [](const NamedAttribute& entry, std::string_view key) { return entry.first < key; });
  if (it == entries_.end() || it->first != name) return false;
  entries_.erase(it);
  return true;
}

}  // namespace kiln::ir
