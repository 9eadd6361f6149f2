// Dots and convolutions of tiles: contractions whose cuts fit, with halo
// exchanges for the spatial cuts of a convolution.
#include "compile/spmd/partitioner.h"

#include <algorithm>
#include <cstring>

#include "compile/spmd/tile_ops.h"

namespace kiln::compile::spmd {

StatusOr<bool> Partitioner::RunDotOnTiles(Operation& op, OpList& out) {
  if (op.name() != "stablehlo.dot_general" || op.num_operands() != 2) {
    return false;
  }
  Attribute numbers = op.GetAttr("dot_dimension_numbers");
  if (!numbers.is(AttrKind::kDotDimensionNumbers)) return false;
  const ir::DotDimensionNumbers& dot = numbers.dot();
  const Type& lhs_type = GlobalType(op.operand(0));
  const Type& rhs_type = GlobalType(op.operand(1));
  ContractionDims dims;
  dims.lhs_batch = dot.lhs_batching_dimensions;
  dims.rhs_batch = dot.rhs_batching_dimensions;
  dims.lhs_contracting = dot.lhs_contracting_dimensions;
  dims.rhs_contracting = dot.rhs_contracting_dimensions;
  // The result: batch dims, lhs free dims, rhs free dims.
  for (int64_t i : dot.lhs_batching_dimensions) {
    dims.result_from.push_back({0, i});
  }
  for (int64_t i : DotFreeDims(lhs_type.rank(), dot.lhs_batching_dimensions,
                               dot.lhs_contracting_dimensions)) {
    dims.result_from.push_back({0, i});
  }
  for (int64_t i : DotFreeDims(rhs_type.rank(), dot.rhs_batching_dimensions,
                               dot.rhs_contracting_dimensions)) {
    dims.result_from.push_back({1, i});
  }
  return RunContractionOnTiles(op, out, dims);
}

StatusOr<bool> Partitioner::RunConvolutionOnTiles(Operation& op, OpList& out) {
  if (op.name() != "stablehlo.convolution" || op.num_operands() != 2) {
    return false;
  }
  Attribute numbers = op.GetAttr("dimension_numbers");
  if (!numbers.is(AttrKind::kConvDimensionNumbers)) return false;
  const ir::ConvDimensionNumbers& conv = numbers.conv();
  auto count = [&](std::string_view name) -> int64_t {
    Attribute attr = op.GetAttr(name);
    return attr.is(AttrKind::kInteger) ? attr.int_value() : 1;
  };
  if (count("batch_group_count") != 1) return false;
  const bool grouped = count("feature_group_count") != 1;
  const size_t spatial = conv.input_spatial_dimensions.size();
  if (conv.kernel_spatial_dimensions.size() != spatial ||
      conv.output_spatial_dimensions.size() != spatial ||
      op.result(0)->type().rank() != static_cast<int64_t>(spatial) + 2) {
    return false;
  }
  ContractionDims dims;
  dims.lhs_whole = conv.input_spatial_dimensions;
  dims.rhs_whole = conv.kernel_spatial_dimensions;
  if (grouped) {
    dims.lhs_whole.push_back(conv.input_feature_dimension);
    dims.rhs_whole.push_back(conv.kernel_input_feature_dimension);
    dims.rhs_whole.push_back(conv.kernel_output_feature_dimension);
  } else {
    dims.lhs_contracting = {conv.input_feature_dimension};
    dims.rhs_contracting = {conv.kernel_input_feature_dimension};
  }
  dims.result_from.assign(spatial + 2, {-1, 0});
  dims.result_from[conv.output_batch_dimension] = {0,
                                                   conv.input_batch_dimension};
  dims.result_from[conv.output_feature_dimension] = {
      1, conv.kernel_output_feature_dimension};
  std::vector<int64_t> padding;
  if (!ConvolutionHalos(op, conv, dims, padding)) return false;
  ASSIGN_OR_RETURN(bool on_tiles, RunContractionOnTiles(op, out, dims));
  if (on_tiles && !dims.lhs_halos.empty()) {
    // The halos are the padding inside the value; what is left is the
    // padding of the first and last tiles, which the halos' zeros give.
    const Type pairs_type = Type::Tensor({static_cast<int64_t>(spatial), 2},
                                         Type::Element(ir::ElementType::kI64));
    std::string bytes(padding.size() * sizeof(int64_t), '\0');
    std::memcpy(bytes.data(), padding.data(), bytes.size());
    op.SetAttr("padding", Attribute::DenseElements(pairs_type, std::move(bytes),
                                                   /*splat=*/false));
  }
  return on_tiles;
}

bool Partitioner::ConvolutionHalos(const Operation& op,
                                   const ir::ConvDimensionNumbers& conv,
                                   ContractionDims& dims,
                                   std::vector<int64_t>& padding) {
  const size_t spatial = conv.input_spatial_dimensions.size();
  auto ints = [&](std::string_view name, int64_t fallback,
                  size_t count) -> std::optional<std::vector<int64_t>> {
    Attribute attr = op.GetAttr(name);
    if (!attr) return std::vector<int64_t>(count, fallback);
    std::optional<std::vector<int64_t>> values = attr.AsIntVector();
    if (!values || values->size() != count) return std::nullopt;
    return values;
  };
  auto strides = ints("window_strides", 1, spatial);
  auto lhs_dilation = ints("lhs_dilation", 1, spatial);
  auto rhs_dilation = ints("rhs_dilation", 1, spatial);
  auto pads = ints("padding", 0, 2 * spatial);
  auto reversal = ints("window_reversal", 0, spatial);
  if (!strides || !lhs_dilation || !rhs_dilation || !pads || !reversal) {
    return false;
  }
  padding = *pads;
  auto it = tiled_.find(op.operand(0));
  if (it == tiled_.end()) return true;
  const TileLayout& layout = it->second.layout;
  const Type& input = it->second.global_type;
  const Type& output = op.result(0)->type();
  const Type& kernel = GlobalType(op.operand(1));
  if (!input.HasStaticShape() || !output.HasStaticShape() ||
      !kernel.HasStaticShape()) {
    return true;
  }
  auto kernel_it = tiled_.find(op.operand(1));
  for (size_t j = 0; j < spatial; ++j) {
    const int64_t in_dim = conv.input_spatial_dimensions[j];
    const int64_t k_dim = conv.kernel_spatial_dimensions[j];
    const int64_t tiles = layout.tiles[in_dim];
    if (tiles <= 1) continue;
    const int64_t kernel_tiles =
        kernel_it == tiled_.end() ? 1 : kernel_it->second.layout.tiles[k_dim];
    const int64_t n = input.shape()[in_dim];
    const int64_t o = output.shape()[conv.output_spatial_dimensions[j]];
    const int64_t k = kernel.shape()[k_dim];
    // The high padding needs no check: the last tile reads no further
    // than the whole convolution does, and zeros stand for what lies
    // past the value.
    const int64_t stride = (*strides)[j], lo = padding[2 * j],
                  dilation = (*rhs_dilation)[j];
    const int64_t base = (*lhs_dilation)[j];
    if ((*reversal)[j] != 0 || stride < 1 || dilation < 1 || base < 1 ||
        n % tiles != 0 || lo < 0) {
      continue;
    }
    const int64_t tile = n / tiles;
    const int64_t window = (k - 1) * dilation + 1;
    int64_t new_lo = 0, new_hi = 0;
    if (kernel_tiles == 1) {
      // The output keeps the cut. In the input dilated by `base`, tile
      // t spans tile * base positions from t * tile * base, and output
      // tile t reads from lo before that to r past it, r = window -
      // stride - lo. Whole elements of the neighbours cover that; what
      // is left is holes (zeros), padded: `left` elements with lo %
      // base positions before them, `right` elements covering r with
      // the holes up to r after them. A negative r (a stride longer
      // than the window) leaves too few positions at the tile's end for
      // another output: the convolution's rounding drops them.
      if (o % tiles != 0 || stride * (o / tiles) != tile * base) continue;
      const int64_t left = lo / base;
      const int64_t r = window - stride - lo;
      const int64_t right = r > 0 ? (r - 1) / base + 1 : 0;
      new_lo = lo % base;
      new_hi = r > 0 ? r - 1 - (right - 1) * base
                     : std::max<int64_t>(0, base - 1 + r);
      const int64_t length =
          new_lo + (left + tile + right - 1) * base + 1 + new_hi;
      if (left > tile || right > tile || length < window ||
          (length - window) / stride + 1 != o / tiles) {
        continue;
      }
      dims.result_from[conv.output_spatial_dimensions[j]] = {0, in_dim};
      dims.lhs_halos.push_back({in_dim, left, right});
    } else if (kernel_tiles == tiles && base == 1) {
      // The window itself is cut alike (JAX's weight gradient: the
      // output's gradient as the kernel): every device's kernel tile
      // of m elements meets the input from its own tile's start - lo
      // when m * dilation is the input tile, and the devices' partial
      // results are added. The whole output reaches (o - 1) * stride + 1
      // - dilation - lo past each tile.
      const int64_t right = (o - 1) * stride + 1 - dilation - lo;
      if (k % tiles != 0 || (k / tiles) * dilation != tile || lo > tile ||
          right < 0 || right > tile) {
        continue;
      }
      dims.rhs_whole.erase(
          std::find(dims.rhs_whole.begin(), dims.rhs_whole.end(), k_dim));
      dims.lhs_contracting.push_back(in_dim);
      dims.rhs_contracting.push_back(k_dim);
      dims.lhs_halos.push_back({in_dim, lo, right});
    } else {
      continue;
    }
    dims.lhs_whole.erase(
        std::find(dims.lhs_whole.begin(), dims.lhs_whole.end(), in_dim));
    padding[2 * j] = new_lo;
    padding[2 * j + 1] = new_hi;
  }
  return true;
}

StatusOr<bool> Partitioner::RunContractionOnTiles(Operation& op, OpList& out,
                                                  const ContractionDims& dims) {
  Value* lhs = op.operand(0);
  Value* rhs = op.operand(1);
  auto lhs_it = tiled_.find(lhs);
  auto rhs_it = tiled_.find(rhs);
  if (lhs_it == tiled_.end() && rhs_it == tiled_.end()) return false;
  const Type result_type = op.result(0)->type();
  if (!result_type.IsTensor() || !result_type.HasStaticShape()) return false;
  if (static_cast<int64_t>(dims.result_from.size()) != result_type.rank()) {
    return false;
  }
  const Type& lhs_type = GlobalType(lhs);
  const Type& rhs_type = GlobalType(rhs);
  if (!lhs_type.HasStaticShape() || !rhs_type.HasStaticShape()) return false;
  const size_t devices = target_.num_partitions;
  TileLayout lhs_layout = lhs_it != tiled_.end() ? lhs_it->second.layout
                                                 : WholeLayout(lhs_type.rank());
  TileLayout rhs_layout = rhs_it != tiled_.end() ? rhs_it->second.layout
                                                 : WholeLayout(rhs_type.rank());
  // A whole operand takes the other's cuts of the paired dimensions.
  auto pair_cuts = [&](TileLayout& to, const TileLayout& from,
                       const std::vector<int64_t>& to_dims,
                       const std::vector<int64_t>& from_dims) {
    for (size_t k = 0; k < to_dims.size(); ++k) {
      to.tiles[to_dims[k]] = from.tiles[from_dims[k]];
      for (size_t d = 0; d < devices; ++d) {
        to.tile_of_device[d][to_dims[k]] = from.tile_of_device[d][from_dims[k]];
      }
    }
  };
  if (lhs_it == tiled_.end()) {
    pair_cuts(lhs_layout, rhs_layout, dims.lhs_batch, dims.rhs_batch);
    pair_cuts(lhs_layout, rhs_layout, dims.lhs_contracting,
              dims.rhs_contracting);
  } else if (rhs_it == tiled_.end()) {
    pair_cuts(rhs_layout, lhs_layout, dims.rhs_batch, dims.lhs_batch);
    pair_cuts(rhs_layout, lhs_layout, dims.rhs_contracting,
              dims.lhs_contracting);
  }
  // Paired dimensions must be cut alike on every device.
  auto paired_alike = [&](const std::vector<int64_t>& a,
                          const std::vector<int64_t>& b) {
    for (size_t k = 0; k < a.size(); ++k) {
      if (lhs_layout.tiles[a[k]] != rhs_layout.tiles[b[k]]) return false;
      for (size_t d = 0; d < devices; ++d) {
        if (lhs_layout.tile_of_device[d][a[k]] !=
            rhs_layout.tile_of_device[d][b[k]]) {
          return false;
        }
      }
    }
    return true;
  };
  if (!paired_alike(dims.lhs_batch, dims.rhs_batch) ||
      !paired_alike(dims.lhs_contracting, dims.rhs_contracting)) {
    return false;
  }
  for (int64_t i : dims.lhs_whole) {
    if (lhs_layout.tiles[i] != 1) return false;
  }
  for (int64_t i : dims.rhs_whole) {
    if (rhs_layout.tiles[i] != 1) return false;
  }
  const TileLayout* operand_layouts[] = {&lhs_layout, &rhs_layout};
  TileLayout layout;
  layout.tile_of_device.resize(devices);
  std::vector<std::vector<int64_t>> group_key(devices), copy_key(devices);
  for (const auto& [operand, dim] : dims.result_from) {
    layout.tiles.push_back(operand < 0 ? 1
                                       : operand_layouts[operand]->tiles[dim]);
  }
  bool partial = false;
  for (int64_t i : dims.lhs_contracting) {
    partial |= lhs_layout.tiles[i] > 1;
  }
  for (size_t d = 0; d < devices; ++d) {
    std::vector<int64_t>& coords = layout.tile_of_device[d];
    for (const auto& [operand, dim] : dims.result_from) {
      coords.push_back(
          operand < 0 ? 0 : operand_layouts[operand]->tile_of_device[d][dim]);
    }
    std::vector<int64_t> contracting;
    for (int64_t i : dims.lhs_contracting) {
      contracting.push_back(lhs_layout.tile_of_device[d][i]);
    }
    // Devices that differ only in their contracting tiles sum together.
    group_key[d] = coords;
    group_key[d].push_back(lhs_layout.copy_of_device[d]);
    group_key[d].push_back(rhs_layout.copy_of_device[d]);
    copy_key[d] = {lhs_layout.copy_of_device[d], rhs_layout.copy_of_device[d]};
    copy_key[d].insert(copy_key[d].end(), contracting.begin(),
                       contracting.end());
  }
  if (!RenumberCopies(layout, copy_key)) return false;
  if (partial) {
    // Every group must hold each contracting tile once.
    std::map<std::vector<int64_t>, int64_t> members;
    int64_t contracting_tiles = 1;
    for (int64_t i : dims.lhs_contracting) {
      contracting_tiles *= lhs_layout.tiles[i];
    }
    for (const auto& key : group_key) ++members[key];
    for (const auto& [key, count] : members) {
      if (count != contracting_tiles) return false;
    }
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                   TileShape(result_type, layout, op.Describe()));
  ASSIGN_OR_RETURN(Value * lhs_local,
                   TileOf(lhs, lhs_layout, out, op.loc(), op.Describe()));
  for (const ContractionDims::Halo& halo : dims.lhs_halos) {
    TileOps ops(out, op.loc(), target_, next_channel_);
    lhs_local =
        ops.WithHalo(lhs_local, lhs_layout, static_cast<size_t>(halo.dim),
                     halo.left, halo.right);
    if (lhs_local == nullptr) {
      return InternalError(op.Describe(), ": no halo exchange along dimension ",
                           halo.dim);
    }
  }
  ASSIGN_OR_RETURN(Value * rhs_local,
                   TileOf(rhs, rhs_layout, out, op.loc(), op.Describe()));
  op.SetOperand(0, lhs_local);
  op.SetOperand(1, rhs_local);
  op.result(0)->set_type(result_type.WithShape(tile));
  pending_tiled_ = Tiled{nullptr, layout, result_type, nullptr};
  pending_combine_.clear();
  if (partial) {
    pending_combine_ = "stablehlo.add";
    pending_group_key_ = std::move(group_key);
  }
  return true;
}

}  // namespace kiln::compile::spmd
