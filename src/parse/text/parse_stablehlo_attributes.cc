// StableHLO's own attributes: enums (#stablehlo<comparison_direction LT>),
// dimension-number structs, convolution layouts, the dot algorithm,
// channel handles, output-operand aliases, result accuracy and bounds.
#include <functional>

#include "base/strings.h"
#include "parse/text/parser_impl.h"

namespace kiln::parse::text {
namespace {

// One `name = value` field of a struct attribute.
using FieldParser = std::function<Status()>;

}  // namespace

// Parses `<name = value, ...>` where each name maps to a field parser;
// every field may appear at most once, in any order.
static Status ParseStructFields(
    Parser& p, std::string_view what,
    const std::vector<std::pair<std::string_view, FieldParser>>& fields) {
  RETURN_IF_ERROR(p.Expect(TokenKind::kLess, StrCat("to begin ", what)));
  std::vector<bool> seen(fields.size(), false);
  if (!p.tok().is(TokenKind::kGreater)) {
    do {
      const Token name = p.tok();
      if (name.is(TokenKind::kGreater)) break;  // a trailing comma
      if (!name.is(TokenKind::kBareIdentifier)) {
        return p.Error(StrCat("expected field name in ", what, ", found ",
                              Parser::Describe(name)));
      }
      size_t index = fields.size();
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].first == name.text) index = i;
      }
      if (index == fields.size()) {
        std::vector<std::string_view> names;
        for (const auto& field : fields) names.push_back(field.first);
        return p.ErrorAt(
            name, StrCat("unknown field ", Parser::Describe(name), " in ", what,
                         " (expected one of: ", StrJoin(names, ", "), ")"));
      }
      if (seen[index]) {
        return p.ErrorAt(name, StrCat("duplicate field ",
                                      Parser::Describe(name), " in ", what));
      }
      seen[index] = true;
      p.Advance();
      RETURN_IF_ERROR(
          p.Expect(TokenKind::kEqual, StrCat("after '", name.text, "'")));
      RETURN_IF_ERROR(fields[index].second());
    } while (p.Consume(TokenKind::kComma));
  }
  return p.Expect(TokenKind::kGreater, StrCat("to end ", what));
}

StatusOr<ir::Attribute> Parser::ParseEnumBody(ir::EnumKind kind) {
  const Token value = tok_;
  if (value.is(TokenKind::kBareIdentifier)) {
    if (std::optional<int64_t> number = ir::ParseEnumValue(kind, value.text)) {
      Advance();
      return ir::Attribute::Enum(kind, *number);
    }
  }
  std::vector<std::string_view> names;
  for (int64_t i = 0; i < 8; ++i) {
    std::string_view name = ir::EnumValueName(kind, i);
    if (!name.empty()) names.push_back(name);
  }
  return Error(StrCat("expected ", ir::EnumKindName(kind), " value (",
                      StrJoin(names, ", "), "), found ", Describe(value)));
}

