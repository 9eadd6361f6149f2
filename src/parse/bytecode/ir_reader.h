// The IR section of a bytecode file: ops, regions and blocks, nested
// isolated regions (in their own sections from version 2), values numbered
// per isolated scope with forward references, use-list orders (skipped).
// VHLO ops are converted as they are read; ops of other dialects are kept
// as they are (their properties decoded with the ODS table, ods_ops.def).
#ifndef KILN_PARSE_BYTECODE_IR_READER_H_
#define KILN_PARSE_BYTECODE_IR_READER_H_

#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ir/operation.h"
#include "parse/bytecode/attr_type_table.h"
#include "parse/bytecode/container.h"
#include "parse/bytecode/encoding.h"
#include "parse/bytecode/ods_ops.h"
#include "parse/bytecode/vhlo_ops.h"

namespace kiln::parse::bytecode {

class IrReader {
 public:
  IrReader(const Container& file, AttrTypeTable& table);

  // Reads the IR section: its top-level ops, which must be one
  // builtin.module (other top-level ops are wrapped in a new module).
  StatusOr<std::unique_ptr<ir::Operation>> ReadModuleOp();

 private:
  // The region being read: its blocks (successors refer to them) and the
  // number of values it defines.
  struct RegionState {
    std::vector<ir::Block*> blocks;
    uint64_t num_values = 0;
  };
  // Values of one isolated-from-above scope, and for each region being
  // read in it, the next value id to define.
  struct Scope {
    std::vector<ir::Value*> values;
    std::vector<uint64_t> next_ids;
  };

  Status ReadBlockHeader(ByteReader& reader, ir::Block& block,
                         uint64_t& num_ops);
  Status ReadOps(ByteReader& reader, ir::Block& block, uint64_t num_ops,
                 const RegionState& region, int depth);
  Status ReadOp(ByteReader& reader, ir::Block& block, const RegionState& region,
                int depth);
  Status ReadRegions(ByteReader& reader, ir::Operation& op, bool isolated,
                     int depth);
  Status ReadRegion(ByteReader& reader, ir::Region& region, int depth);
  Status SkipUseListOrders(ByteReader& reader, uint64_t range_size);
  // What the reader needs about each op name, worked out once.
  struct OpNameInfo {
    const OpNameEntry* entry = nullptr;
    std::string full_name;  // "vhlo.add_v1"
    bool is_vhlo = false;
    const VhloOpInfo* vhlo = nullptr;  // null for unknown VHLO ops
    const OdsOpInfo* ods = nullptr;    // null for ops not in ods_ops.def
  };
  // Decodes the properties of an op (version >= 5) into named attributes.
  Status ReadProperties(ByteReader& reader, const OpNameInfo& name,
                        ir::NamedAttrList& properties);
  // The properties of an op of ods_ops.def, from its properties blob: the
  // first of the op's layouts that uses up the blob.
  Status ReadOdsProperties(ByteReader& blob, const OdsOpInfo& op,
                           ir::NamedAttrList& properties);
  Status ReadOdsLayout(ByteReader& blob, const OdsOpInfo& op,
                       const OdsLayout& layout, ir::NamedAttrList& properties);

  Status DefineValues(ByteReader& reader,
                      const std::vector<ir::Value*>& values);

  const Container& file_;
  AttrTypeTable& table_;
  std::vector<OpNameInfo> op_names_;
  std::vector<Scope> scopes_;
  uint64_t live_values_ = 0;  // value slots of the regions being read
  // Operands that refer to values not defined yet point at placeholders;
  // defining the value rewires every use.
  std::vector<std::unique_ptr<ir::Value>> placeholders_;
  std::unordered_map<ir::Value*, std::vector<std::pair<ir::Operation*, int>>>
      forward_uses_;
};

}  // namespace kiln::parse::bytecode

#endif  // KILN_PARSE_BYTECODE_IR_READER_H_
