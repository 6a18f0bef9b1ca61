#loc1 = loc("a")
module @jit__reduce_sum attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}} loc(#loc)
  func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>} loc("a")) -> (tensor<f32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc4)
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x8xf32>, tensor<f32>) -> tensor<f32> loc(#loc4)
    return %0 : tensor<f32> loc(#loc5)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("corpus/gen/jax_mesh_child.py":38:12 to :28)
#loc3 = loc("<module>"(#loc2))
#loc4 = loc("jit(_reduce_sum)/reduce_sum"(#loc3))
#loc5 = loc("jit(_reduce_sum)"(#loc3))
