#loc1 = loc("self")
module @jit__multi_slice attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x16xf32> loc("self")) -> (tensor<2x16xf32> {jax.result_info = "result[0]"}, tensor<2x16xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.slice %arg0 [0:2, 0:16] : (tensor<4x16xf32>) -> tensor<2x16xf32> loc(#loc4)
    %1 = stablehlo.slice %arg0 [2:4, 0:16] : (tensor<4x16xf32>) -> tensor<2x16xf32> loc(#loc4)
    return %0, %1 : tensor<2x16xf32>, tensor<2x16xf32> loc(#loc5)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("corpus/gen/jax_device_count_child.py":26:22 to :75)
#loc3 = loc("<module>"(#loc2))
#loc4 = loc("jit(_multi_slice)/slice"(#loc3))
#loc5 = loc("jit(_multi_slice)"(#loc3))
