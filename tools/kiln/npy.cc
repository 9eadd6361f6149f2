#include "tools/kiln/npy.h"

#include <cstring>

#include "base/strings.h"

namespace kiln::cli {
namespace {

using ir::ElementType;

struct Dtype {
  const char* descr;
  ElementType type;
};

// NumPy's type strings (little-endian) and ml_dtypes' names.
constexpr Dtype kDtypes[] = {
    {"|b1", ElementType::kI1},
    {"|i1", ElementType::kI8},
    {"<i2", ElementType::kI16},
    {"<i4", ElementType::kI32},
    {"<i8", ElementType::kI64},
    {"|u1", ElementType::kUI8},
    {"<u2", ElementType::kUI16},
    {"<u4", ElementType::kUI32},
    {"<u8", ElementType::kUI64},
    {"<f2", ElementType::kF16},
    {"<f4", ElementType::kF32},
    {"<f8", ElementType::kF64},
    {"<c8", ElementType::kC64},
    {"<c16", ElementType::kC128},
    {"bfloat16", ElementType::kBF16},
    {"int4", ElementType::kI4},
    {"uint4", ElementType::kUI4},
    {"int2", ElementType::kI2},
    {"uint2", ElementType::kUI2},
    {"float8_e4m3fn", ElementType::kF8E4M3FN},
    {"float8_e5m2", ElementType::kF8E5M2},
    {"float8_e4m3fnuz", ElementType::kF8E4M3FNUZ},
    {"float8_e5m2fnuz", ElementType::kF8E5M2FNUZ},
    {"float8_e4m3b11fnuz", ElementType::kF8E4M3B11FNUZ},
    {"float8_e4m3", ElementType::kF8E4M3},
    {"float8_e3m4", ElementType::kF8E3M4},
    {"float8_e8m0fnu", ElementType::kF8E8M0FNU},
    {"float4_e2m1fn", ElementType::kF4E2M1FN},
    {"float6_e2m3fn", ElementType::kF6E2M3FN},
    {"float6_e3m2fn", ElementType::kF6E3M2FN},
};

// The value text of `key` in the header dictionary, e.g. "'<f4'" or "(2, 3)".
std::string_view HeaderField(std::string_view header, std::string_view key) {
  std::string quoted = StrCat("'", key, "'");
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) return {};
  size_t colon = header.find(':', at + quoted.size());
  if (colon == std::string_view::npos) return {};
  size_t begin = colon + 1;
  while (begin < header.size() && header[begin] == ' ') ++begin;
  size_t end = begin;
  if (begin < header.size() && header[begin] == '(') {
    end = header.find(')', begin);
    if (end == std::string_view::npos) return {};
    ++end;
  } else if (begin < header.size() && header[begin] == '\'') {
    end = header.find('\'', begin + 1);
    if (end == std::string_view::npos) return {};
    ++end;
  } else {
    while (end < header.size() && header[end] != ',' && header[end] != '}')
      ++end;
  }
  return header.substr(begin, end - begin);
}

}  // namespace

StatusOr<NpyArray> ParseNpy(std::string_view bytes) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY") {
    return InvalidArgumentError("not a .npy file (no \\x93NUMPY magic)");
  }
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_length;
  size_t offset;
  if (major == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) |
                    (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return InvalidArgumentError("truncated .npy header");
    uint32_t length;
    std::memcpy(&length, bytes.data() + 8, 4);
    header_length = length;
    offset = 12;
  } else {
    return InvalidArgumentError(".npy format version ", major,
                                " is not supported");
  }
  if (offset + header_length > bytes.size()) {
    return InvalidArgumentError("truncated .npy header");
  }
  std::string_view header = bytes.substr(offset, header_length);
  std::string_view descr = HeaderField(header, "descr");
  std::string_view order = HeaderField(header, "fortran_order");
  std::string_view shape_text = HeaderField(header, "shape");
  if (descr.size() < 2 || shape_text.empty()) {
    return InvalidArgumentError("bad .npy header: ", EscapeForMessage(header));
  }
  if (StripWhitespace(order) == "True") {
    return UnimplementedError(".npy arrays in Fortran order are not supported");
  }
  descr = descr.substr(1, descr.size() - 2);
  NpyArray array;
  bool found = false;
  for (const Dtype& dtype : kDtypes) {
    std::string_view name = dtype.descr;
    // '|i1' may also be written '<i1'.
    if (name == descr || (name[0] == '|' && descr.size() == name.size() &&
                          descr.substr(1) == name.substr(1))) {
      array.shape.type = dtype.type;
      found = true;
      break;
    }
  }
  if (!found) {
    return UnimplementedError(".npy dtype '", descr, "' is not supported");
  }
  std::string_view inner = shape_text.substr(1, shape_text.size() - 2);
  for (std::string_view piece : StrSplit(inner, ',')) {
    piece = StripWhitespace(piece);
    if (piece.empty()) continue;
    auto dim = ParseInt64(piece);
    if (!dim || *dim < 0) {
      return InvalidArgumentError("bad .npy shape ", shape_text);
    }
    array.shape.dims.push_back(*dim);
  }
  // The header's shape is outside input: its byte size may not fit.
  int64_t expected = array.shape.element_bytes();
  for (int64_t dim : array.shape.dims) {
    if (__builtin_mul_overflow(expected, dim, &expected)) {
      return InvalidArgumentError(".npy shape ", shape_text,
                                  " has more bytes than fit in 64 bits");
    }
  }
  size_t data_offset = offset + header_length;
  if (static_cast<int64_t>(bytes.size() - data_offset) < expected) {
    return InvalidArgumentError(".npy data holds ", bytes.size() - data_offset,
                                " bytes; ", array.shape.ToString(), " needs ",
                                expected);
  }
  array.data = std::string(bytes.substr(data_offset, expected));
  return array;
}

std::string WriteNpy(const NpyArray& array) {
  const char* descr = "|u1";
  for (const Dtype& dtype : kDtypes) {
    if (dtype.type == array.shape.type) {
      descr = dtype.descr;
      break;
    }
  }
  std::string shape = "(";
  for (int64_t dim : array.shape.dims) StrAppend(shape, dim, ", ");
  if (array.shape.dims.size() > 1) shape.resize(shape.size() - 1);
  if (array.shape.dims.size() > 1) shape.pop_back();
  shape += ")";
  std::string header =
      StrCat("{'descr': '", descr,
             "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad so the data starts on a 64-byte boundary, ending with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out += array.data;
  return out;
}

}  // namespace kiln::cli
