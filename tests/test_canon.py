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


def test_a_float_constant_moves_jax_and_graphcore_fingerprints_not_xlas():
    a, b = fingerprints(lr_module("run_a")), fingerprints(lr_module("run_b"))
    assert a["xla_fingerprint"] == b["xla_fingerprint"]
    assert a["jax_cache_key"] != b["jax_cache_key"]
    assert a["graphcore_hlo_hash"] != b["graphcore_hlo_hash"]


def test_canon_command_prints_the_main_program_of_a_dump():
    out = run_cli("canon", str(CORPUS / "jax_learning_rate" / "run_b")).stdout
    assert out.startswith("HloModule jit_train_step")
    assert out.count("constant(0.02)") == 4
