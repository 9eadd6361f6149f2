// The primitives of the MLIR bytecode format: a bounded cursor over a part
// of the file that reads bytes, variable-width integers, blobs, strings and
// sections, and reports errors with the file offset where they happened.
//
// Every read checks the bytes that remain, and every count read with
// ReadCount is bounded by them, so no input can make the reader run past
// its buffer or allocate more than the input justifies.
#ifndef KILN_PARSE_BYTECODE_ENCODING_H_
#define KILN_PARSE_BYTECODE_ENCODING_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::parse::bytecode {

// The four bytes every MLIR bytecode file starts with: "ML\xefR".
inline constexpr std::string_view kMagic(
    "ML\xef"
    "R",
    4);

// Versions of the container format (mlir/Bytecode/Encoding.h), the ones
// where a reader must do something differently.
inline constexpr uint64_t kVersionDialectVersioning = 1;
inline constexpr uint64_t kVersionLazyLoading =
    2;  // isolated regions in sections
inline constexpr uint64_t kVersionUseListOrdering = 3;
inline constexpr uint64_t kVersionElideUnknownBlockArgLocation = 4;
inline constexpr uint64_t kVersionNativeProperties = 5;
// ODS operand/result segment sizes as sparse arrays, not attributes.
inline constexpr uint64_t kVersionNativeSegmentSizes = 6;
inline constexpr uint64_t kMaxBytecodeVersion = 6;

// Top-level section ids.
enum class SectionId : uint8_t {
  kString = 0,
  kDialect = 1,
  kAttrType = 2,
  kAttrTypeOffset = 3,
  kIR = 4,
  kResource = 5,
  kResourceOffset = 6,
  kDialectVersions = 7,
  kProperties = 8,
};
inline constexpr int kNumSectionIds = 9;

// "string section (0)" etc., for messages.
std::string SectionName(uint8_t id);

struct Section {
  uint8_t id = 0;
  std::string_view data;
  uint64_t offset = 0;  // file offset of data
};

class ByteReader {
 public:
  // Reads `data`, which starts at `file_offset` in the file (alignment is
  // relative to the start of the file). The part is named in messages as
  // `what` ("string section"), with `index` and `owner` when given
  // ("attribute 7 of 'vhlo'"); the strings must outlive the reader. The
  // name is built only for messages: readers are made for every entry.
  ByteReader(std::string_view data, uint64_t file_offset, std::string_view what,
             uint64_t index = kNoIndex, std::string_view owner = {});

  static constexpr uint64_t kNoIndex = ~uint64_t{0};

  bool empty() const { return pos_ == data_.size(); }
  size_t remaining() const { return data_.size() - pos_; }
  // The file offset of the next byte.
  uint64_t offset() const { return file_offset_ + pos_; }
  std::string what() const;

  StatusOr<uint8_t> ReadByte();
  StatusOr<std::string_view> ReadBytes(uint64_t length);
  Status Skip(uint64_t length);

  // A PrefixVarInt: the trailing zero bits of the first byte count the
  // bytes that follow; a zero first byte is followed by a raw uint64.
  StatusOr<uint64_t> ReadVarInt();
  // A zigzag-encoded varint.
  StatusOr<int64_t> ReadSignedVarInt();
  // `(value << 1) | flag`.
  Status ReadVarIntWithFlag(uint64_t& value, bool& flag);
  // A varint counting items that take at least `min_bytes_each` bytes each
  // in what remains of this reader; larger counts are rejected as corrupt.
  StatusOr<uint64_t> ReadCount(std::string_view items,
                               uint64_t min_bytes_each = 1);
  // A varint index that must be below `size`.
  StatusOr<uint64_t> ReadIndex(std::string_view table, uint64_t size);
  // Bytes up to a NUL, which is consumed and not returned.
  StatusOr<std::string_view> ReadNullTerminated();
  // A varint length followed by that many bytes.
  StatusOr<std::string_view> ReadBlob();
  // Skips 0xCB padding bytes up to a multiple of `alignment` (a power of
  // two) from the start of the file.
  Status AlignTo(uint64_t alignment);
  // A section header and its data: id byte (high bit: aligned), varint
  // length, [varint alignment, padding], data.
  StatusOr<Section> ReadSection();

  // An INVALID_ARGUMENT error naming this part and the current offset.
  template <typename... Args>
  Status Error(const Args&... args) const {
    return InvalidArgumentError(what(), " at offset ", offset(), ": ", args...);
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  uint64_t file_offset_;
  std::string_view what_;
  uint64_t index_;
  std::string_view owner_;
};

}  // namespace kiln::parse::bytecode

#endif  // KILN_PARSE_BYTECODE_ENCODING_H_
