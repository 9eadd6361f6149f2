#include "compile/sharding.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>

#include "base/strings.h"

namespace kiln::compile {
namespace {

// A small reader over the text of a Shardy attribute or a GSPMD sharding
// string: skips spaces, reads punctuation, quoted names, words and integers.
class Reader {
 public:
  Reader(std::string_view text, std::string_view what)
      : text_(text), what_(what) {}

  void SkipSpaces() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  bool AtEnd() {
    SkipSpaces();
    return pos_ >= text_.size();
  }
  char Peek() {
    SkipSpaces();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool TryConsume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool TryConsume(std::string_view word) {
    SkipSpaces();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  Status Expect(char c) {
    if (TryConsume(c)) return OkStatus();
    return Error(StrCat("expected '", std::string(1, c), "'"));
  }
  StatusOr<std::string> QuotedName() {
    RETURN_IF_ERROR(Expect('"'));
    size_t end = text_.find('"', pos_);
    if (end == std::string_view::npos) return Error("unterminated name");
    std::string name(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return name;
  }
  // Letters, digits, '_', '.', '$' and '-' (symbol names, keywords).
  std::string Word() {
    SkipSpaces();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '_' || text_[pos_] == '.' || text_[pos_] == '$' ||
            text_[pos_] == '-')) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  StatusOr<int64_t> Integer() {
    SkipSpaces();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() &&
           std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
    std::optional<int64_t> value =
        ParseInt64(text_.substr(start, pos_ - start));
    if (!value) {
      pos_ = start;
      return Error("expected an integer");
    }
    return *value;
  }
  // `[1, 2, 3]`.
  StatusOr<std::vector<int64_t>> IntegerList() {
    RETURN_IF_ERROR(Expect('['));
    std::vector<int64_t> values;
    if (TryConsume(']')) return values;
    do {
      ASSIGN_OR_RETURN(int64_t value, Integer());
      values.push_back(value);
    } while (TryConsume(','));
    RETURN_IF_ERROR(Expect(']'));
    return values;
  }
  // Skips to just past the first occurrence of `c` (or to the end).
  void SkipPast(char c) {
    size_t at = text_.find(c, pos_);
    pos_ = at == std::string_view::npos ? text_.size() : at + 1;
  }

  Status Error(std::string_view message) const {
    return InvalidArgumentError(what_, " \"", std::string(text_),
                                "\": ", message, " at offset ", pos_);
  }

 private:
  std::string_view text_;
  std::string_view what_;
  size_t pos_ = 0;
};

// Drops a leading `#dialect.name` so that `#sdy.mesh<...>` and `<...>` read
// alike.
std::string_view StripAttrPrefix(std::string_view text, std::string_view name) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text[0]))) {
    text.remove_prefix(1);
  }
  if (text.substr(0, name.size()) == name) text.remove_prefix(name.size());
  return text;
}

// `<["x"=4, "y"=2], device_ids=[...]>`, the reader just before `<`.
StatusOr<Mesh> ReadMesh(Reader& reader) {
  Mesh mesh;
  RETURN_IF_ERROR(reader.Expect('<'));
  RETURN_IF_ERROR(reader.Expect('['));
  if (!reader.TryConsume(']')) {
    do {
      ASSIGN_OR_RETURN(std::string name, reader.QuotedName());
      RETURN_IF_ERROR(reader.Expect('='));
      ASSIGN_OR_RETURN(int64_t size, reader.Integer());
      if (size < 1) return reader.Error("mesh axis sizes must be positive");
      mesh.axis_names.push_back(std::move(name));
      mesh.axis_sizes.push_back(size);
    } while (reader.TryConsume(','));
    RETURN_IF_ERROR(reader.Expect(']'));
  }
  if (reader.TryConsume(',')) {
    if (reader.Word() != "device_ids")
      return reader.Error("expected device_ids");
    RETURN_IF_ERROR(reader.Expect('='));
    ASSIGN_OR_RETURN(mesh.device_ids, reader.IntegerList());
    if (static_cast<int64_t>(mesh.device_ids.size()) != mesh.size()) {
      return reader.Error(StrCat("device_ids has ", mesh.device_ids.size(),
                                 " entries for a mesh of ", mesh.size()));
    }
  }
  RETURN_IF_ERROR(reader.Expect('>'));
  return mesh;
}

