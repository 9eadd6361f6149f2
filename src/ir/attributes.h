// Attributes: the compile-time constants attached to ops (integers, floats,
// strings, arrays, dictionaries, dense tensors, types, symbol references)
// and StableHLO's own enum and struct attributes.
//
// `Attribute` is an immutable handle with value semantics, like `Type`: `==`
// compares structure. A default-constructed Attribute is null.
#ifndef KILN_IR_ATTRIBUTES_H_
#define KILN_IR_ATTRIBUTES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/types.h"

namespace kiln::ir {

class Attribute;
using NamedAttribute = std::pair<std::string, Attribute>;

enum class AttrKind : uint8_t {
  kUnit,            // `unit` (a present flag)
  kBool,            // true / false
  kInteger,         // 3 : i64
  kFloat,           // 1.0 : f32
  kString,          // "text"
  kType,            // a type used as an attribute
  kArray,           // [a, b]
  kDictionary,      // {a = 1, b}
  kDenseArray,      // array<i64: 1, 2>
  kDenseElements,   // dense<...> : tensor<...>
  kDenseResource,   // dense_resource<name> : tensor<...>
  kSymbolRef,       // @f, @a::@b
  kEnum,            // #stablehlo<comparison_direction LT>
  kDotDimensionNumbers,
  kGatherDimensionNumbers,
  kScatterDimensionNumbers,
  kConvDimensionNumbers,
  kDotAlgorithm,
  kChannelHandle,
  kOutputOperandAlias,
  kResultAccuracy,
  kTypeExtensions,  // #stablehlo.bounds<...> / #stablehlo.type_extensions<...>
  kDialectStruct,   // any other #dialect.name<key = value, ...> with known keys
  kOpaque,          // an attribute of another dialect, kept as its text
};

// The enums of StableHLO attributes, numbered as in the spec and VHLO.
enum class EnumKind : uint8_t {
  kComparisonDirection,  // EQ NE GE GT LE LT
  kComparisonType,       // NOTYPE FLOAT TOTALORDER SIGNED UNSIGNED
  kPrecision,            // DEFAULT HIGH HIGHEST
  kFftType,              // FFT IFFT RFFT IRFFT
  kRngAlgorithm,         // DEFAULT THREE_FRY PHILOX
  kRngDistribution,      // (0 unused) UNIFORM=1 NORMAL=2
  kTranspose,            // TRANSPOSE_INVALID NO_TRANSPOSE TRANSPOSE ADJOINT
  kResultAccuracyMode,   // DEFAULT HIGHEST TOLERANCE
};

// "comparison_direction" etc., as written in #stablehlo<NAME VALUE>.
std::string_view EnumKindName(EnumKind kind);
// "LT" etc.; empty if out of range.
std::string_view EnumValueName(EnumKind kind, int64_t value);
std::optional<int64_t> ParseEnumValue(EnumKind kind, std::string_view name);
std::optional<EnumKind> ParseEnumKindName(std::string_view name);

enum ComparisonDirection : int64_t { kEQ = 0, kNE, kGE, kGT, kLE, kLT };
enum ComparisonType : int64_t {
  kNoType = 0, kFloatCompare, kTotalOrder, kSignedCompare, kUnsignedCompare
};
enum FftType : int64_t { kFFT = 0, kIFFT, kRFFT, kIRFFT };
enum RngAlgorithm : int64_t { kRngDefault = 0, kThreeFry, kPhilox };
enum RngDistribution : int64_t { kUniform = 1, kNormal = 2 };
enum Transpose : int64_t {
  kTransposeInvalid = 0, kNoTranspose, kTransposeOnly, kAdjoint
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batching_dimensions;
  std::vector<int64_t> rhs_batching_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

struct ConvDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvDimensionNumbers&) const = default;
};

struct DotAlgorithm {
  Type lhs_precision_type;
  Type rhs_precision_type;
  Type accumulation_type;
  int64_t lhs_component_count = 1;
  int64_t rhs_component_count = 1;
  int64_t num_primitive_operations = 1;
  bool allow_imprecise_accumulation = false;
  bool operator==(const DotAlgorithm&) const = default;
};

struct ChannelHandle {
  int64_t handle = 0;
  int64_t type = 0;
  bool operator==(const ChannelHandle&) const = default;
};

struct OutputOperandAlias {
  std::vector<int64_t> output_tuple_indices;
  int64_t operand_index = 0;
  std::vector<int64_t> operand_tuple_indices;
  bool operator==(const OutputOperandAlias&) const = default;
};

struct ResultAccuracy {
  double atol = 0;
  double rtol = 0;
  int64_t ulps = 0;
  int64_t mode = 0;  // EnumKind::kResultAccuracyMode
  bool operator==(const ResultAccuracy&) const = default;
};

// A blob of a `dense_resource` attribute, from the file's
// {-# dialect_resources #-} section (or the bytecode resource section).
// `present` is false for elided blobs (`__elided__`) or when the section
// did not define the key.
struct ResourceBlob {
  std::string key;
  bool present = false;
  uint64_t alignment = 0;
  std::string data;  // raw bytes (without the 4-byte alignment prefix)
};

class Attribute {
 public:
  Attribute() = default;