StatusOr<ir::Attribute> Parser::ParseStableHloAttribute(const Token& name) {
  std::string_view full = name.text.substr(1);
  auto int_field = [this](int64_t& out, std::string_view what) -> FieldParser {
    return [this, &out, what]() -> Status {
      ASSIGN_OR_RETURN(out, ParseInteger(what));
      return OkStatus();
    };
  };
  auto list_field = [this](std::vector<int64_t>& out,
                           std::string_view what) -> FieldParser {
    return [this, &out, what]() -> Status {
      ASSIGN_OR_RETURN(out, ParseIntegerList(what));
      return OkStatus();
    };
  };
  if (full == "stablehlo") {
    // #stablehlo<kind VALUE>
    RETURN_IF_ERROR(Expect(TokenKind::kLess, "after '#stablehlo'"));
    const Token kind_token = tok_;
    std::optional<ir::EnumKind> kind =
        kind_token.is(TokenKind::kBareIdentifier)
            ? ir::ParseEnumKindName(kind_token.text)
            : std::nullopt;
    if (!kind) {
      return Error(
          StrCat("unknown StableHLO enum attribute ", Describe(kind_token)));
    }
    Advance();
    ASSIGN_OR_RETURN(ir::Attribute value, ParseEnumBody(*kind));
    RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end enum attribute"));
    return value;
  }
  std::string_view kind = full.substr(std::string_view("stablehlo.").size());
  if (kind == "dot") {
    ir::DotDimensionNumbers d;
    RETURN_IF_ERROR(ParseStructFields(
        *this, "#stablehlo.dot",
        {{"lhs_batching_dimensions",
          list_field(d.lhs_batching_dimensions, "dimensions")},
         {"rhs_batching_dimensions",
          list_field(d.rhs_batching_dimensions, "dimensions")},
         {"lhs_contracting_dimensions",
          list_field(d.lhs_contracting_dimensions, "dimensions")},
         {"rhs_contracting_dimensions",
          list_field(d.rhs_contracting_dimensions, "dimensions")}}));
    return ir::Attribute::Dot(std::move(d));
  }
  if (kind == "gather") {
    ir::GatherDimensionNumbers g;
    RETURN_IF_ERROR(ParseStructFields(
        *this, "#stablehlo.gather",
        {{"offset_dims", list_field(g.offset_dims, "dimensions")},
         {"collapsed_slice_dims",
          list_field(g.collapsed_slice_dims, "dimensions")},
         {"operand_batching_dims",
          list_field(g.operand_batching_dims, "dimensions")},
         {"start_indices_batching_dims",
          list_field(g.start_indices_batching_dims, "dimensions")},
         {"start_index_map", list_field(g.start_index_map, "dimensions")},
         {"index_vector_dim",
          int_field(g.index_vector_dim, "as index_vector_dim")}}));
    return ir::Attribute::Gather(std::move(g));
  }
  if (kind == "scatter") {
    ir::ScatterDimensionNumbers s;
    RETURN_IF_ERROR(ParseStructFields(
        *this, "#stablehlo.scatter",
        {{"update_window_dims", list_field(s.update_window_dims, "dimensions")},
         {"inserted_window_dims",
          list_field(s.inserted_window_dims, "dimensions")},
         {"input_batching_dims",
          list_field(s.input_batching_dims, "dimensions")},
         {"scatter_indices_batching_dims",
          list_field(s.scatter_indices_batching_dims, "dimensions")},
         {"scatter_dims_to_operand_dims",
          list_field(s.scatter_dims_to_operand_dims, "dimensions")},
         {"index_vector_dim",
          int_field(s.index_vector_dim, "as index_vector_dim")}}));
    return ir::Attribute::Scatter(std::move(s));
  }
  if (kind == "conv") {
    RETURN_IF_ERROR(Expect(TokenKind::kLess, "after '#stablehlo.conv'"));
    if (ConsumeKeyword("raw")) {
      ir::ConvDimensionNumbers c;
      // Reuse the struct-field parser with the '<' already consumed.
      std::vector<std::pair<std::string_view, FieldParser>> fields = {
          {"input_batch_dimension",
           int_field(c.input_batch_dimension, "dimension")},
          {"input_feature_dimension",
           int_field(c.input_feature_dimension, "dimension")},
          {"input_spatial_dimensions",
           list_field(c.input_spatial_dimensions, "dimensions")},
          {"kernel_input_feature_dimension",
           int_field(c.kernel_input_feature_dimension, "dimension")},
          {"kernel_output_feature_dimension",
           int_field(c.kernel_output_feature_dimension, "dimension")},
          {"kernel_spatial_dimensions",
           list_field(c.kernel_spatial_dimensions, "dimensions")},
          {"output_batch_dimension",
           int_field(c.output_batch_dimension, "dimension")},
          {"output_feature_dimension",
           int_field(c.output_feature_dimension, "dimension")},
          {"output_spatial_dimensions",
           list_field(c.output_spatial_dimensions, "dimensions")}};
      std::vector<bool> seen(fields.size(), false);
      do {
        const Token field = tok_;
        size_t index = fields.size();
        for (size_t i = 0; i < fields.size(); ++i) {
          if (field.is(TokenKind::kBareIdentifier) &&
              fields[i].first == field.text)
            index = i;
        }
        if (index == fields.size() || seen[index]) {
          return Error(StrCat("unexpected field ", Describe(field),
                              " in #stablehlo.conv<raw ...>"));
        }
        seen[index] = true;
        Advance();
        RETURN_IF_ERROR(Expect(TokenKind::kEqual, "after field name"));
        RETURN_IF_ERROR(fields[index].second());
      } while (Consume(TokenKind::kComma));
      RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end #stablehlo.conv"));
      return ir::Attribute::Conv(std::move(c));
    }
    ASSIGN_OR_RETURN(ir::Attribute value, ParseConvDimensionsBody());
    RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end #stablehlo.conv"));
    return value;
  }
  if (kind == "dot_algorithm") return ParseDotAlgorithmBody();
  if (kind == "channel_handle") {
    ir::ChannelHandle h;
    RETURN_IF_ERROR(
        ParseStructFields(*this, "#stablehlo.channel_handle",
                          {{"handle", int_field(h.handle, "as handle")},
                           {"type", int_field(h.type, "as channel type")}}));
    return ir::Attribute::Channel(h);
  }
  if (kind == "output_operand_alias") {
    ir::OutputOperandAlias a;
    RETURN_IF_ERROR(ParseStructFields(
        *this, "#stablehlo.output_operand_alias",
        {{"output_tuple_indices",
          list_field(a.output_tuple_indices, "indices")},
         {"operand_index", int_field(a.operand_index, "as operand index")},
         {"operand_tuple_indices",
          list_field(a.operand_tuple_indices, "indices")}}));
    return ir::Attribute::OutputOperandAliasAttr(std::move(a));
  }
  if (kind == "result_accuracy") return ParseResultAccuracyBody();
  if (kind == "bounds" || kind == "type_extensions") {
    bool extensions = kind == "type_extensions";
    RETURN_IF_ERROR(
        Expect(TokenKind::kLess, StrCat("after '#stablehlo.", kind, "'")));
    if (extensions) {
      RETURN_IF_ERROR(ExpectKeyword("bounds", "in #stablehlo.type_extensions"));
      RETURN_IF_ERROR(Expect(TokenKind::kEqual, "after 'bounds'"));
      RETURN_IF_ERROR(Expect(TokenKind::kLeftSquare, "to begin bounds"));
    }
    std::vector<int64_t> bounds;
    TokenKind end = extensions ? TokenKind::kRightSquare : TokenKind::kGreater;
    if (!tok_.is(end)) {
      do {
        if (Consume(TokenKind::kQuestion)) {
          bounds.push_back(ir::kDynamic);
        } else {
          ASSIGN_OR_RETURN(int64_t bound, ParseInteger("as bound"));
          bounds.push_back(bound);
        }
      } while (Consume(TokenKind::kComma));
    }
    if (extensions)
      RETURN_IF_ERROR(Expect(TokenKind::kRightSquare, "to end bounds"));
    RETURN_IF_ERROR(Expect(TokenKind::kGreater, "to end bounds attribute"));
    return ir::Attribute::Bounds(std::move(bounds));
  }
  // Other #stablehlo.* attributes (axis_ref, replica_group_mesh_axes, ...)
  // are kept as text.
  std::string text(full);
  if (tok_.is(TokenKind::kLess)) {
    ASSIGN_OR_RETURN(std::string body, ScanOpaqueBody());
    text += body;
  }
  return ir::Attribute::Opaque(std::move(text));
}

