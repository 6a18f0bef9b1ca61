"""Pairing modules across two runs whose ids and name counters differ."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CORPUS
from dump_trees import corpus_cases, hlo_text, jax_dump, tf_dump, torch_dump, write_tree
from hlodiff.dumps import load_dump
from hlodiff.errors import HlodiffError
from hlodiff.dumps.pairing import (IDENTICAL, LARGEST, NAME, NAME_STRUCTURE, STRUCTURE, pair_dumps)


def runs(tmp_path: Path, make_a, make_b):
    return load_dump(make_a(tmp_path / "run_a")), load_dump(make_b(tmp_path / "run_b"))


def labels(modules) -> list[str]:
    return [m.label for m in modules]


def test_default_is_the_main_program_pair(tmp_path):
    a, b = runs(tmp_path, jax_dump, jax_dump)
    pairing = pair_dumps(a, b)
    assert len(pairing.pairs) == 1
    main = pairing.main
    assert (main.a, main.b) == (a.main_program(), b.main_program())
    assert main.how == NAME and main.score == 1.0
    assert pairing.only_a == pairing.only_b == ()


def test_extra_compilations_shift_ids_and_are_reported(tmp_path):
    """Run B compiled two more helpers first: every id moves, the program still pairs."""
    extra = (("jit_iota", 2), ("jit__lambda", 3), ("jit_convert_element_type", 1),
             ("jit_init_params", 8))
    a, b = runs(tmp_path, jax_dump, lambda p: jax_dump(p, helpers=extra))
    pairing = pair_dumps(a, b, all=True)
    assert [(p.a.module_id, p.b.module_id, p.how) for p in pairing.pairs] == [
        (0, 4, NAME), (2, 6, NAME), (4, 8, NAME)]
    assert labels(pairing.only_b) == ["module_0000.jit_iota", "module_0002.jit__lambda"]
    assert pairing.only_a == ()
    assert (pair_dumps(a, b).main.a.module_id, pair_dumps(a, b).main.b.module_id) == (4, 8)


def test_tensorflow_counters_do_not_stop_pairing(tmp_path):
    a, b = runs(tmp_path, lambda p: tf_dump(p, 128, 5), lambda p: tf_dump(p, 131, 7))
    main = pair_dumps(a, b).main
    assert main.how == NAME
    assert main.a.program != main.b.program
    assert main.a.normalised == main.b.normalised == "a_inference_train_step"


def test_same_named_graphs_pair_by_structure(tmp_path):
    """PyTorch/XLA names every graph SyncTensorsGraph: structure tells them apart."""
    a, b = runs(tmp_path, lambda p: torch_dump(p, 21, 168),
                lambda p: torch_dump(p, 22, 170, large_ops=("add",) * 29 + ("multiply",)))
    pairing = pair_dumps(a, b, all=True)
    assert [(p.a.program, p.b.program, p.how) for p in pairing.pairs] == [
        ("SyncTensorsGraph.21", "SyncTensorsGraph.22", NAME_STRUCTURE),
        ("SyncTensorsGraph.168", "SyncTensorsGraph.170", NAME_STRUCTURE)]
    assert pair_dumps(a, b).main.b.program == "SyncTensorsGraph.170"
    assert 0.9 < pairing.pairs[1].score < 1.0


def test_identical_modules_of_one_name_pair_in_compile_order(tmp_path):
    repeated = (("jit_broadcast_in_dim", 1), ("jit_broadcast_in_dim", 1),
                ("jit_broadcast_in_dim", 1))
    a, b = runs(tmp_path, lambda p: jax_dump(p, helpers=repeated),
                lambda p: jax_dump(p, first_id=10, helpers=repeated))
    pairing = pair_dumps(a, b, all=True)
    assert [(p.a.module_id, p.b.module_id, p.how) for p in pairing.pairs] == [
        (0, 10, IDENTICAL), (2, 12, IDENTICAL), (4, 14, IDENTICAL), (6, 16, NAME)]


def test_a_renamed_program_pairs_by_structure(tmp_path):
    ops = ("add", "multiply") * 20
    a, b = runs(tmp_path,
                lambda p: write_tree(p, {"module_0000.jit_step.before_optimizations.txt":
                                         hlo_text("jit_step", ops)}),
                lambda p: write_tree(p, {"module_0000.jit_train.before_optimizations.txt":
                                         hlo_text("jit_train", ops + ("add",))}))
    main = pair_dumps(a, b).main
    assert main.how == STRUCTURE and main.score > 0.9


def test_unalike_main_programs_are_paired_as_largest(tmp_path):
    a, b = runs(tmp_path,
                lambda p: write_tree(p, {"module_0000.jit_f.before_optimizations.txt":
                                         hlo_text("jit_f", ("add",) * 10)}),
                lambda p: write_tree(p, {"module_0000.jit_g.before_optimizations.txt":
                                         hlo_text("jit_g", ("multiply",) * 30)}))
    pairing = pair_dumps(a, b)
    assert pairing.main.how == LARGEST
    assert pairing.only_a == pairing.only_b == ()
    # every program gets a verdict: the two main programs too, as LARGEST
    assert [p.how for p in pair_dumps(a, b, all=True).pairs] == [LARGEST]


def test_select_keeps_matching_pairs(tmp_path):
    a, b = runs(tmp_path, jax_dump, jax_dump)
    pairing = pair_dumps(a, b, select="init|convert")
    assert [p.a.program for p in pairing.pairs] == ["jit_convert_element_type", "jit_init_params"]
    with pytest.raises(HlodiffError, match="matches no module in both runs"):
        pair_dumps(a, b, select="nothing_like_this")
    with pytest.raises(HlodiffError, match="not a regular expression"):
        pair_dumps(a, b, select="(")


def test_an_unreadable_module_is_noted_not_fatal(tmp_path):
    def broken(p):
        jax_dump(p, helpers=(("jit_broadcast_in_dim", 1), ("jit_broadcast_in_dim", 2)))
        (p / "module_0000.jit_broadcast_in_dim.before_optimizations.txt").write_text("HloModule")
        return p
    a, b = runs(tmp_path, broken, lambda p: jax_dump(p, helpers=(("jit_broadcast_in_dim", 3),)))
    pairing = pair_dumps(a, b, all=True)
    assert any("module_0000.jit_broadcast_in_dim was not compared" in n for n in pairing.notes)
    assert [(p.a.module_id, p.b.module_id, p.how) for p in pairing.pairs] == [
        (2, 0, NAME_STRUCTURE), (4, 2, NAME)]
    assert labels(pairing.only_a) == ["module_0000.jit_broadcast_in_dim"]


@pytest.mark.parametrize("case", corpus_cases(CORPUS, with_truth=False), ids=lambda p: p.name)
def test_corpus_mains_pair_with_each_other(case):
    a, b = load_dump(case / "run_a"), load_dump(case / "run_b")
    main = pair_dumps(a, b).main
    assert (main.a, main.b) == (a.main_program(), b.main_program())
    assert main.how != LARGEST
