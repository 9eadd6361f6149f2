module {
  func.func @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
    %0 = stablehlo.custom_call @foo(%arg0) {api_version = 2 : i32, backend_config = "opaque config", has_side_effect = true, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.custom_call @bar(%arg0) {api_version = 4 : i32, backend_config = {alpha = 1.500000e+00 : f32, mode = "fast"}, called_computations = [@helper]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    return %0, %1 : tensor<2x3xf32>, tensor<3x2xf32>
  }
  func.func private @helper(%arg0: tensor<f32>) -> tensor<f32> {
    return %arg0 : tensor<f32>
  }
}
