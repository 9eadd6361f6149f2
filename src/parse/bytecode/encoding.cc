#include "parse/bytecode/encoding.h"

#include <cstring>

namespace kiln::parse::bytecode {

std::string SectionName(uint8_t id) {
  static constexpr const char* kNames[kNumSectionIds] = {
      "string",    "dialect",  "attribute/type",  "attribute/type offset",
      "IR",        "resource", "resource offset", "dialect version",
      "properties"};
  if (id < kNumSectionIds)
    return StrCat(kNames[id], " section (", int{id}, ")");
  return StrCat("unknown section (", int{id}, ")");
}

ByteReader::ByteReader(std::string_view data, uint64_t file_offset,
                       std::string_view what, uint64_t index,
                       std::string_view owner)
    : data_(data),
      file_offset_(file_offset),
      what_(what),
      index_(index),
      owner_(owner) {}

std::string ByteReader::what() const {
  std::string out(what_);
  if (index_ != kNoIndex) StrAppend(out, " ", index_);
  if (!owner_.empty()) StrAppend(out, " of '", EscapeForMessage(owner_), "'");
  return out;
}

StatusOr<uint8_t> ByteReader::ReadByte() {
  if (empty()) return Error("unexpected end of data, expected a byte");
  return static_cast<uint8_t>(data_[pos_++]);
}

StatusOr<std::string_view> ByteReader::ReadBytes(uint64_t length) {
  if (length > remaining()) {
    return Error("expected ", length, " bytes but only ", remaining(),
                 " remain");
  }
  std::string_view bytes = data_.substr(pos_, length);
  pos_ += length;
  return bytes;
}

Status ByteReader::Skip(uint64_t length) {
  if (length > remaining()) {
    return Error("cannot skip ", length, " bytes, only ", remaining(),
                 " remain");
  }
  pos_ += length;
  return OkStatus();
}

StatusOr<uint64_t> ByteReader::ReadVarInt() {
  if (empty()) return Error("unexpected end of data, expected a varint");
  uint8_t first = static_cast<uint8_t>(data_[pos_]);
  if (first & 1) {
    ++pos_;
    return uint64_t{first} >> 1;
  }
  if (first == 0) {
    if (remaining() < 9) return Error("truncated 9-byte varint");
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) {
      value |= uint64_t{static_cast<uint8_t>(data_[pos_ + 1 + i])} << (8 * i);
    }
    pos_ += 9;
    return value;
  }
  int extra = __builtin_ctz(first);  // 1..7 bytes follow
  if (remaining() < static_cast<size_t>(extra) + 1) {
    return Error("truncated ", extra + 1, "-byte varint");
  }
  uint64_t value = 0;
  for (int i = 0; i <= extra; ++i) {
    value |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
  }
  pos_ += extra + 1;
  return value >> (extra + 1);
}

StatusOr<int64_t> ByteReader::ReadSignedVarInt() {
  ASSIGN_OR_RETURN(uint64_t raw, ReadVarInt());
  return static_cast<int64_t>((raw >> 1) ^ (~(raw & 1) + 1));
}

Status ByteReader::ReadVarIntWithFlag(uint64_t& value, bool& flag) {
  ASSIGN_OR_RETURN(uint64_t raw, ReadVarInt());
  flag = raw & 1;
  value = raw >> 1;
  return OkStatus();
}

StatusOr<uint64_t> ByteReader::ReadCount(std::string_view items,
                                         uint64_t min_bytes_each) {
  ASSIGN_OR_RETURN(uint64_t count, ReadVarInt());
  if (min_bytes_each > 0 && count > remaining() / min_bytes_each) {
    return Error("count of ", items, " is ", count, " but only ", remaining(),
                 " bytes remain");
  }
  return count;
}

StatusOr<uint64_t> ByteReader::ReadIndex(std::string_view table,
                                         uint64_t size) {
  ASSIGN_OR_RETURN(uint64_t index, ReadVarInt());
  if (index >= size) {
    return Error(table, " index ", index, " is out of range (", size,
                 " entries)");
  }
  return index;
}

StatusOr<std::string_view> ByteReader::ReadNullTerminated() {
  const void* nul = std::memchr(data_.data() + pos_, 0, remaining());
  if (nul == nullptr) return Error("string without a terminating NUL");
  size_t length = static_cast<const char*>(nul) - (data_.data() + pos_);
  std::string_view text = data_.substr(pos_, length);
  pos_ += length + 1;
  return text;
}

StatusOr<std::string_view> ByteReader::ReadBlob() {
  ASSIGN_OR_RETURN(uint64_t length, ReadVarInt());
  return ReadBytes(length);
}

Status ByteReader::AlignTo(uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 ||
      alignment > (uint64_t{1} << 32)) {
    return Error("alignment ", alignment, " is not a power of two up to 2^32");
  }
  while (offset() % alignment != 0) {
    ASSIGN_OR_RETURN(uint8_t padding, ReadByte());
    if (padding != 0xCB) {
      return Error("expected alignment padding byte 0xCB, got ",
                   static_cast<int>(padding));
    }
  }
  return OkStatus();
}

StatusOr<Section> ByteReader::ReadSection() {
  ASSIGN_OR_RETURN(uint8_t id_and_align, ReadByte());
  ASSIGN_OR_RETURN(uint64_t length, ReadVarInt());
  Section section;
  section.id = id_and_align & 0x7f;
  if (section.id >= kNumSectionIds) {
    return Error("invalid section id ", int{section.id});
  }
  if (id_and_align & 0x80) {
    ASSIGN_OR_RETURN(uint64_t alignment, ReadVarInt());
    RETURN_IF_ERROR(AlignTo(alignment));
  }
  section.offset = offset();
  if (length > remaining()) {
    return Error(SectionName(section.id), " claims ", length,
                 " bytes but only ", remaining(), " remain");
  }
  ASSIGN_OR_RETURN(section.data, ReadBytes(length));
  return section;
}

}  // namespace kiln::parse::bytecode