// `"x"` or `"x":(2)4`.
StatusOr<AxisRef> ReadAxisRef(Reader& reader) {
  AxisRef axis;
  ASSIGN_OR_RETURN(axis.name, reader.QuotedName());
  if (reader.TryConsume(':')) {
    RETURN_IF_ERROR(reader.Expect('('));
    ASSIGN_OR_RETURN(axis.pre_size, reader.Integer());
    RETURN_IF_ERROR(reader.Expect(')'));
    ASSIGN_OR_RETURN(axis.size, reader.Integer());
    if (axis.pre_size < 1 || axis.size < 1) {
      return reader.Error("sub-axis sizes must be positive");
    }
  }
  return axis;
}

// `{"x", "y":(1)2, ?}`: the axes of one dimension (`?` marks it open, which
// changes nothing once the program is partitioned).
StatusOr<std::vector<AxisRef>> ReadAxisList(Reader& reader) {
  std::vector<AxisRef> axes;
  RETURN_IF_ERROR(reader.Expect('{'));
  while (!reader.TryConsume('}')) {
    if (reader.TryConsume('?')) {
    } else {
      ASSIGN_OR_RETURN(AxisRef axis, ReadAxisRef(reader));
      axes.push_back(std::move(axis));
    }
    if (!reader.TryConsume(',') && reader.Peek() != '}') {
      return reader.Error("expected ',' or '}'");
    }
  }
  return axes;
}

// `<@mesh, [{"x"}, {}], replicated={"y"}, unreduced={"z"}>`.
StatusOr<TensorSharding> ReadTensorSharding(Reader& reader) {
  TensorSharding sharding;
  RETURN_IF_ERROR(reader.Expect('<'));
  if (reader.TryConsume('@')) {
    sharding.mesh_name = reader.Word();
  } else {
    reader.TryConsume("#sdy.mesh");
    reader.TryConsume("mesh");
    ASSIGN_OR_RETURN(Mesh mesh, ReadMesh(reader));
    sharding.inline_mesh = std::move(mesh);
  }
  RETURN_IF_ERROR(reader.Expect(','));
  RETURN_IF_ERROR(reader.Expect('['));
  if (!reader.TryConsume(']')) {
    do {
      ASSIGN_OR_RETURN(std::vector<AxisRef> axes, ReadAxisList(reader));
      sharding.dims.push_back(std::move(axes));
      // A priority (`p0`) after a dimension only steers propagation.
      if (reader.Peek() == 'p') reader.Word();
    } while (reader.TryConsume(','));
    RETURN_IF_ERROR(reader.Expect(']'));
  }
  while (reader.TryConsume(',')) {
    std::string key = reader.Word();
    RETURN_IF_ERROR(reader.Expect('='));
    ASSIGN_OR_RETURN(std::vector<AxisRef> axes, ReadAxisList(reader));
    if (key == "unreduced") {
      sharding.unreduced = std::move(axes);
    } else if (key != "replicated") {
      return reader.Error(StrCat("unknown sharding field '", key, "'"));
    }
  }
  RETURN_IF_ERROR(reader.Expect('>'));
  return sharding;
}

// The coordinate of mesh point `point` (row-major) along each axis.
std::vector<int64_t> MeshCoordinates(const Mesh& mesh, int64_t point) {
  std::vector<int64_t> coords(mesh.axis_sizes.size());
  for (int axis = static_cast<int>(mesh.axis_sizes.size()) - 1; axis >= 0;
       --axis) {
    coords[axis] = point % mesh.axis_sizes[axis];
    point /= mesh.axis_sizes[axis];
  }
  return coords;
}

