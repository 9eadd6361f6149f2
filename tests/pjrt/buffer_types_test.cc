// Every PJRT_Buffer_Type of 0.112 goes in and out of a buffer: the host
// form is one element per byte for sub-byte types (as XLA's CPU client
// takes it), brought to canonical form on the way in.
#include <cstring>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

struct TypeCase {
  PJRT_Buffer_Type type;
  size_t bytes_per_element;  // on the host and on the device
};

// Written out here, not derived from Kiln's tables.
const TypeCase kTypes[] = {
    {PJRT_Buffer_Type_PRED, 1},       {PJRT_Buffer_Type_S8, 1},
    {PJRT_Buffer_Type_S16, 2},        {PJRT_Buffer_Type_S32, 4},
    {PJRT_Buffer_Type_S64, 8},        {PJRT_Buffer_Type_U8, 1},
    {PJRT_Buffer_Type_U16, 2},        {PJRT_Buffer_Type_U32, 4},
    {PJRT_Buffer_Type_U64, 8},        {PJRT_Buffer_Type_F16, 2},
    {PJRT_Buffer_Type_F32, 4},        {PJRT_Buffer_Type_F64, 8},
    {PJRT_Buffer_Type_BF16, 2},       {PJRT_Buffer_Type_C64, 8},
    {PJRT_Buffer_Type_C128, 16},      {PJRT_Buffer_Type_F8E5M2, 1},
    {PJRT_Buffer_Type_F8E4M3FN, 1},   {PJRT_Buffer_Type_F8E4M3B11FNUZ, 1},
    {PJRT_Buffer_Type_F8E5M2FNUZ, 1}, {PJRT_Buffer_Type_F8E4M3FNUZ, 1},
    {PJRT_Buffer_Type_S4, 1},         {PJRT_Buffer_Type_U4, 1},
    {PJRT_Buffer_Type_S2, 1},         {PJRT_Buffer_Type_U2, 1},
    {PJRT_Buffer_Type_F8E4M3, 1},     {PJRT_Buffer_Type_F8E3M4, 1},
    {PJRT_Buffer_Type_F8E8M0FNU, 1},  {PJRT_Buffer_Type_F4E2M1FN, 1},
    {PJRT_Buffer_Type_S1, 1},         {PJRT_Buffer_Type_U1, 1},
};

class BufferTypesTest : public PluginTest {
 protected:
  PJRT_Buffer_Type ElementType(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_ElementType_Args);
    args.buffer = buffer;
    EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_ElementType(&args)).code,
              PJRT_Error_Code_OK);
    return args.type;
  }
  size_t OnDeviceSize(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
    args.buffer = buffer;
    EXPECT_EQ(
        TakeError(api_, api_->PJRT_Buffer_OnDeviceSizeInBytes(&args)).code,
        PJRT_Error_Code_OK);
    return args.on_device_size_in_bytes;
  }
};

TEST_F(BufferTypesTest, EveryTypeRoundTripsWithItsTypeAndSize) {
  EXPECT_EQ(std::size(kTypes), 30u);  // 31 enumerators less TOKEN (below)
  const std::vector<int64_t> dims = {2, 3};
  for (const TypeCase& c : kTypes) {
    SCOPED_TRACE(::testing::Message() << "type " << c.type);
    // Multi-byte elements take any bytes; one-byte elements get 0 and a
    // canonical nonzero value (-1 for s1, whose only values are 0 and -1).
    std::vector<uint8_t> host(6 * c.bytes_per_element, 0);
    for (size_t i = 0; i < host.size(); ++i) {
      if (c.bytes_per_element > 1) {
        host[i] = static_cast<uint8_t>(i * 37 + 11);
      } else if (i % 2 == 0) {
        host[i] = c.type == PJRT_Buffer_Type_S1 ? 0xFF : 0x01;
      }
    }
    PJRT_Buffer* buffer = Upload(host.data(), c.type, dims, Devices()[0]);
    ASSERT_NE(buffer, nullptr);
    EXPECT_EQ(ElementType(buffer), c.type);
    EXPECT_EQ(OnDeviceSize(buffer), 6 * c.bytes_per_element);
    EXPECT_EQ(Download(buffer), host);
    DestroyBuffer(buffer);
  }
}

