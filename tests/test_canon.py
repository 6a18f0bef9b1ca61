"""The canonical printer: stable names, metadata on request, per-hash fingerprints."""

from __future__ import annotations

from conftest import CORPUS, run_cli
from test_git import renumbered

from hlodiff import parse, parse_file
from hlodiff.integrations.canon import View, canonical_text, fingerprints

MODULE = "module_0006.jit_train_step.before_optimizations.txt"


def lr_module(run: str):
    return parse_file(CORPUS / "jax_learning_rate" / run / MODULE)


def test_renumbering_does_not_change_the_canonical_text():
    text = (CORPUS / "jax_learning_rate" / "run_a" / MODULE).read_text()
    assert canonical_text(parse(text)) == canonical_text(parse(renumbered(text)))
    assert fingerprints(parse(text)) == fingerprints(parse(renumbered(text)))


def test_names_are_positional_and_metadata_is_dropped_by_default():
    text = canonical_text(lr_module("run_a"))
    assert "ENTRY %main (p0: f32[32,64]{1,0}" in text
    assert "metadata=" not in text and "StackFrames" not in text


def test_kept_metadata_has_the_stack_resolved():
    text = canonical_text(lr_module("run_a"), View(metadata=True))
    assert 'stack="run.<locals>.train_step (corpus/gen/jax_cases.py:175)' in text
    assert "stack_frame_id" not in text


def test_a_float_constant_moves_every_fingerprint_a_renamed_scope_only_the_printed_ones():
    a, b = fingerprints(lr_module("run_a")), fingerprints(lr_module("run_b"))
    assert all(a[name] != b[name] for name in a)
    scope = CORPUS / "jax_named_scope_rename"
    before = [parse_file(next((scope / run).glob("*jit_train_step.before_optimizations.txt")))
              for run in ("run_a", "run_b")]
    c, d = (fingerprints(m) for m in before)
    # what hashes the module's metadata moves; JAX's key does not
    assert {name for name in c if c[name] != d[name]} == {"xla_executable_fingerprint",
                                                          "tf_persistent_cache_key",
                                                          "torch_xla_computation_hash"}


def test_canon_command_prints_the_main_program_of_a_dump():
    out = run_cli("canon", str(CORPUS / "jax_learning_rate" / "run_b")).stdout
    assert out.startswith("HloModule jit_train_step")
    assert out.count("constant(0.02)") == 4
