#include "tools/kiln/run_through_client.h"

#include <cstdio>

#include "base/file.h"
#include "base/strings.h"
#include "exec/kernels/element.h"
#include "kiln/pjrt_computation_client.h"
#include "tools/kiln/plugin_choice.h"

namespace kiln::cli {
namespace {

using client::ComputationPtr;
using client::DataPtr;
using client::Literal;
using client::PjrtComputationClient;
using client::PjrtComputationClientOptions;
using client::TensorSource;

// Kiln's IR element type and PJRT's are matched by their StableHLO names.
StatusOr<PJRT_Buffer_Type> ToPjrtType(ir::ElementType type) {
  auto pjrt = client::ParseElementType(ir::ElementTypeName(type));
  if (!pjrt) {
    return InvalidArgumentError("element type ", ir::ElementTypeName(type),
                                " has no PJRT buffer type");
  }
  return *pjrt;
}

StatusOr<ir::ElementType> ToIrType(PJRT_Buffer_Type type) {
  auto ir_type = ir::ParseElementTypeName(client::ElementTypeName(type));
  if (!ir_type) {
    return InvalidArgumentError("PJRT buffer type ",
                                client::ElementTypeName(type),
                                " has no Kiln element type");
  }
  return *ir_type;
}

// "tensor<2x2xf32> [[1, 2], [3, 4]]" (long arrays are elided).
std::string FormatLiteral(const NpyArray& array) {
  constexpr int64_t kMaxShown = 256;
  const exec::ArrayShape& shape = array.shape;
  const auto* data = reinterpret_cast<const std::byte*>(array.data.data());
  std::string out = shape.ToString() + " ";
  int64_t count = shape.num_elements();
  std::vector<int64_t> strides = shape.Strides();
  for (int64_t i = 0; i < count && i < kMaxShown; ++i) {
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (i % (strides[d] * shape.dims[d]) == 0) out += "[";
    }
    if (ir::IsComplex(shape.type)) {
      exec::c128 v = exec::LoadComplex(shape.type, data, i);
      StrAppend(out, "(", v.real(), ", ", v.imag(), ")");
    } else if (ir::IsFloat(shape.type)) {
      char text[40];
      std::snprintf(text, sizeof(text), "%.8g",
                    exec::LoadDouble(shape.type, data, i));
      out += text;
    } else if (ir::IsBool(shape.type)) {
      out += exec::LoadInt(shape.type, data, i) ? "true" : "false";
    } else {
      StrAppend(out, exec::LoadInt(shape.type, data, i));
    }
    for (int64_t d = shape.rank() - 1; d >= 0; --d) {
      if ((i + 1) % (strides[d] * shape.dims[d]) != 0) break;
      out += "]";
    }
    if (i + 1 < count) out += ", ";
  }
  if (count > kMaxShown) StrAppend(out, "... (", count, " elements)");
  return out;
}

Status Run(const ClientRunRequest& request) {
  PjrtComputationClientOptions options;
  ASSIGN_OR_RETURN(options.plugin_path,
                   ChoosePlugin(request.plugin, request.device));
  ASSIGN_OR_RETURN(std::unique_ptr<PjrtComputationClient> client,
                   PjrtComputationClient::Create(std::move(options)));
  std::string device =
      request.device ? *request.device : client->GetDefaultDevice();

  std::vector<TensorSource> sources;
  for (const NpyArray& input : request.inputs) {
    ASSIGN_OR_RETURN(PJRT_Buffer_Type type, ToPjrtType(input.shape.type));
    sources.push_back(
        {client::Shape(type, input.shape.dims), input.data.data(), device});
  }
  ASSIGN_OR_RETURN(std::vector<DataPtr> arguments,
                   client->TransferToDevice(sources));
  std::vector<client::CompileInstance> instances(1);
  instances[0].program = request.program;
  instances[0].name = request.program_path;
  instances[0].compilation_device = device;
  ASSIGN_OR_RETURN(std::vector<ComputationPtr> computations,
                   client->Compile(std::move(instances)));
  ASSIGN_OR_RETURN(
      std::vector<DataPtr> outputs,
      client->ExecuteComputation(*computations[0], arguments, device));
  ASSIGN_OR_RETURN(std::vector<Literal> literals,
                   client->TransferFromDevice(outputs));
  for (size_t i = 0; i < literals.size(); ++i) {
    ASSIGN_OR_RETURN(ir::ElementType type,
                     ToIrType(literals[i].shape.element_type));
    NpyArray array{
        exec::ArrayShape{type, literals[i].shape.dimensions},
        std::string(literals[i].bytes.begin(), literals[i].bytes.end())};
    if (request.outputs_dir) {
      std::string file = StrCat(*request.outputs_dir, "/output", i, ".npy");
      RETURN_IF_ERROR(WriteFile(file, WriteNpy(array)));
      std::printf("%s\n", file.c_str());
    } else {
      std::printf("%s\n", FormatLiteral(array).c_str());
    }
  }
  if (request.print_metrics) {
    std::printf("\n%s", client->metrics().Report().c_str());
  }
  return OkStatus();
}

}  // namespace

int RunThroughClient(const ClientRunRequest& request) {
  if (!request.plugin && !request.device) {
    std::fprintf(stderr, "kiln run: give --plugin PATH or --device NAME\n");
    return 2;
  }
  Status status = Run(request);
  if (!status.ok()) {
    std::fprintf(stderr, "kiln run: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace kiln::cli