// Fills copy_of_device: devices holding the same tile are numbered 0, 1, ...
// in the order of `copy_key` (a per-device key that tells copies apart the
// same way across tiles), so that copy c of every tile forms one group.
Status NumberCopies(TileLayout& layout,
                    const std::vector<std::vector<int64_t>>& copy_key) {
  const size_t devices = layout.tile_of_device.size();
  std::map<std::vector<int64_t>, int64_t> copy_numbers;
  for (size_t d = 0; d < devices; ++d) copy_numbers[copy_key[d]] = 0;
  int64_t next = 0;
  for (auto& [key, number] : copy_numbers) number = next++;
  layout.copy_of_device.resize(devices);
  std::set<std::pair<std::vector<int64_t>, int64_t>> seen;
  for (size_t d = 0; d < devices; ++d) {
    layout.copy_of_device[d] = copy_numbers[copy_key[d]];
    if (!seen.insert({layout.tile_of_device[d], layout.copy_of_device[d]})
             .second) {
      return InternalError("two devices hold the same copy of one tile");
    }
  }
  const int64_t tiles = layout.TileCount();
  if (tiles * next != static_cast<int64_t>(devices)) {
    return InvalidArgumentError("the sharding gives ", tiles, " tiles ", next,
                                " copies each on ", devices, " devices");
  }
  return OkStatus();
}

// Each device's index along the unreduced axes and the group of devices it
// sums with (those that differ from it only along them).
Status AddUnreduced(TileLayout& layout, const Mesh& mesh,
                    const std::vector<AxisRef>& unreduced) {
  const size_t devices = layout.tile_of_device.size();
  if (mesh.size() != static_cast<int64_t>(devices)) {
    return UnimplementedError("unreduced axes on a mesh of ", mesh.size(),
                              " devices in a program of ", devices);
  }
  std::vector<int64_t> ids = mesh.Devices();
  std::map<std::vector<int64_t>, int64_t> groups;
  layout.unreduced_index.assign(devices, 0);
  layout.unreduced_group.assign(devices, 0);
  for (int64_t point = 0; point < mesh.size(); ++point) {
    std::vector<int64_t> coords = MeshCoordinates(mesh, point);
    std::vector<int64_t> rest = coords;
    int64_t index = 0;
    for (const AxisRef& ref : unreduced) {
      int axis = mesh.AxisIndex(ref.name);
      if (axis < 0) {
        return InvalidArgumentError("unreduced axis \"", ref.name,
                                    "\" is not in the mesh");
      }
      const int64_t size = ref.size < 0 ? mesh.axis_sizes[axis] : ref.size;
      const int64_t digit = (coords[axis] / ref.pre_size) % size;
      index = index * size + digit;
      rest[axis] -= digit * ref.pre_size;
    }
    auto [it, inserted] =
        groups.emplace(rest, static_cast<int64_t>(groups.size()));
    layout.unreduced_index[ids[point]] = index;
    layout.unreduced_group[ids[point]] = it->second;
  }
  return OkStatus();
}

}  // namespace

int64_t Mesh::size() const {
  int64_t size = 1;
  for (int64_t axis : axis_sizes) size *= axis;
  return size;
}

