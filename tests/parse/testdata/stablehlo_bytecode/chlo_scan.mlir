module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xi32>, %arg2: tensor<f32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<f32>) {
    %0:3 = chlo.scan(%arg0, %arg1) inits (%arg2) dimension=0  attributes {is_reverse = true} {
    ^bb0(%input: tensor<f32>, %input_0: tensor<i32>, %carry: tensor<f32>):
      %1 = stablehlo.add %input, %carry : tensor<f32>
      stablehlo.return %1, %input_0, %1 : tensor<f32>, tensor<i32>, tensor<f32>
    } : (tensor<4xf32>, tensor<4xi32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<f32>)
    return %0#0, %0#1, %0#2 : tensor<4xf32>, tensor<4xi32>, tensor<f32>
  }
}
