#loc1 = loc("args[0]")
module @jit_broadcast_in_dim attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f32> loc("args[0]")) -> (tensor<4x16xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<f32>) -> tensor<4x16xf32> loc(#loc4)
    return %0 : tensor<4x16xf32> loc(#loc5)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("corpus/gen/jax_device_count_child.py":26:37 to :67)
#loc3 = loc("<module>"(#loc2))
#loc4 = loc("jit(broadcast_in_dim)/broadcast_in_dim"(#loc3))
#loc5 = loc("jit(broadcast_in_dim)"(#loc3))
