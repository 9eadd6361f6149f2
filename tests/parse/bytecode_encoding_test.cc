// The primitives of the bytecode format: varints, signed varints, blobs,
// strings, alignment and sections.

#include <gtest/gtest.h>

#include "parse/bytecode/encoding.h"
#include "parse/bytecode_test_writer.h"
#include "support/test_support.h"

namespace kiln::parse::bytecode {
namespace {

using testing::SignedVarInt;
using testing::VarInt;

ByteReader Reader(const std::string& bytes) {
  return ByteReader(bytes, 0, "test data");
}

TEST(BytecodeEncodingTest, DecodesOneByteVarInts) {
  // 7 value bits above a 1 marker bit: 0x01 is 0, 0xFF is 127.
  std::string bytes = "\x01\x03\xff";
  ByteReader reader = Reader(bytes);
  EXPECT_EQ(*reader.ReadVarInt(), 0u);
  EXPECT_EQ(*reader.ReadVarInt(), 1u);
  EXPECT_EQ(*reader.ReadVarInt(), 127u);
  EXPECT_TRUE(reader.empty());
}

TEST(BytecodeEncodingTest, DecodesMultiByteVarInts) {
  // 128 = 0b1'0000000: two bytes, marker 0b10, value bits from bit 2.
  // 128 << 2 | 0b10 = 0x202 -> bytes 02 02.
  std::string bytes("\x02\x02", 2);
  ByteReader reader = Reader(bytes);
  EXPECT_EQ(*reader.ReadVarInt(), 128u);
  // A zero first byte: eight raw little-endian bytes follow.
  std::string wide =
      std::string(1, '\0') + std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8);
  ByteReader wide_reader = Reader(wide);
  EXPECT_EQ(*wide_reader.ReadVarInt(), 0x0102030405060708u);
}

TEST(BytecodeEncodingTest, RoundTripsVarIntsOfEveryLength) {
  for (uint64_t value :
       {0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull, (1ull << 35) + 7,
        (1ull << 49), (1ull << 56) - 1, 1ull << 56, ~0ull}) {
    std::string bytes = VarInt(value);
    ByteReader reader = Reader(bytes);
    ASSERT_OK_AND_ASSIGN(uint64_t decoded, reader.ReadVarInt());
    EXPECT_EQ(decoded, value);
    EXPECT_TRUE(reader.empty()) << value;
  }
}

TEST(BytecodeEncodingTest, DecodesZigZagSignedVarInts) {
  // Zigzag: 0 -> 0, -1 -> 1, 1 -> 2, -2 -> 3.
  std::string bytes = "\x01\x03\x05\x07";
  ByteReader reader = Reader(bytes);
  EXPECT_EQ(*reader.ReadSignedVarInt(), 0);
  EXPECT_EQ(*reader.ReadSignedVarInt(), -1);
  EXPECT_EQ(*reader.ReadSignedVarInt(), 1);
  EXPECT_EQ(*reader.ReadSignedVarInt(), -2);
  for (int64_t value : {INT64_MIN, INT64_MAX, int64_t{-1000000}}) {
    std::string encoded = SignedVarInt(value);
    ByteReader one = Reader(encoded);
    EXPECT_EQ(*one.ReadSignedVarInt(), value);
  }
}

TEST(BytecodeEncodingTest, RejectsTruncatedVarInts) {
  for (std::string bytes :
       {std::string(), std::string("\x02", 1), std::string("\x00\x01\x02", 3),
        std::string("\x80", 1)}) {
    ByteReader reader = Reader(bytes);
    StatusOr<uint64_t> value = reader.ReadVarInt();
    EXPECT_FALSE(value.ok());
    EXPECT_NE(value.status().message().find("test data"),
              std::string_view::npos)
        << value.status().ToString();
  }
}

TEST(BytecodeEncodingTest, SplitsFlagFromValue) {
  std::string bytes = testing::WithFlag(21, true);
  ByteReader reader = Reader(bytes);
  uint64_t value;
  bool flag;
  ASSERT_OK(reader.ReadVarIntWithFlag(value, flag));
  EXPECT_EQ(value, 21u);
  EXPECT_TRUE(flag);
}

TEST(BytecodeEncodingTest, BoundsCountsByRemainingBytes) {
  // A count of a billion items with three bytes left is corrupt, not an
  // allocation request.
  std::string bytes = VarInt(1000000000) + "abc";
  ByteReader reader = Reader(bytes);
  StatusOr<uint64_t> count = reader.ReadCount("things");
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.status().message().find("count of things is 1000000000"),
            std::string_view::npos)
      << count.status().ToString();
  std::string fits = VarInt(3) + "abc";
  ByteReader ok_reader = Reader(fits);
  EXPECT_EQ(*ok_reader.ReadCount("things"), 3u);
}