StatusOr<ir::Attribute> Parser::ParseConvDimensionsBody() {
  // [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
  struct Layout {
    int64_t first = -1;   // b or i
    int64_t second = -1;  // f or o
    std::vector<int64_t> spatial;
  };
  auto parse_layout = [this](char first, char second, std::string_view what,
                             Layout& layout) -> Status {
    const Token open = tok_;
    RETURN_IF_ERROR(
        Expect(TokenKind::kLeftSquare, StrCat("to begin ", what, " layout")));
    std::vector<int64_t> spatial_positions;  // spatial index -> position
    int64_t position = 0;
    if (!tok_.is(TokenKind::kRightSquare)) {
      do {
        const Token item = tok_;
        if (item.is(TokenKind::kInteger)) {
          ASSIGN_OR_RETURN(int64_t index, ParseInteger("as spatial dimension"));
          if (index < 0 || index > 1024) {
            return ErrorAt(item, StrCat("spatial dimension ", index,
                                        " out of range in ", what));
          }
          if (static_cast<int64_t>(spatial_positions.size()) <= index) {
            spatial_positions.resize(index + 1, -1);
          }
          if (spatial_positions[index] != -1) {
            return ErrorAt(item, StrCat("spatial dimension ", index,
                                        " appears twice in ", what, " layout"));
          }
          spatial_positions[index] = position;
        } else if (item.IsKeyword(std::string_view(&first, 1)) ||
                   item.IsKeyword(std::string_view(&second, 1))) {
          int64_t& slot = item.text[0] == first ? layout.first : layout.second;
          if (slot != -1) {
            return ErrorAt(item, StrCat("'", item.text, "' appears twice in ",
                                        what, " layout"));
          }
          slot = position;
          Advance();
        } else {
          return Error(StrCat("unexpected ", Describe(item), " in ", what,
                              " layout (expected '", std::string(1, first),
                              "', '", std::string(1, second),
                              "' or a spatial dimension)"));
        }
        ++position;
      } while (Consume(TokenKind::kComma));
    }
    RETURN_IF_ERROR(
        Expect(TokenKind::kRightSquare, StrCat("to end ", what, " layout")));
    if (layout.first == -1 || layout.second == -1) {
      return ErrorAt(
          open, StrCat(what, " layout must contain '", std::string(1, first),
                       "' and '", std::string(1, second), "'"));
    }
    for (size_t i = 0; i < spatial_positions.size(); ++i) {
      if (spatial_positions[i] == -1) {
        return ErrorAt(
            open, StrCat(what, " layout is missing spatial dimension ", i));
      }
    }
    layout.spatial = std::move(spatial_positions);
    return OkStatus();
  };
  Layout input, kernel, output;
  const Token start = tok_;
  RETURN_IF_ERROR(parse_layout('b', 'f', "input", input));
  RETURN_IF_ERROR(ExpectKeyword("x", "between input and kernel layouts"));
  RETURN_IF_ERROR(parse_layout('i', 'o', "kernel", kernel));
  RETURN_IF_ERROR(Expect(TokenKind::kArrow, "before output layout"));
  RETURN_IF_ERROR(parse_layout('b', 'f', "output", output));
  if (input.spatial.size() != kernel.spatial.size() ||
      input.spatial.size() != output.spatial.size()) {
    return ErrorAt(start,
                   "input, kernel and output layouts have different numbers of "
                   "spatial dimensions");
  }
  ir::ConvDimensionNumbers c;
  c.input_batch_dimension = input.first;
  c.input_feature_dimension = input.second;
  c.input_spatial_dimensions = input.spatial;
  c.kernel_input_feature_dimension = kernel.first;
  c.kernel_output_feature_dimension = kernel.second;
  c.kernel_spatial_dimensions = kernel.spatial;
  c.output_batch_dimension = output.first;
  c.output_feature_dimension = output.second;
  c.output_spatial_dimensions = output.spatial;
  return ir::Attribute::Conv(std::move(c));
}