int Mesh::AxisIndex(std::string_view name) const {
  for (size_t i = 0; i < axis_names.size(); ++i) {
    if (axis_names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int64_t> Mesh::Devices() const {
  if (!device_ids.empty()) return device_ids;
  std::vector<int64_t> devices(static_cast<size_t>(size()));
  std::iota(devices.begin(), devices.end(), 0);
  return devices;
}

int64_t TileLayout::LinearTile(size_t device) const {
  int64_t linear = 0;
  for (size_t k = 0; k < tiles.size(); ++k) {
    linear = linear * tiles[k] + tile_of_device[device][k];
  }
  return linear;
}

int64_t TileLayout::TileCount() const {
  int64_t count = 1;
  for (int64_t t : tiles) count *= t;
  return count;
}

StatusOr<Mesh> ParseMesh(std::string_view text) {
  Reader reader(StripAttrPrefix(text, "#sdy.mesh"), "mesh");
  ASSIGN_OR_RETURN(Mesh mesh, ReadMesh(reader));
  if (!reader.AtEnd()) return reader.Error("unexpected text after the mesh");
  return mesh;
}

StatusOr<TensorSharding> ParseTensorSharding(std::string_view text) {
  Reader reader(StripAttrPrefix(text, "#sdy.sharding"), "sharding");
  ASSIGN_OR_RETURN(TensorSharding sharding, ReadTensorSharding(reader));
  if (!reader.AtEnd())
    return reader.Error("unexpected text after the sharding");
  return sharding;
}

StatusOr<std::vector<TensorSharding>> ParseShardingPerValue(
    std::string_view text) {
  Reader reader(StripAttrPrefix(text, "#sdy.sharding_per_value"),
                "sharding list");
  std::vector<TensorSharding> shardings;
  RETURN_IF_ERROR(reader.Expect('<'));
  RETURN_IF_ERROR(reader.Expect('['));
  if (!reader.TryConsume(']')) {
    do {
      ASSIGN_OR_RETURN(TensorSharding sharding, ReadTensorSharding(reader));
      shardings.push_back(std::move(sharding));
    } while (reader.TryConsume(','));
    RETURN_IF_ERROR(reader.Expect(']'));
  }
  RETURN_IF_ERROR(reader.Expect('>'));
  return shardings;
}

StatusOr<std::vector<std::string>> ParseManualAxes(std::string_view text) {
  // `#sdy<manual_axes{"x"}>` as bytecode gives it, `{"x"}` as text does.
  Reader reader(text, "manual axes");
  reader.SkipPast('{');
  std::vector<std::string> axes;
  while (!reader.TryConsume('}')) {
    ASSIGN_OR_RETURN(std::string name, reader.QuotedName());
    axes.push_back(std::move(name));
    if (!reader.TryConsume(',') && reader.Peek() != '}') {
      return reader.Error("expected ',' or '}'");
    }
  }
  return axes;
}

StatusOr<std::map<std::string, Mesh>> ModuleMeshes(const ir::Module& module) {
  std::map<std::string, Mesh> meshes;
  for (const auto& op : module.body().operations()) {
    if (op->name() != "sdy.mesh") continue;
    ir::Attribute name = op->GetAttr("sym_name");
    ir::Attribute mesh = op->GetAttr("mesh");
    if (!name.is(ir::AttrKind::kString) || !mesh) {
      return InvalidArgumentError(op->Describe(),
                                  ": sdy.mesh needs sym_name and mesh");
    }
    ASSIGN_OR_RETURN(Mesh parsed, ParseMesh(mesh.ToString()));
    meshes[name.string_value()] = std::move(parsed);
  }
  return meshes;
}

StatusOr<TileLayout> LayoutOfShardy(const TensorSharding& sharding,
                                    const std::map<std::string, Mesh>& meshes,
                                    int64_t rank, int num_devices,
                                    const std::vector<std::string>* only_axes) {
  const Mesh* mesh = nullptr;
  if (sharding.inline_mesh) {
    mesh = &*sharding.inline_mesh;
  } else {
    auto it = meshes.find(sharding.mesh_name);
    if (it == meshes.end()) {
      return InvalidArgumentError("the sharding names mesh @",
                                  sharding.mesh_name,
                                  ", which the module does not declare");
    }
    mesh = &it->second;
  }
  if (static_cast<int64_t>(sharding.dims.size()) != rank) {
    return InvalidArgumentError("the sharding has ", sharding.dims.size(),
                                " dimensions for a value of rank ", rank);
  }
  TileLayout layout;
  layout.tiles.assign(static_cast<size_t>(rank), 1);
  layout.tile_of_device.assign(static_cast<size_t>(num_devices),
                               std::vector<int64_t>(rank, 0));
  // A mesh of one device, or a maximal one (`<[], device_ids=[0]>`): every
  // device has the whole value.
  if (mesh->size() == 1) {
    layout.copy_of_device.resize(num_devices);
    std::iota(layout.copy_of_device.begin(), layout.copy_of_device.end(), 0);
    return layout;
  }
  if (mesh->size() != num_devices) {
    return UnimplementedError("a mesh of ", mesh->size(),
                              " devices in a program of ", num_devices,
                              " partitions");
  }
  auto used = [&](const std::string& name) {
    return only_axes == nullptr ||
           std::find(only_axes->begin(), only_axes->end(), name) !=
               only_axes->end();
  };
  // Per dimension, the (axis, pre, size) parts that cut it, major first.
  struct Part {
    int axis;
    int64_t pre;
    int64_t size;
  };
  std::vector<std::vector<Part>> parts(rank);
  std::set<int> whole_axes_used;
  for (int64_t dim = 0; dim < rank; ++dim) {
    for (const AxisRef& ref : sharding.dims[dim]) {
      int axis = mesh->AxisIndex(ref.name);
      if (axis < 0) {
        return InvalidArgumentError("the sharding names axis \"", ref.name,
                                    "\", which its mesh does not have");
      }
      if (!used(ref.name)) continue;
      int64_t axis_size = mesh->axis_sizes[axis];
      int64_t size = ref.size < 0 ? axis_size : ref.size;
      if (axis_size % (ref.pre_size * size) != 0) {
        return InvalidArgumentError(
            "sub-axis \"", ref.name, "\":(", ref.pre_size, ")", size,
            " does not divide the axis of size ", axis_size);
      }
      parts[dim].push_back({axis, ref.pre_size, size});
      layout.tiles[dim] *= size;
    }
  }
  // Each device's coordinates, its tile, and the coordinates that tell its
  // copies apart: what is left of every axis once the parts that cut the
  // value are taken out.
  std::vector<int64_t> devices = mesh->Devices();
  std::vector<std::vector<int64_t>> copy_key(num_devices);
  std::vector<bool> placed(num_devices, false);
  for (int64_t point = 0; point < mesh->size(); ++point) {
    int64_t device = devices[point];
    if (device < 0 || device >= num_devices || placed[device]) {
      return InvalidArgumentError(
          "the mesh's device ids are not a "
          "permutation of 0..",
          num_devices - 1);
    }
    placed[device] = true;
    std::vector<int64_t> coords = MeshCoordinates(*mesh, point);
    std::vector<int64_t> remaining = coords;
    std::vector<int64_t> taken_pre(coords.size(), 1);
    std::vector<int64_t>& tile = layout.tile_of_device[device];
    for (int64_t dim = 0; dim < rank; ++dim) {
      int64_t index = 0;
      for (const Part& part : parts[dim]) {
        index = index * part.size + (coords[part.axis] / part.pre) % part.size;
      }
      tile[dim] = index;
    }
    // The key: each axis's coordinate with the used parts' digits zeroed.
    for (size_t axis = 0; axis < coords.size(); ++axis) {
      int64_t key = coords[axis];
      for (int64_t dim = 0; dim < rank; ++dim) {
        for (const Part& part : parts[dim]) {
          if (part.axis != static_cast<int>(axis)) continue;
          int64_t digit = (coords[axis] / part.pre) % part.size;
          key -= digit * part.pre;
        }
      }
      copy_key[device].push_back(key);
    }
  }
  RETURN_IF_ERROR(NumberCopies(layout, copy_key));
  if (!sharding.unreduced.empty()) {
    RETURN_IF_ERROR(AddUnreduced(layout, *mesh, sharding.unreduced));
  }
  return layout;
}

StatusOr<TileLayout> LayoutOfGspmd(std::string_view text, int64_t rank,
                                   int num_devices) {
  Reader reader(text, "mhlo.sharding");
  TileLayout layout;
  layout.tiles.assign(static_cast<size_t>(rank), 1);
  layout.tile_of_device.assign(static_cast<size_t>(num_devices),
                               std::vector<int64_t>(rank, 0));
  auto replicated = [&]() -> StatusOr<TileLayout> {
    layout.copy_of_device.resize(num_devices);
    std::iota(layout.copy_of_device.begin(), layout.copy_of_device.end(), 0);
    return layout;
  };
  RETURN_IF_ERROR(reader.Expect('{'));
  if (reader.TryConsume("replicated") || reader.TryConsume("maximal")) {
    return replicated();
  }
  if (reader.TryConsume("manual")) {
    return UnimplementedError("the manual sharding \"", std::string(text),
                              "\" outside a manual computation");
  }
  if (!reader.TryConsume("devices")) {
    return reader.Error("expected devices=, replicated or maximal");
  }
  RETURN_IF_ERROR(reader.Expect('='));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, reader.IntegerList());
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 1) return reader.Error("tile counts must be positive");
    count *= d;
  }
  // The tile assignment: an explicit device list, or an iota reshaped and
  // transposed (`<=[2,4]T(1,0)`).
  std::vector<int64_t> assignment;
  if (reader.TryConsume("<=")) {
    ASSIGN_OR_RETURN(std::vector<int64_t> reshape, reader.IntegerList());
    std::vector<int64_t> perm(reshape.size());
    std::iota(perm.begin(), perm.end(), 0);
    if (reader.TryConsume('T')) {
      RETURN_IF_ERROR(reader.Expect('('));
      perm.clear();
      do {
        ASSIGN_OR_RETURN(int64_t p, reader.Integer());
        perm.push_back(p);
      } while (reader.TryConsume(','));
      RETURN_IF_ERROR(reader.Expect(')'));
    }
    int64_t total = 1;
    for (int64_t r : reshape) total *= r;
    if (total != count || perm.size() != reshape.size()) {
      return reader.Error("the iota tile assignment does not match the tiles");
    }
    // Element i of the transposed array: its coordinates in the permuted
    // shape map back to the iota's row-major index.
    std::vector<int64_t> permuted(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(reshape.size())) {
        return reader.Error("bad transpose permutation");
      }
      permuted[i] = reshape[perm[i]];
    }
    assignment.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      int64_t rest = i;
      std::vector<int64_t> coords(perm.size());
      for (int64_t k = static_cast<int64_t>(perm.size()) - 1; k >= 0; --k) {
        coords[k] = rest % permuted[k];
        rest /= permuted[k];
      }
      std::vector<int64_t> source(reshape.size());
      for (size_t k = 0; k < perm.size(); ++k) source[perm[k]] = coords[k];
      int64_t linear = 0;
      for (size_t k = 0; k < reshape.size(); ++k) {
        linear = linear * reshape[k] + source[k];
      }
      assignment[i] = linear;
    }
  } else {
    do {
      ASSIGN_OR_RETURN(int64_t device, reader.Integer());
      assignment.push_back(device);
    } while (reader.TryConsume(','));
  }
  if (static_cast<int64_t>(assignment.size()) != count) {
    return reader.Error(StrCat("the tile assignment has ", assignment.size(),
                               " devices for ", count, " tiles"));
  }
  // Trailing tile dimensions beyond the rank replicate (or are manual or
  // unreduced subgroups, which this layout cannot express).
  bool last_replicate = false;
  while (!reader.TryConsume('}')) {
    std::string word = reader.Word();
    if (word == "last_tile_dim_replicate") {
      last_replicate = true;
    } else if (word == "last_tile_dims") {
      RETURN_IF_ERROR(reader.Expect('='));
      RETURN_IF_ERROR(reader.Expect('{'));
      do {
        std::string kind = reader.Word();
        if (kind != "replicated") {
          return UnimplementedError("the sharding \"", std::string(text),
                                    "\" has a ", kind, " subgroup");
        }
      } while (reader.TryConsume(','));
      RETURN_IF_ERROR(reader.Expect('}'));
      last_replicate = true;
    } else if (word.empty()) {
      // Metadata and the like: skip one character and go on.
      if (reader.AtEnd()) return reader.Error("unterminated sharding");
      reader.TryConsume(reader.Peek());
    }
  }
  const int64_t tile_dims = static_cast<int64_t>(dims.size());
  if (tile_dims != rank && !(last_replicate && tile_dims > rank)) {
    return InvalidArgumentError("the sharding \"", std::string(text), "\" has ",
                                tile_dims,
                                " tile dimensions for a value of rank ", rank);
  }
  if (count != num_devices) {
    return UnimplementedError("the sharding \"", std::string(text),
                              "\" places tiles on ", count, " of the ",
                              num_devices, " partitions");
  }
  for (int64_t dim = 0; dim < rank; ++dim) layout.tiles[dim] = dims[dim];
  std::vector<std::vector<int64_t>> copy_key(num_devices);
  std::vector<bool> placed(num_devices, false);
  for (int64_t i = 0; i < count; ++i) {
    int64_t device = assignment[i];
    if (device < 0 || device >= num_devices || placed[device]) {
      return InvalidArgumentError("the sharding \"", std::string(text),
                                  "\" does not place each partition once");
    }
    placed[device] = true;
    int64_t rest = i;
    std::vector<int64_t> coords(dims.size());
    for (int64_t k = tile_dims - 1; k >= 0; --k) {
      coords[k] = rest % dims[k];
      rest /= dims[k];
    }
    layout.tile_of_device[device].assign(coords.begin(), coords.begin() + rank);
    copy_key[device].assign(coords.begin() + rank, coords.end());
  }
  RETURN_IF_ERROR(NumberCopies(layout, copy_key));
  return layout;
}