TEST(BytecodeEncodingTest, ChecksIndicesAgainstTheTable) {
  std::string bytes = VarInt(4);
  ByteReader reader = Reader(bytes);
  StatusOr<uint64_t> index = reader.ReadIndex("string", 4);
  ASSERT_FALSE(index.ok());
  EXPECT_NE(index.status().message().find(
                "string index 4 is out of range (4 entries)"),
            std::string_view::npos)
      << index.status().ToString();
}

TEST(BytecodeEncodingTest, ReadsNullTerminatedStringsAndBlobs) {
  std::string bytes = std::string("abc\0", 4) + VarInt(2) + "xy";
  ByteReader reader = Reader(bytes);
  EXPECT_EQ(*reader.ReadNullTerminated(), "abc");
  EXPECT_EQ(*reader.ReadBlob(), "xy");
  std::string unterminated = "abc";
  ByteReader bad = Reader(unterminated);
  EXPECT_FALSE(bad.ReadNullTerminated().ok());
  std::string short_blob = VarInt(5) + "xy";
  ByteReader bad_blob = Reader(short_blob);
  EXPECT_FALSE(bad_blob.ReadBlob().ok());
}

TEST(BytecodeEncodingTest, AlignsRelativeToTheFileStart) {
  // The data starts at file offset 3: alignment 4 needs one padding byte.
  std::string bytes =
      "\xcb"
      "Z";
  ByteReader reader(bytes, 3, "test data");
  ASSERT_OK(reader.AlignTo(4));
  EXPECT_EQ(reader.offset(), 4u);
  EXPECT_EQ(*reader.ReadByte(), 'Z');
  // Padding must be 0xCB.
  std::string bad = "\x00Z";
  ByteReader bad_reader(bad, 3, "test data");
  EXPECT_FALSE(bad_reader.AlignTo(4).ok());
  // Alignment must be a power of two.
  ByteReader odd(bytes, 3, "test data");
  EXPECT_FALSE(odd.AlignTo(3).ok());
}

TEST(BytecodeEncodingTest, ReadsPlainAndAlignedSections) {
  std::string plain = testing::Section(4, "hello");
  ByteReader reader = Reader(plain);
  ASSERT_OK_AND_ASSIGN(Section section, reader.ReadSection());
  EXPECT_EQ(section.id, 4);
  EXPECT_EQ(section.data, "hello");
  EXPECT_EQ(section.offset, 2u);

  // id | 0x80, length 2, alignment 8, padding to offset 8, data.
  std::string aligned = std::string("\x85", 1) + VarInt(2) + VarInt(8) +
                        std::string(5, '\xcb') + "ok";
  ByteReader aligned_reader = Reader(aligned);
  ASSERT_OK_AND_ASSIGN(Section aligned_section, aligned_reader.ReadSection());
  EXPECT_EQ(aligned_section.id, 5);
  EXPECT_EQ(aligned_section.offset, 8u);
  EXPECT_EQ(aligned_section.data, "ok");
}

TEST(BytecodeEncodingTest, RejectsBadSections) {
  std::string unknown_id = testing::Section(9, "x");
  ByteReader a = Reader(unknown_id);
  EXPECT_FALSE(a.ReadSection().ok());
  std::string too_long = std::string(1, '\x04') + VarInt(100) + "short";
  ByteReader b = Reader(too_long);
  StatusOr<Section> section = b.ReadSection();
  ASSERT_FALSE(section.ok());
  EXPECT_NE(section.status().message().find("claims 100 bytes"),
            std::string_view::npos)
      << section.status().ToString();
}

}  // namespace
}  // namespace kiln::parse::bytecode
