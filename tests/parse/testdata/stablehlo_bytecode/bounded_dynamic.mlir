module {
  func.func @main(%arg0: tensor<?xf32, #stablehlo.bounds<4>>, %arg1: tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>> {
    %0 = stablehlo.abs %arg0 : tensor<?xf32, #stablehlo.bounds<4>>
    %1 = stablehlo.set_dimension_size %0, %arg1, dim = 0 : (tensor<?xf32, #stablehlo.bounds<4>>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>
    %2 = stablehlo.get_dimension_size %1, dim = 0 : (tensor<?xf32, #stablehlo.bounds<4>>) -> tensor<i32>
    return %1 : tensor<?xf32, #stablehlo.bounds<4>>
  }
}
