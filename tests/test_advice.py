"""advice.py: which advice a finding gets."""

from hlodiff.analysis.advice import advice_for
from hlodiff.analysis.findings import Finding, Where
from hlodiff.model import Origin


def _inside_random(kind: str, old: str, new: str) -> Finding:
    places = tuple(Where(computation, f"{name}.{n}", f"{name}.{n}", old, new)
                   for n, (computation, name) in enumerate(
                       [("_threefry_fold_in.14", "slice"), ("threefry2x32.13", "add")]))
    return Finding(kind, "both", old, new, len(places), ("xla_executable_fingerprint",),
                   (Origin(op_name="slice"),), places)


def test_names_inside_jax_random_are_names_not_prng_settings():
    # A Hugging Face Flax BERT with gradient_checkpointing=True: the step's
    # _threefry_fold_in was traced first from another layer, so its stack
    # frames name Dense, not Dropout. That finding read "This differs inside
    # the code JAX generates random bits with ... the PRNG settings or the
    # JAX version differ" (a helper session's run); they were the same.
    metadata = advice_for(_inside_random("metadata", "Dropout", "Dense"), "jax")
    assert metadata.startswith("Only names and source locations differ")
    # what the code computes there still points at the PRNG settings
    dtype = advice_for(_inside_random("dtype", "u64[4]", "u32[64]"), "jax")
    assert "jax_threefry_partitionable" in dtype


def test_a_smaller_batch_is_not_said_to_be_a_last_batch():
    # Keras predict(batch_size=4) after 8, on 16 samples (no short batch):
    # "An input got smaller, as a short last batch does: use
    # drop_remainder=True" (a helper session's TF run).
    place = Where("main", "x.1", "x.1", "f32[8,16]{1,0}", "f32[4,16]{1,0}")
    finding = Finding("parameter", "both", place.old, place.new, 1, ("xla_executable_fingerprint",),
                      (Origin(op_name="x"),), (place,), summary="batch 8 -> 4 in x")
    advice = advice_for(finding, "tensorflow")
    assert "batch size differs between the runs, or this is the short last batch" in advice
    assert "drop_remainder=True" in advice


def test_an_xla_option_tensorflow_set_is_not_only_the_users_xla_flags():
    # tf.config.experimental.enable_op_determinism() with the same XLA_FLAGS
    # in both runs: "XLA flag xla_gpu_deterministic_ops: (default) -> true"
    # was told "XLA_FLAGS differ between the runs" (a helper session's run).
    finding = Finding("environment", "both", None, "xla_gpu_deterministic_ops: true", 1, (),
                      (Origin(),), (), detail="XLA flag xla_gpu_deterministic_ops: (default) -> true")
    advice = advice_for(finding, "tensorflow")
    assert "enable_op_determinism" in advice and "XLA_FLAGS" in advice