StatusOr<ir::Attribute> Parser::ParseDotAlgorithmBody() {
  ir::DotAlgorithm a;
  auto type_field = [this](ir::Type& out) -> FieldParser {
    return [this, &out]() -> Status {
      ASSIGN_OR_RETURN(out, ParseType());
      return OkStatus();
    };
  };
  auto int_field = [this](int64_t& out) -> FieldParser {
    return [this, &out]() -> Status {
      ASSIGN_OR_RETURN(out, ParseInteger("in dot algorithm"));
      return OkStatus();
    };
  };
  RETURN_IF_ERROR(ParseStructFields(
      *this, "dot algorithm",
      {{"lhs_precision_type", type_field(a.lhs_precision_type)},
       {"rhs_precision_type", type_field(a.rhs_precision_type)},
       {"accumulation_type", type_field(a.accumulation_type)},
       {"lhs_component_count", int_field(a.lhs_component_count)},
       {"rhs_component_count", int_field(a.rhs_component_count)},
       {"num_primitive_operations", int_field(a.num_primitive_operations)},
       {"allow_imprecise_accumulation", [this, &a]() -> Status {
          if (!tok_.IsKeyword("true") && !tok_.IsKeyword("false")) {
            return Error(
                StrCat("expected true or false, found ", Describe(tok_)));
          }
          a.allow_imprecise_accumulation = tok_.text == "true";
          Advance();
          return OkStatus();
        }}}));
  return ir::Attribute::DotAlgorithmAttr(std::move(a));
}