namespace {

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void AppendPackedInts(std::string& out, int field,
                      const std::vector<int64_t>& values) {
  if (values.empty()) return;
  std::string packed;
  for (int64_t v : values) AppendVarint(packed, static_cast<uint64_t>(v));
  AppendVarint(out, (static_cast<uint64_t>(field) << 3) | 2);
  AppendVarint(out, packed.size());
  out += packed;
}

}  // namespace

std::string SerializeOpSharding(const TileLayout& layout) {
  // xla.OpSharding: type = 1 (REPLICATED 0, OTHER 3),
  // tile_assignment_dimensions = 3, tile_assignment_devices = 4,
  // replicate_on_last_tile_dim = 6.
  constexpr int kType = 1, kTileDims = 3, kTileDevices = 4, kReplicateLast = 6;
  std::string out;
  // Partial sums: UNREDUCED (6) when every device holds a partial value of
  // the whole. Otherwise trailing tile dimensions, as JAX writes them for a
  // NamedSharding: one of the replicated copies of each partial, when there
  // are any, then one of the partials (last_tile_dims, field 8, lists their
  // types in that order: REPLICATED 0, UNREDUCED 6).
  if (layout.HasUnreduced()) {
    const int64_t devices = static_cast<int64_t>(layout.tile_of_device.size());
    const int64_t tiles = layout.TileCount();
    int64_t partials = 0;
    for (int64_t index : layout.unreduced_index) {
      partials = std::max(partials, index + 1);
    }
    const int64_t copies = devices / (tiles * partials);
    if (tiles == 1 && copies == 1) {
      AppendVarint(out, kType << 3);
      AppendVarint(out, 6);
      return out;
    }
    // A device's copy is its rank by copy number among the devices with
    // its tile and its partial: copy numbers follow the mesh's row-major
    // order, and so do those ranks.
    std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> holders;
    for (int64_t d = 0; d < devices; ++d) {
      holders[{layout.LinearTile(d), layout.unreduced_index[d]}].push_back(d);
    }
    const bool regular =
        tiles * partials * copies == devices &&
        std::all_of(holders.begin(), holders.end(), [&](const auto& entry) {
          return static_cast<int64_t>(entry.second.size()) == copies;
        });
    if (regular) {
      std::vector<int64_t> assignment(static_cast<size_t>(devices), 0);
      for (auto& [key, group] : holders) {
        std::sort(group.begin(), group.end(), [&](int64_t a, int64_t b) {
          return layout.copy_of_device[a] < layout.copy_of_device[b];
        });
        for (size_t copy = 0; copy < group.size(); ++copy) {
          assignment[(key.first * copies + static_cast<int64_t>(copy)) *
                         partials +
                     key.second] = group[copy];
        }
      }
      std::vector<int64_t> dims = layout.tiles;
      std::vector<int64_t> subgroups;
      if (copies > 1) {
        dims.push_back(copies);
        subgroups.push_back(0);
      }
      dims.push_back(partials);
      subgroups.push_back(6);
      AppendVarint(out, kType << 3);
      AppendVarint(out, 3);
      AppendPackedInts(out, kTileDims, dims);
      AppendPackedInts(out, kTileDevices, assignment);
      AppendPackedInts(out, 8, subgroups);
      return out;
    }
  }
  if (layout.IsReplicated()) {
    AppendVarint(out, kType << 3);
    AppendVarint(out, 0);
    return out;
  }
  const int64_t tiles = layout.TileCount();
  const int64_t devices = static_cast<int64_t>(layout.tile_of_device.size());
  const int64_t copies = devices / tiles;
  std::vector<int64_t> dims = layout.tiles;
  if (copies > 1) dims.push_back(copies);
  // Devices in row-major order of (tile coordinates..., copy).
  std::vector<int64_t> assignment(static_cast<size_t>(devices), 0);
  for (int64_t d = 0; d < devices; ++d) {
    const int64_t linear = layout.LinearTile(d);
    assignment[linear * copies + layout.copy_of_device[d]] = d;
  }
  AppendVarint(out, kType << 3);
  AppendVarint(out, 3);
  AppendPackedInts(out, kTileDims, dims);
  AppendPackedInts(out, kTileDevices, assignment);
  if (copies > 1) {
    AppendVarint(out, kReplicateLast << 3);
    AppendVarint(out, 1);
  }
  return out;
}

}  // namespace kiln::compile
