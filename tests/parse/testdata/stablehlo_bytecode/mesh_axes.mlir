module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.all_reduce"(%arg0) <{replica_groups = #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes=[<name = "x", size = 2>, <name = "y", size = 4>], device_ids=dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>>, axes = [#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>, #stablehlo.axis_ref<name = "x">]>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %3 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %3 : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.all_gather"(%0) <{all_gather_dim = 0 : i64, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes=[<name = "x", size = 2>]>, axes = [#stablehlo.axis_ref<name = "x">]>}> : (tensor<4xf32>) -> tensor<8xf32>
    %2 = stablehlo.slice %1 [0:4] : (tensor<8xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}