StatusOr<ir::Attribute> Parser::ParseResultAccuracyBody() {
  ir::ResultAccuracy r;
  auto float_field = [this](double& out) -> FieldParser {
    return [this, &out]() -> Status {
      ASSIGN_OR_RETURN(
          out, ParseFloatValue(ir::ElementType::kF64, "in result accuracy"));
      return OkStatus();
    };
  };
  RETURN_IF_ERROR(ParseStructFields(
      *this, "#stablehlo.result_accuracy",
      {{"atol", float_field(r.atol)},
       {"rtol", float_field(r.rtol)},
       {"ulps",
        [this, &r]() -> Status {
          ASSIGN_OR_RETURN(r.ulps, ParseInteger("as ulps"));
          return OkStatus();
        }},
       {"mode", [this, &r]() -> Status {
          if (!tok_.is(TokenKind::kHashIdentifier) ||
              tok_.text != "#stablehlo.result_accuracy_mode") {
            return Error(
                StrCat("expected #stablehlo.result_accuracy_mode<...>, found ",
                       Describe(tok_)));
          }
          Advance();
          RETURN_IF_ERROR(
              Expect(TokenKind::kLess, "after result_accuracy_mode"));
          ASSIGN_OR_RETURN(ir::Attribute mode,
                           ParseEnumBody(ir::EnumKind::kResultAccuracyMode));
          r.mode = mode.enum_value();
          return Expect(TokenKind::kGreater, "to end result_accuracy_mode");
        }}}));
  return ir::Attribute::ResultAccuracyAttr(r);
}

StatusOr<ir::Attribute> Parser::ParseDotDimensionsPretty() {
  // [batching_dims = [0] x [0] ,] contracting_dims = [2] x [1]
  ir::DotDimensionNumbers d;
  if (ConsumeKeyword("batching_dims")) {
    RETURN_IF_ERROR(Expect(TokenKind::kEqual, "after 'batching_dims'"));
    ASSIGN_OR_RETURN(d.lhs_batching_dimensions,
                     ParseIntegerList("lhs batching dimensions"));
    RETURN_IF_ERROR(
        ExpectKeyword("x", "between lhs and rhs batching dimensions"));
    ASSIGN_OR_RETURN(d.rhs_batching_dimensions,
                     ParseIntegerList("rhs batching dimensions"));
    RETURN_IF_ERROR(Expect(TokenKind::kComma, "after batching dimensions"));
  }
  RETURN_IF_ERROR(ExpectKeyword("contracting_dims", "in dot_general"));
  RETURN_IF_ERROR(Expect(TokenKind::kEqual, "after 'contracting_dims'"));
  ASSIGN_OR_RETURN(d.lhs_contracting_dimensions,
                   ParseIntegerList("lhs contracting dimensions"));
  RETURN_IF_ERROR(
      ExpectKeyword("x", "between lhs and rhs contracting dimensions"));
  ASSIGN_OR_RETURN(d.rhs_contracting_dimensions,
                   ParseIntegerList("rhs contracting dimensions"));
  return ir::Attribute::Dot(std::move(d));
}

}  // namespace kiln::parse::text