  static Attribute Unit();
  static Attribute Bool(bool value);
  // `type` is an integer element type or index. The value is stored as
  // 64-bit two's complement (ui64 values above INT64_MAX wrap).
  static Attribute Integer(int64_t value, Type type);
  static Attribute Float(double value, Type type);
  static Attribute String(std::string value);
  static Attribute TypeAttr(Type type);
  static Attribute Array(std::vector<Attribute> elements);
  // Entries are sorted by name (duplicates: the last one wins).
  static Attribute Dictionary(std::vector<NamedAttribute> entries);
  // array<T: ...> with an integer or bool element type (`ints`) or a float
  // element type (`floats`).
  static Attribute DenseIntArray(ElementType type, std::vector<int64_t> values);
  static Attribute DenseFloatArray(ElementType type, std::vector<double> values);
  static Attribute DenseI64Array(std::vector<int64_t> values) {
    return DenseIntArray(ElementType::kI64, std::move(values));
  }
  static Attribute DenseBoolArray(std::vector<bool> values);
  // `type` is a tensor type. `data` holds the elements in row-major order,
  // StorageBytes() each (for quantized tensors, of the storage type), or
  // exactly one element for a splat.
  static Attribute DenseElements(Type type, std::string data, bool splat);
  static Attribute DenseResource(Type type, std::shared_ptr<ResourceBlob> blob);
  static Attribute SymbolRef(std::string root,
                             std::vector<std::string> nested = {});
  static Attribute Enum(EnumKind kind, int64_t value);
  static Attribute Dot(DotDimensionNumbers value);
  static Attribute Gather(GatherDimensionNumbers value);
  static Attribute Scatter(ScatterDimensionNumbers value);
  static Attribute Conv(ConvDimensionNumbers value);
  static Attribute DotAlgorithmAttr(DotAlgorithm value);
  static Attribute Channel(ChannelHandle value);
  static Attribute OutputOperandAliasAttr(OutputOperandAlias value);
  static Attribute ResultAccuracyAttr(ResultAccuracy value);
  // kDynamic for `?`.
  static Attribute Bounds(std::vector<int64_t> bounds);
  // #dialect.name<k = v, ...>, e.g. name "stablehlo.axis_ref".
  static Attribute DialectStruct(std::string name,
                                 std::vector<NamedAttribute> fields);
  // Text after '#', e.g. "sdy.sharding<@mesh, [{}]>".
  static Attribute Opaque(std::string text);

  explicit operator bool() const { return storage_ != nullptr; }
  AttrKind kind() const;
  bool is(AttrKind kind) const { return storage_ && this->kind() == kind; }

  bool bool_value() const;
  int64_t int_value() const;        // kInteger
  double float_value() const;       // kFloat
  const std::string& string_value() const;  // kString
  Type type() const;  // kType: the type; kInteger/kFloat/dense: the attr's type
  const std::vector<Attribute>& array() const;
  const std::vector<NamedAttribute>& dictionary() const;
  // Looks a key up in a dictionary attribute; null if absent.
  Attribute Get(std::string_view key) const;

  // kDenseArray.
  ElementType dense_array_type() const;
  const std::vector<int64_t>& dense_ints() const;
  const std::vector<double>& dense_floats() const;
  int64_t dense_array_size() const;

  // kDenseElements.
  const std::string& dense_data() const;
  bool dense_is_splat() const;
  // The data expanded to every element (a copy for splats).
  std::string DenseDataExpanded() const;

  // kDenseResource.
  const std::shared_ptr<ResourceBlob>& resource() const;

  // kSymbolRef.
  const std::string& symbol_root() const;
  const std::vector<std::string>& symbol_nested() const;

  // kEnum.
  EnumKind enum_kind() const;
  int64_t enum_value() const;

  const DotDimensionNumbers& dot() const;
  const GatherDimensionNumbers& gather() const;
  const ScatterDimensionNumbers& scatter() const;
  const ConvDimensionNumbers& conv() const;
  const DotAlgorithm& dot_algorithm() const;
  const ChannelHandle& channel_handle() const;
  const OutputOperandAlias& output_operand_alias() const;
  const ResultAccuracy& result_accuracy() const;
  const std::vector<int64_t>& bounds() const;  // kTypeExtensions
  const std::string& struct_name() const;       // kDialectStruct
  const std::vector<NamedAttribute>& struct_fields() const;
  const std::string& opaque_text() const;       // kOpaque

  // Convenience: the integers of a kDenseArray, a kArray of kInteger, or an
  // integer kDenseElements; nullopt for anything else.
  std::optional<std::vector<int64_t>> AsIntVector() const;

  // The MLIR text of the attribute (with its `: type` where MLIR prints one).
  std::string ToString() const;

  size_t Hash() const;
  friend bool operator==(const Attribute& a, const Attribute& b);
  friend bool operator!=(const Attribute& a, const Attribute& b) {
    return !(a == b);
  }

  struct Storage;

 private:
  explicit Attribute(std::shared_ptr<const Storage> storage)
      : storage_(std::move(storage)) {}
  std::shared_ptr<const Storage> storage_;
};

// An ordered set of named attributes, kept sorted by name (as MLIR's
// DictionaryAttr is).
class NamedAttrList {
 public:
  NamedAttrList() = default;
  explicit NamedAttrList(std::vector<NamedAttribute> entries);

  Attribute Get(std::string_view name) const;
  bool Has(std::string_view name) const { return static_cast<bool>(Get(name)); }
  void Set(std::string name, Attribute value);
  bool Erase(std::string_view name);
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  const std::vector<NamedAttribute>& entries() const { return entries_; }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  Attribute ToDictionary() const { return Attribute::Dictionary(entries_); }

  friend bool operator==(const NamedAttrList& a, const NamedAttrList& b) {
    return a.entries_ == b.entries_;
  }

 private:
  std::vector<NamedAttribute> entries_;
};

}  // namespace kiln::ir

#endif  // KILN_IR_ATTRIBUTES_H_
