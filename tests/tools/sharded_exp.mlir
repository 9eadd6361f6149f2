func.func @main(%a: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]0,1}"}, %b: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]0,1}"}) -> (tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]0,1}"}) {
  %0 = stablehlo.add %a, %b : tensor<8x4xf32>
  %1 = stablehlo.exponential %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
