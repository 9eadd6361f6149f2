// The bytecode reader on files built byte by byte: every container
// version, sections in any order, value numbering with forward references,
// VHLO attribute conversion, and malformed input.

#include <gtest/gtest.h>

#include "parse/bytecode/reader.h"
#include "parse/bytecode_test_writer.h"
#include "support/test_support.h"

namespace kiln::parse::bytecode {
namespace {

using testing::Section;
using testing::SignedVarInt;
using testing::VarInt;
using testing::WithFlag;
using testing::Writer;

// VHLO codes used below (stablehlo/dialect/VhloBytecode.cpp).
constexpr uint64_t kVhloF32 = 4;
constexpr uint64_t kVhloI64 = 14;
constexpr uint64_t kVhloBool = 0;

// Entries shared by the programs below.
struct Program {
  Writer writer;
  uint64_t loc = 0;
  uint64_t tensor_f32 = 0;
  uint64_t module_op = 0, func_op = 0, add_op = 0, return_op = 0;
  uint64_t func_props = 0;  // properties entry or attribute dictionary
};

// A module with `func.func @main(%arg0: tensor<f32>) -> tensor<f32>` whose
// body the caller writes, in bytecode `version`.
Program MakeProgram(uint64_t version,
                    std::string producer = "StableHLO_v1.20.0") {
  Program p{Writer(version, std::move(producer))};
  Writer& w = p.writer;
  p.loc = w.UnknownLoc();
  uint64_t f32 = w.VhloType(kVhloF32);
  p.tensor_f32 = w.VhloTensorType({}, f32);
  uint64_t func_type = w.Type(1, VarInt(8) + VarInt(1) + VarInt(p.tensor_f32) +
                                     VarInt(1) + VarInt(p.tensor_f32));
  uint64_t arg_attrs = w.Attr(1, VarInt(1) + VarInt(0));  // array_v1 []
  uint64_t type_attr = w.Attr(1, VarInt(17) + VarInt(func_type));
  uint64_t name = w.VhloString("main");
  uint64_t visibility = w.VhloString("");
  // Sorted: arg_attrs, function_type, res_attrs, sym_name, sym_visibility.
  std::vector<uint64_t> values = {arg_attrs, type_attr, arg_attrs, name,
                                  visibility};
  if (version >= 5) {
    std::string blob;
    for (uint64_t v : values) blob += VarInt(v);
    p.func_props = w.Properties(blob);
  } else {
    const char* keys[] = {"arg_attrs", "function_type", "res_attrs", "sym_name",
                          "sym_visibility"};
    std::string dict = VarInt(1) + VarInt(5);
    for (int i = 0; i < 5; ++i)
      dict += VarInt(w.BuiltinString(keys[i])) + VarInt(values[i]);
    p.func_props = w.Attr(0, dict);
  }
  p.module_op = w.OpName(0, "module");
  p.func_op = w.OpName(1, "func_v1");
  p.add_op = w.OpName(1, "add_v1");
  p.return_op = w.OpName(1, "return_v1");
  return p;
}

// Regions of an isolated op: a nested IR section from version 2.
std::string IsolatedRegions(uint64_t version, const std::string& regions) {
  return version >= 2 ? Section(4, regions) : regions;
}

// The func op's header (without its region data).
std::string FuncHeader(const Program& p, uint64_t version) {
  bool props = version >= 5;
  std::string op =
      VarInt(p.func_op) + std::string(1, props ? 0x50 : 0x11) + VarInt(p.loc);
  op += VarInt(p.func_props);
  return op + WithFlag(1, true);
}

// A block header with one tensor<f32> argument.
std::string BlockWithArg(const Program& p, uint64_t version, uint64_t num_ops) {
  std::string out = WithFlag(num_ops, true) + VarInt(1);
  if (version >= 4) {
    out += WithFlag(p.tensor_f32, false);
  } else {
    out += VarInt(p.tensor_f32) + VarInt(p.loc);
  }
  if (version >= 3) out += std::string(1, '\0');  // no use-list orders
  return out;
}

std::string Op(uint64_t name, uint8_t mask, uint64_t loc,
               const std::string& rest) {
  return VarInt(name) + std::string(1, static_cast<char>(mask)) + VarInt(loc) +
         rest;
}

// module { func @main(%a) { %0 = add %a, %a; return %0 } }
std::string AddFunction(Program& p, uint64_t version) {
  std::string body = BlockWithArg(p, version, 2);
  body +=
      Op(p.add_op, 0x06, p.loc,
         VarInt(1) + VarInt(p.tensor_f32) + VarInt(2) + VarInt(0) + VarInt(0));
  body += Op(p.return_op, 0x04, p.loc, VarInt(1) + VarInt(1));
  std::string func_region = VarInt(1) + VarInt(2) + body;
  std::string module_region = VarInt(1) + VarInt(0) + WithFlag(1, false) +
                              FuncHeader(p, version) +
                              IsolatedRegions(version, func_region);
  std::string ir = WithFlag(1, false) +
                   Op(p.module_op, 0x10, p.loc, WithFlag(1, true)) +
                   IsolatedRegions(version, module_region);
  return p.writer.Build(ir);
}

std::unique_ptr<ir::Module> MustRead(const std::string& bytes) {
  StatusOr<std::unique_ptr<ir::Module>> module =
      ReadBytecodeModule(bytes, "test.mlirbc");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

std::string ReadError(const std::string& bytes) {
  StatusOr<std::unique_ptr<ir::Module>> module =
      ReadBytecodeModule(bytes, "test.mlirbc");
  EXPECT_FALSE(module.ok());
  return module.ok() ? "" : std::string(module.status().message());
}

void ExpectAddFunction(const ir::Module& module) {
  ir::Operation* main = module.LookupFunction("main");
  ASSERT_NE(main, nullptr);
  EXPECT_FALSE(main->HasAttr("sym_visibility"));  // "" is the default
  EXPECT_FALSE(main->HasAttr("arg_attrs"));       // [] too
  ir::Type f32 = ir::TensorOf({}, ir::ElementType::kF32);
  EXPECT_EQ(ir::func::FunctionType(*main), ir::Type::Function({f32}, {f32}));
  ir::Block& body = ir::func::Body(*main);
  ASSERT_EQ(body.num_arguments(), 1);
  ASSERT_EQ(body.operations().size(), 2u);
  ir::Operation& add = *body.operations()[0];
  EXPECT_EQ(add.name(), "stablehlo.add");
  EXPECT_EQ(add.operand(0), body.argument(0));
  EXPECT_EQ(add.operand(1), body.argument(0));
  ir::Operation& ret = *body.operations()[1];
  EXPECT_EQ(ret.name(), "func.return");  // return_v1 directly in a function
  EXPECT_EQ(ret.operand(0), add.result(0));
}

TEST(BytecodeReaderTest, ReadsEveryContainerVersion) {
  std::unique_ptr<ir::Module> reference;
  for (uint64_t version = 0; version <= 6; ++version) {
    SCOPED_TRACE(StrCat("bytecode version ", version));
    Program p = MakeProgram(version);
    std::unique_ptr<ir::Module> module = MustRead(AddFunction(p, version));
    ASSERT_NE(module, nullptr);
    ExpectAddFunction(*module);
    if (reference) {
      std::string why;
      EXPECT_TRUE(ir::StructurallyEqual(*reference, *module, true, &why))
          << why;
    } else {
      reference = std::move(module);
    }
  }
}

TEST(BytecodeReaderTest, ReadsSectionsInAnyOrder) {
  Program p = MakeProgram(6);
  std::string ir_text = AddFunction(p, 6);
  Program q = MakeProgram(6);
  // Same tables, sections written in another order.
  std::string body = BlockWithArg(q, 6, 2);
  body +=
      Op(q.add_op, 0x06, q.loc,
         VarInt(1) + VarInt(q.tensor_f32) + VarInt(2) + VarInt(0) + VarInt(0));
  body += Op(q.return_op, 0x04, q.loc, VarInt(1) + VarInt(1));
  std::string module_region = VarInt(1) + VarInt(0) + WithFlag(1, false) +
                              FuncHeader(q, 6) +
                              Section(4, VarInt(1) + VarInt(2) + body);
  std::string ir = WithFlag(1, false) +
                   Op(q.module_op, 0x10, q.loc, WithFlag(1, true)) +
                   Section(4, module_region);
  for (std::vector<uint8_t> order :
       {std::vector<uint8_t>{0, 1, 2, 3, 4, 5, 6, 8},
        {8, 4, 6, 5, 3, 2, 1, 0}}) {
    std::unique_ptr<ir::Module> module = MustRead(q.writer.Build(ir, order));
    ASSERT_NE(module, nullptr);
    ExpectAddFunction(*module);
  }
  EXPECT_NE(MustRead(ir_text), nullptr);
}

TEST(BytecodeReaderTest, ResolvesForwardReferences) {
  // %0 = add %a, %1 ; %1 = add %a, %a ; return %0 (values may be used before
  // their definition in bytecode; the reader rewires the use).
  Program p = MakeProgram(6);
  std::string body = BlockWithArg(p, 6, 3);
  auto add = [&](uint64_t lhs, uint64_t rhs) {
    return Op(p.add_op, 0x06, p.loc,
              VarInt(1) + VarInt(p.tensor_f32) + VarInt(2) + VarInt(lhs) +
                  VarInt(rhs));
  };
  body += add(0, 2) + add(0, 0) +
          Op(p.return_op, 0x04, p.loc, VarInt(1) + VarInt(1));
  std::string module_region = VarInt(1) + VarInt(0) + WithFlag(1, false) +
                              FuncHeader(p, 6) +
                              Section(4, VarInt(1) + VarInt(3) + body);
  std::string ir = WithFlag(1, false) +
                   Op(p.module_op, 0x10, p.loc, WithFlag(1, true)) +
                   Section(4, module_region);
  std::unique_ptr<ir::Module> module = MustRead(p.writer.Build(ir));
  ASSERT_NE(module, nullptr);
  ir::Block& body_block = ir::func::Body(*module->LookupFunction("main"));
  ir::Operation& first = *body_block.operations()[0];
  ir::Operation& second = *body_block.operations()[1];
  EXPECT_EQ(first.operand(1), second.result(0));
  EXPECT_EQ(first.operand(1)->type(), ir::TensorOf({}, ir::ElementType::kF32));
}

TEST(BytecodeReaderTest, RejectsOperandsThatAreNeverDefined) {
  // The region declares three values but defines two; value 2 is used.
  Program p = MakeProgram(6);
  std::string body = BlockWithArg(p, 6, 2);
  body +=
      Op(p.add_op, 0x06, p.loc,
         VarInt(1) + VarInt(p.tensor_f32) + VarInt(2) + VarInt(0) + VarInt(2));
  body += Op(p.return_op, 0x04, p.loc, VarInt(1) + VarInt(1));
  std::string module_region = VarInt(1) + VarInt(0) + WithFlag(1, false) +
                              FuncHeader(p, 6) +
                              Section(4, VarInt(1) + VarInt(3) + body);
  std::string ir = WithFlag(1, false) +
                   Op(p.module_op, 0x10, p.loc, WithFlag(1, true)) +
                   Section(4, module_region);
  EXPECT_NE(ReadError(p.writer.Build(ir)).find("never defined"),
            std::string::npos);
}

TEST(BytecodeReaderTest, RejectsValueIndicesOutsideTheScope) {
  Program p = MakeProgram(6);
  std::string body = BlockWithArg(p, 6, 2);
  body +=
      Op(p.add_op, 0x06, p.loc,
         VarInt(1) + VarInt(p.tensor_f32) + VarInt(2) + VarInt(0) + VarInt(7));
  body += Op(p.return_op, 0x04, p.loc, VarInt(1) + VarInt(1));
  std::string module_region = VarInt(1) + VarInt(0) + WithFlag(1, false) +
                              FuncHeader(p, 6) +
                              Section(4, VarInt(1) + VarInt(2) + body);
  std::string ir = WithFlag(1, false) +
                   Op(p.module_op, 0x10, p.loc, WithFlag(1, true)) +
                   Section(4, module_region);
  EXPECT_NE(ReadError(p.writer.Build(ir)).find("value index 7 is out of range"),
            std::string::npos);
}

TEST(BytecodeReaderTest, RejectsUnknownVhloOps) {
  Program p = MakeProgram(6);
  p.add_op = p.writer.OpName(1, "add_v99");
  std::string message = ReadError(AddFunction(p, 6));
  EXPECT_NE(message.find("unknown VHLO op 'vhlo.add_v99'"), std::string::npos)
      << message;
}

TEST(BytecodeReaderTest, RejectsArtifactsOfOtherProducersAndVersions) {
  for (const char* producer :
       {"MLIR17.0.0git", "StableHLO_v0.8.9", "StableHLO_v1.21.0",
        "StableHLO_v2.0.0", "StableHLO_vx.y.z"}) {
    SCOPED_TRACE(producer);
    Program p = MakeProgram(6, producer);
    std::string message = ReadError(AddFunction(p, 6));
    EXPECT_NE(message.find(StrCat("'", producer, "'")), std::string::npos)
        << message;
    EXPECT_NE(message.find("VHLO 0.9.0 to 1.20.0"), std::string::npos)
        << message;
  }
  // Patch releases of a supported minor version carry the same VHLO.
  Program patch = MakeProgram(6, "StableHLO_v1.16.2");
  EXPECT_NE(MustRead(AddFunction(patch, 6)), nullptr);
}

TEST(BytecodeReaderTest, RejectsNewerContainerVersions) {
  Program p = MakeProgram(6);
  std::string bytes = AddFunction(p, 6);
  bytes[4] = static_cast<char>(VarInt(7)[0]);
  std::string message = ReadError(bytes);
  EXPECT_NE(message.find("MLIR bytecode version 7"), std::string::npos)
      << message;
}

TEST(BytecodeReaderTest, RejectsFilesWithoutTheMagic) {
  EXPECT_FALSE(LooksLikeBytecode("module {}"));
  EXPECT_FALSE(LooksLikeBytecode("ML"));
  EXPECT_TRUE(
      LooksLikeBytecode(std::string("ML\xef"
                                    "R\x0d",
                                    5)));
  EXPECT_NE(ReadError("module {}").find("magic"), std::string::npos);
}

TEST(BytecodeReaderTest, RejectsDuplicateAndMissingSections) {
  Program p = MakeProgram(6);
  std::string ir = WithFlag(0, false);
  std::string duplicate = p.writer.Build(ir, {0, 1, 2, 3, 4, 4, 8});
  EXPECT_NE(ReadError(duplicate).find("duplicate IR section"),
            std::string::npos);
  std::string missing = p.writer.Build(ir, {0, 1, 2, 3, 8});
  EXPECT_NE(ReadError(missing).find("no IR section"), std::string::npos);
}

TEST(BytecodeReaderTest, RejectsAttributesThatReferToThemselves) {
  // Attribute 0 (the module's location) is an array_v1 holding itself.
  Writer w(6);
  uint64_t loc =
      w.Attr(1, VarInt(1) + VarInt(1) + VarInt(0));  // array [attr 0]
  uint64_t module_op = w.OpName(0, "module");
  std::string ir = WithFlag(1, false) +
                   Op(module_op, 0x10, loc, WithFlag(1, true)) +
                   Section(4, VarInt(1) + VarInt(0) + WithFlag(0, false));
  std::string message = ReadError(w.Build(ir));
  EXPECT_NE(message.find("refers to itself"), std::string::npos) << message;
}

TEST(BytecodeReaderTest, RejectsHugeCounts) {
  Writer w(6);
  uint64_t loc = w.UnknownLoc();
  uint64_t module_op = w.OpName(0, "module");
  // A region that claims 2^40 blocks.
  std::string ir = WithFlag(1, false) +
                   Op(module_op, 0x10, loc, WithFlag(1, true)) +
                   Section(4, VarInt(uint64_t{1} << 40));
  std::string message = ReadError(w.Build(ir));
  EXPECT_NE(message.find("count of blocks"), std::string::npos) << message;
  // A region that claims more values than the file could define.
  std::string values =
      WithFlag(1, false) + Op(module_op, 0x10, loc, WithFlag(1, true)) +
      Section(4, VarInt(1) + VarInt(1000000) + WithFlag(0, false));
  EXPECT_FALSE(ReadBytecodeModule(w.Build(values), "x").ok());
}

TEST(BytecodeReaderTest, DecodesBitPackedAndSplatBooleans) {
  struct Case {
    int64_t size;
    std::string blob;
    std::vector<int64_t> expected;
  };
  std::vector<Case> cases = {
      {10,
       std::string("\x05\x02", 2),
       {1, 0, 1, 0, 0, 0, 0, 0, 0, 1}},                           // packed
      {16, std::string("\xff", 1), std::vector<int64_t>(16, 1)},  // splat
      {3, std::string("\x01\x00\x01", 3), {1, 0, 1}},             // bytes
      {4, std::string("\xff", 1), {1, 1, 1, 1}},  // packed, all set
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.size);
    Program p = MakeProgram(6);
    uint64_t bool_type = p.writer.VhloType(kVhloBool);
    uint64_t tensor = p.writer.VhloTensorType({c.size}, bool_type);
    uint64_t value = p.writer.Attr(
        1, VarInt(15) + VarInt(tensor) + VarInt(c.blob.size()) + c.blob);
    uint64_t constant_op = p.writer.OpName(1, "constant_v1");
    uint64_t props = p.writer.Properties(VarInt(value));
    std::string body =
        WithFlag(1, false) + Op(constant_op, 0x42, p.loc,
                                VarInt(props) + VarInt(1) + VarInt(tensor));
    std::string ir = WithFlag(1, false) +
                     Op(p.module_op, 0x10, p.loc, WithFlag(1, true)) +
                     Section(4, VarInt(1) + VarInt(1) + body);
    std::unique_ptr<ir::Module> module = MustRead(p.writer.Build(ir));
    ASSERT_NE(module, nullptr);
    ir::Operation& constant = *module->body().operations()[0];
    EXPECT_EQ(constant.name(), "stablehlo.constant");
    ir::Attribute attr = constant.GetAttr("value");
    ASSERT_TRUE(attr.is(ir::AttrKind::kDenseElements));
    EXPECT_EQ(attr.AsIntVector(), c.expected);
  }
}

// One VHLO op with the given properties in a module; returns the op.
struct OneOp {
  std::unique_ptr<ir::Module> module;
  ir::Operation* op = nullptr;
};
OneOp ReadOneOp(Program& p, const std::string& name,
                const std::vector<uint64_t>& props, uint64_t num_operands = 0) {
  uint64_t op_name = p.writer.OpName(1, name);
  std::string blob;
  for (uint64_t v : props) blob += VarInt(v);
  uint64_t index = p.writer.Properties(blob);
  std::string operands;
  uint8_t mask = 0x42;
  if (num_operands > 0) {
    mask |= 0x04;
    operands = VarInt(num_operands);
    for (uint64_t i = 0; i < num_operands; ++i) operands += VarInt(0);
  }
  std::string body =
      BlockWithArg(p, 6, 1) +
      Op(op_name, mask, p.loc,
         VarInt(index) + VarInt(1) + VarInt(p.tensor_f32) + operands);
  std::string ir = WithFlag(1, false) +
                   Op(p.module_op, 0x10, p.loc, WithFlag(1, true)) +
                   Section(4, VarInt(1) + VarInt(2) + body);
  OneOp result;
  result.module = MustRead(p.writer.Build(ir));
  if (result.module) result.op = result.module->body().operations()[0].get();
  return result;
}

uint64_t I64Tensor(Program& p, const std::vector<int64_t>& values) {
  uint64_t i64 = p.writer.VhloType(kVhloI64);
  uint64_t type =
      p.writer.VhloTensorType({static_cast<int64_t>(values.size())}, i64);
  std::string data;
  for (int64_t v : values) {
    for (int i = 0; i < 8; ++i) data.push_back(static_cast<char>(v >> (8 * i)));
  }
  return p.writer.Attr(1,
                       VarInt(15) + VarInt(type) + VarInt(data.size()) + data);
}

uint64_t I64(Program& p, int64_t value) {
  uint64_t i64 = p.writer.VhloType(kVhloI64);
  return p.writer.Attr(1, VarInt(9) + VarInt(i64) + SignedVarInt(value));
}

TEST(BytecodeReaderTest, ConvertsTensorsToDenseArrays) {
  Program p = MakeProgram(6);
  OneOp one = ReadOneOp(p, "transpose_v1", {I64Tensor(p, {1, 0})}, 1);
  ASSERT_NE(one.op, nullptr);
  EXPECT_EQ(one.op->name(), "stablehlo.transpose");
  EXPECT_EQ(one.op->GetAttr("permutation"),
            ir::Attribute::DenseI64Array({1, 0}));
}

TEST(BytecodeReaderTest, RebuildsGatherDimensionNumbers) {
  // gather_v1 (before batching dimensions): collapsed_slice_dims,
  // index_vector_dim, indices_are_sorted, offset_dims, slice_sizes,
  // start_index_map.
  Program p = MakeProgram(6);
  uint64_t sorted = p.writer.Attr(1, VarInt(2) + VarInt(1));
  OneOp one =
      ReadOneOp(p, "gather_v1",
                {I64Tensor(p, {0}), I64(p, 1), sorted, I64Tensor(p, {1}),
                 I64Tensor(p, {1, 4}), I64Tensor(p, {0})},
                2);
  ASSERT_NE(one.op, nullptr);
  ir::GatherDimensionNumbers dims;
  dims.offset_dims = {1};
  dims.collapsed_slice_dims = {0};
  dims.start_index_map = {0};
  dims.index_vector_dim = 1;
  EXPECT_EQ(one.op->GetAttr("dimension_numbers"), ir::Attribute::Gather(dims));
  EXPECT_EQ(one.op->GetAttr("slice_sizes"),
            ir::Attribute::DenseI64Array({1, 4}));
  EXPECT_EQ(one.op->GetAttr("indices_are_sorted"), ir::Attribute::Bool(true));
}

TEST(BytecodeReaderTest, DropsDefaultValuedAttributes) {
  // compare_v1 with compare_type NOTYPE: StableHLO leaves it out.
  Program p = MakeProgram(6);
  uint64_t no_type = p.writer.Attr(1, VarInt(4) + VarInt(0));
  uint64_t lt = p.writer.Attr(1, VarInt(3) + VarInt(5));
  OneOp one = ReadOneOp(p, "compare_v1", {no_type, lt}, 2);
  ASSERT_NE(one.op, nullptr);
  EXPECT_FALSE(one.op->HasAttr("compare_type"));
  EXPECT_EQ(one.op->GetAttr("comparison_direction"),
            ir::Attribute::Enum(ir::EnumKind::kComparisonDirection, ir::kLT));
}

TEST(BytecodeReaderTest, RejectsPropertiesOfTheWrongSize) {
  Program p = MakeProgram(6);
  // transpose_v1 has one property; give it two.
  uint64_t dims = I64Tensor(p, {0});
  uint64_t op_name = p.writer.OpName(1, "transpose_v1");
  uint64_t index = p.writer.Properties(VarInt(dims) + VarInt(dims));
  std::string body = BlockWithArg(p, 6, 1) +
                     Op(op_name, 0x46, p.loc,
                        VarInt(index) + VarInt(1) + VarInt(p.tensor_f32) +
                            VarInt(1) + VarInt(0));
  std::string ir = WithFlag(1, false) +
                   Op(p.module_op, 0x10, p.loc, WithFlag(1, true)) +
                   Section(4, VarInt(1) + VarInt(2) + body);
  std::string message = ReadError(p.writer.Build(ir));
  EXPECT_NE(message.find("unexpected bytes after the properties"),
            std::string::npos)
      << message;
}

TEST(BytecodeReaderTest, PassesTextAttributesToTheHook) {
  Program p = MakeProgram(6);
  uint64_t sdy = p.writer.Dialect("sdy");
  uint64_t text = p.writer.Attr(
      sdy, std::string("#sdy.sharding<@mesh, [{}]>\0", 27), false);
  uint64_t key = p.writer.BuiltinString("sdy.sharding");
  uint64_t dict =
      p.writer.Attr(0, VarInt(1) + VarInt(1) + VarInt(key) + VarInt(text));
  std::string ir =
      WithFlag(1, false) +
      Op(p.module_op, 0x11, p.loc, VarInt(dict) + WithFlag(1, true)) +
      Section(4, VarInt(1) + VarInt(0) + WithFlag(0, false));
  std::string bytes = p.writer.Build(ir);

  std::unique_ptr<ir::Module> opaque = MustRead(bytes);
  ASSERT_NE(opaque, nullptr);
  EXPECT_EQ(opaque->op().GetAttr("sdy.sharding"),
            ir::Attribute::Opaque("sdy.sharding<@mesh, [{}]>"));

  BytecodeReadOptions options;
  std::string seen;
  options.parse_attribute =
      [&](std::string_view text) -> StatusOr<ir::Attribute> {
    seen = std::string(text);
    return ir::Attribute::String("parsed");
  };
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> hooked,
                       ReadBytecodeModule(bytes, "x", options));
  EXPECT_EQ(seen, "#sdy.sharding<@mesh, [{}]>");
  EXPECT_EQ(hooked->op().GetAttr("sdy.sharding"),
            ir::Attribute::String("parsed"));
}

}  // namespace
}  // namespace kiln::parse::bytecode
