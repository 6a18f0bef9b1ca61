"""What JAX's checkpoint recomputes, read from op_names (hlodiff/analysis/recompute.py).

The corpus cases (jax_remat_*, jax04_scan_remat_policy) check the findings a
user reads; these check the reading of names that no corpus case holds.
"""

from __future__ import annotations

from hlodiff.analysis.recompute import checkpointing, summary


def test_a_scope_named_checkpoint_is_no_jax_checkpoint():
    # a TensorFlow name_scope("checkpoint") added around a layer: names only,
    # no recomputation and no barrier, so no checkpoint to tell of
    plain = ["model/dense/MatMul", "gradient_tape/model/dense/MatMul/MatMul"]
    scoped = ["model/checkpoint/dense/MatMul",
              "gradient_tape/model/checkpoint/dense/MatMul/MatMul"]
    assert not checkpointing(scoped).checkpointed
    assert summary(checkpointing(plain), checkpointing(scoped)) is None


def test_jax_0_4_names_with_parameters_read_as_the_same_model_ops():
    # JAX 0.4.30 writes an op's parameters into its op_name, and names the
    # checkpoint's barrier optimization_barrier (a real dump's names)
    saved = ["jit(step)/jit(main)/jvp(while)/body/checkpoint/dot_general[dimension_numbers="
             "(((1,), (0,)), ((), ())) precision=None preferred_element_type=float32]",
             "jit(step)/jit(main)/jvp(while)/body/checkpoint/tanh",
             "jit(step)/jit(main)/transpose(jvp(while))/body/checkpoint/optimization_barrier",
             "jit(step)/jit(main)/transpose(jvp(while))/body/checkpoint/rematted_computation/"
             "tanh"]
    recomputed = saved + [
        "jit(step)/jit(main)/transpose(jvp(while))/body/checkpoint/rematted_computation/"
        "dot_general[dimension_numbers=(((1,), (0,)), ((), ())) precision=None "
        "preferred_element_type=float32]"]
    a, b = checkpointing(saved), checkpointing(recomputed)
    assert a.checkpointed and b.checkpointed and a.model == b.model
    assert summary(a, b) == ("jax.checkpoint (remat) recomputes other ops (its policy?): "
                             "run b recomputes 1 op (dot_general) more")
    assert summary(b, a).endswith("run b recomputes 1 op (dot_general) fewer")
