#loc1 = loc("args[0]")
module @jit_stage attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x8xf32> loc("args[0]")) -> (tensor<16x8xf32> {jax.result_info = "result"}) {
    return %arg0 : tensor<16x8xf32> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("corpus/gen/jax_compile_options_child.py":22:15 to :87)
#loc3 = loc("<module>"(#loc2))
#loc4 = loc("jit(stage)"(#loc3))