// Sub-byte values arrive one per byte; Kiln keeps the value's low bits,
// sign-extended for signed types, exactly as packing then unpacking them
// would (XLA packs them on its devices).
TEST_F(BufferTypesTest, SubByteValuesAreCanonicalized) {
  struct Case {
    PJRT_Buffer_Type type;
    std::vector<uint8_t> in;
    std::vector<uint8_t> out;
  };
  const Case cases[] = {
      {PJRT_Buffer_Type_S4,
       {0x00, 0x07, 0x08, 0x0F, 0xF3, 0x18, 0xFF, 0x7A},
       {0x00, 0x07, 0xF8, 0xFF, 0x03, 0xF8, 0xFF, 0xFA}},
      {PJRT_Buffer_Type_U4,
       {0x00, 0x07, 0x08, 0x0F, 0xF3, 0x18, 0xFF, 0x7A},
       {0x00, 0x07, 0x08, 0x0F, 0x03, 0x08, 0x0F, 0x0A}},
      {PJRT_Buffer_Type_S2,
       {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0xFE, 0x7F},
       {0x00, 0x01, 0xFE, 0xFF, 0x00, 0x01, 0xFE, 0xFF}},
      {PJRT_Buffer_Type_U2,
       {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0xFE, 0x7F},
       {0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x02, 0x03}},
      {PJRT_Buffer_Type_S1,
       {0x00, 0x01, 0x02, 0x03, 0xFF, 0xFE, 0x80, 0x7F},
       {0x00, 0xFF, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0xFF}},
      {PJRT_Buffer_Type_U1,
       {0x00, 0x01, 0x02, 0x03, 0xFF, 0xFE, 0x80, 0x7F},
       {0x00, 0x01, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01}},
      {PJRT_Buffer_Type_F4E2M1FN,
       {0x00, 0x07, 0x08, 0x0F, 0xF3, 0x18, 0xFF, 0x7A},
       {0x00, 0x07, 0x08, 0x0F, 0x03, 0x08, 0x0F, 0x0A}},
      {PJRT_Buffer_Type_PRED,
       {0x00, 0x01, 0x02, 0x03, 0xFF, 0xFE, 0x80, 0x7F},
       {0x00, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "type " << c.type);
    for (PJRT_HostBufferSemantics semantics :
         {PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
          PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
          PJRT_HostBufferSemantics_kImmutableZeroCopy}) {
      // Zero-copy must not alias bytes Kiln has to rewrite.
      alignas(64) uint8_t host[8];
      std::memcpy(host, c.in.data(), 8);
      PJRT_Buffer* buffer =
          Upload(host, c.type, {8}, Devices()[0], nullptr, semantics);
      ASSERT_NE(buffer, nullptr);
      EXPECT_EQ(Download(buffer), c.out) << "semantics " << semantics;
      EXPECT_EQ(std::vector<uint8_t>(host, host + 8), c.in)
          << "the host bytes were modified";
      DestroyBuffer(buffer);
    }
  }
}

TEST_F(BufferTypesTest, TokenBuffersHoldNoBytes) {
  PJRT_Buffer* buffer =
      Upload(nullptr, PJRT_Buffer_Type_TOKEN, {}, Devices()[0]);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(ElementType(buffer), PJRT_Buffer_Type_TOKEN);
  EXPECT_EQ(OnDeviceSize(buffer), 0u);
  EXPECT_TRUE(Download(buffer).empty());
  DestroyBuffer(buffer);
}

TEST_F(BufferTypesTest, TokensHaveNoDimensions) {
  std::vector<int64_t> dims = {2};
  auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client_;
  args.type = PJRT_Buffer_Type_TOKEN;
  args.dims = dims.data();
  args.num_dims = 1;
  args.device = Devices()[0];
  ErrorInfo error =
      TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("token"), std::string::npos) << error.message;
}

TEST_F(BufferTypesTest, InvalidAndUnknownTypesAreRejected) {
  float data[2] = {1, 2};
  std::vector<int64_t> dims = {2};
  for (int type : {0, 32, 99, -1}) {
    auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = client_;
    args.data = data;
    SetRawEnum(args.type, type);
    args.dims = dims.data();
    args.num_dims = 1;
    args.device = Devices()[0];
    ErrorInfo error =
        TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << type;
    EXPECT_NE(error.message.find("element type"), std::string::npos)
        << error.message;
  }
}

}  // namespace
}  // namespace kiln::testing
