"""Reading dump directories by file name: classification, modules, main program, errors."""

from __future__ import annotations

import doctest
import json
import os
import pytest

import hlodiff
from dump_trees import (TF_ATTRS, corpus_cases, hlo_text, jax_dump, snapshot, tf_dump, torch_dump,
                        write_tree)
from conftest import CORPUS
from hlodiff.dumps import (AFTER, BEFORE, HLO_TEXT, IN_PASS, PASS, UNKNOWN, classify, explain_name as explain,
                           file_dump, human_size, list_dump, load_dump, normalise_program,
                           program_name)
from hlodiff.errors import HlodiffError

TF_PROGRAM = f"a_inference_train_step_128{TF_ATTRS}.5"

# name -> (kind, module id, program as written, stage label or None)
NAMES = {
    "module_0028.jit_train_step.before_optimizations.txt":
        (HLO_TEXT, 28, "jit_train_step", "before_optimizations"),
    "module_0028.jit_train_step.cpu_after_optimizations.txt":
        (HLO_TEXT, 28, "jit_train_step", "cpu_after_optimizations"),
    "module_0028.jit_train_step.cpu_after_optimizations-buffer-assignment.txt":
        ("buffer-assignment", 28, "jit_train_step", "cpu_after_optimizations"),
    "module_0028.jit_train_step.cpu_after_optimizations-buffer-assignment-values.txt":
        ("buffer-assignment-values", 28, "jit_train_step", "cpu_after_optimizations"),
    "module_0028.jit_train_step.cpu_after_optimizations-live-range.txt":
        ("live-range", 28, "jit_train_step", "cpu_after_optimizations"),
    "module_0028.jit_train_step.cpu_after_optimizations-memory-usage-report.txt":
        ("memory-usage-report", 28, "jit_train_step", "cpu_after_optimizations"),
    "module_0028.jit_train_step.debug_options": ("debug_options", 28, "jit_train_step", None),
    "module_0028.jit_train_step/module.mlir": ("module.mlir", 28, "jit_train_step", None),
    "module_0028.jit_train_step/compile_options.textproto":
        ("compile_options.textproto", 28, "jit_train_step", None),
    "module_0028.jit_train_step/topology.textproto":
        ("topology.textproto", 28, "jit_train_step", None),
    "module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt":
        (HLO_TEXT, 1, "jit_f", "sm_8.0_gpu_after_optimizations"),
    "module_0001.jit_f.gfx90a_gpu_after_optimizations-buffer-assignment.txt":
        ("buffer-assignment", 1, "jit_f", "gfx90a_gpu_after_optimizations"),
    "module_0001.jit_f.after_optimizations.txt": (HLO_TEXT, 1, "jit_f", "after_optimizations"),
    f"module_0003.{TF_PROGRAM}.before_optimizations.txt":
        (HLO_TEXT, 3, TF_PROGRAM, "before_optimizations"),
    "module_0002.SyncTensorsGraph.168.before_optimizations.txt":
        (HLO_TEXT, 2, "SyncTensorsGraph.168", "before_optimizations"),
    "module_0026.jit_f.0007.simplification.after_pipeline-start.before_algsimp.txt":
        (HLO_TEXT, 26, "jit_f", "0007.simplification.after_pipeline-start.before_algsimp"),
    "module_0004.jit_f.0021.copy-insertion.after_adding_copies_to_resolve_interference.txt":
        (HLO_TEXT, 4, "jit_f", "0021.copy-insertion.after_adding_copies_to_resolve_interference"),
    "module_0004.jit_f.12345.simplification.after_dce.before_algsimp.txt":
        (HLO_TEXT, 4, "jit_f", "12345.simplification.after_dce.before_algsimp"),
    f"module_0003.a_inference_f_1{TF_ATTRS}.1234.0007.fusion.after_a.before_b.txt":
        (HLO_TEXT, 3, f"a_inference_f_1{TF_ATTRS}.1234", "0007.fusion.after_a.before_b"),
    "module_0001.0001.IPU.after_allocation-finder.before_forward-allocation.txt":
        (HLO_TEXT, 1, "", "0001.IPU.after_allocation-finder.before_forward-allocation"),
    "1700000000123456.module_0004.jit_f.before_optimizations.txt":
        (HLO_TEXT, 4, "jit_f", "before_optimizations"),
    "module_0004.jit_f.cpu_after_optimizations.dot":
        (".dot", 4, "jit_f", "cpu_after_optimizations"),
    "module_0004.jit_f.before_optimizations.html": (".html", 4, "jit_f", "before_optimizations"),
    "module_0004.jit_f.before_optimizations.hlo.pb": (".pb", 4, "jit_f", "before_optimizations"),
    "module_0004.jit_f.ir-no-opt.ll": (".ll", 4, "jit_f", None),
    "module_0004.jit_init.obj-file.broadcast_add_fusion.12_kernel_module.o":
        (".o", 4, "jit_init", None),
    "module_0004.jit_f.ptx": (".ptx", 4, "jit_f", None),
    "module_0001.metadata.textproto": ("metadata.textproto", 1, "", None),
    "README.md": (UNKNOWN, None, None, None),
    "module_0004.jit_f.notes.txt": (UNKNOWN, None, None, None),
    "other/module.mlir": (UNKNOWN, None, None, None),
}


@pytest.mark.parametrize("name", NAMES)
def test_every_naming_scheme_is_classified(name):
    kind, module_id, program, stage = NAMES[name]
    file = classify(name)
    assert (file.kind, file.module_id, file.program) == (kind, module_id, program)
    assert (file.stage.label if file.stage else None) == stage


def test_stage_parts_are_read():
    gpu = classify("module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt").stage
    assert (gpu.name, gpu.platform) == (AFTER, "sm_8.0_gpu")
    step = classify("module_0026.jit_f.0007.simplification.after_pipeline-start"
                    ".before_algsimp.txt").stage
    assert (step.name, step.step, step.pipeline, step.after_pass, step.before_pass) == (
        PASS, 7, "simplification", "pipeline-start", "algsimp")
    inside = classify("module_0004.jit_f.0021.copy-insertion.after_adding_copies.txt").stage
    assert (inside.name, inside.step, inside.pipeline, inside.pass_step) == (
        IN_PASS, 21, "copy-insertion", "after_adding_copies")
    assert classify("1700000000123456.module_0004.jit_f.before_optimizations.txt").timestamp \
        == 1700000000123456
    kernel = classify("module_0004.jit_init.obj-file.broadcast_add_fusion.12_kernel_module.o")
    assert kernel.detail == "broadcast_add_fusion.12_kernel_module"


@pytest.mark.parametrize("written, normalised, frontend", [
    (TF_PROGRAM, "a_inference_train_step", "tensorflow"),
    (f"a_inference_train_step_131{TF_ATTRS}.7", "a_inference_train_step", "tensorflow"),
    ("a_inference_layer_2_step_9__.3", "a_inference_layer_2_step", "tensorflow"),
    ("cluster_12__XlaCompiledKernel_true__XlaNumConstantArgs_0_.45", "cluster", "tensorflow"),
    ("SyncTensorsGraph.168", "SyncTensorsGraph", "pytorch"),
    ("jit_train_step", "jit_train_step", "jax"),
    ("jit__lambda", "jit__lambda", "jax"),
    ("my_module.3", "my_module", None),
    ("", "", None),
])
def test_program_names_lose_their_run_counters(written, normalised, frontend):
    name = program_name(written)
    assert (name.normalised, name.frontend) == (normalised, frontend)
    assert normalise_program(normalised) == normalised  # normalising twice changes nothing


def test_main_program_is_the_largest_with_the_reason(tmp_path):
    dump = load_dump(jax_dump(tmp_path))
    main = dump.main_program()
    assert main.normalised == "jit_train_step"
    assert main.path == tmp_path / "module_0004.jit_train_step.before_optimizations.txt"
    init = next(m for m in dump.modules if m.program == "jit_init_params")
    assert dump.main_reason == (f"largest before_optimizations text: {human_size(main.size)}, "
                                f"next jit_init_params {human_size(init.size)}; "
                                "1 program JAX compiled for itself not counted")


def test_the_main_program_is_the_users_step_not_jaxs_helper_nor_the_initialiser():
    # jit__normal is JAX's own; flax's jit_init is the largest text but runs no
    # backward pass (and takes one argument where the train step takes the
    # parameters and the batch).
    upgrade = load_dump(CORPUS / "jax_version_upgrade" / "run_b")
    assert upgrade.main_program().normalised == "jit_train_step"
    flax = load_dump(CORPUS / "jax_flax_after_only_init_largest" / "run_a")
    init = next(m for m in flax.modules if m.normalised == "jit_init")
    assert init.size > flax.main_program().size
    assert flax.main_program().normalised == "jit_train_step"
    assert flax.main_reason.startswith("computes gradients, a training step")
    assert "next jit_init, which does not" in flax.main_reason


def test_modules_group_their_files_by_stage(tmp_path):
    dump = load_dump(jax_dump(tmp_path))
    assert [(m.module_id, m.program) for m in dump.modules] == [
        (0, "jit_convert_element_type"), (2, "jit_init_params"), (4, "jit_train_step")]
    main = dump.main_program()
    assert main.stages == ("before", "after")
    by_stage = main.files_by_stage
    assert sorted(f.kind for f in by_stage["cpu_after_optimizations"]) == [
        "buffer-assignment", "buffer-assignment-values", HLO_TEXT, "live-range",
        "memory-usage-report"]
    assert sorted(f.kind for f in by_stage[""]) == [
        ".ll", ".ll", ".ll", ".ll", ".o", ".o", "compile_options.textproto", "debug_options",
        "module.mlir", "topology.textproto"]
    assert main.stage_file(BEFORE).size == main.size == main.path.stat().st_size
    assert main.instruction_count == 41
    assert main.module(AFTER).name == "jit_train_step"
    assert dump.unknown == ()


def test_sidecar_program_is_settled_by_the_hlo_text(tmp_path):
    """``...XlaMustCompile..._.5.ir-no-opt.ll``: '.5' is part of the program, not a kernel."""
    dump = load_dump(tf_dump(tmp_path, 128, 5))
    main = dump.main_program()
    assert main.normalised == "a_inference_train_step"
    assert main.program == f"a_inference_train_step_128{TF_ATTRS}.5"
    assert sorted(f.kind for f in main.files) == [".ll", "debug_options", HLO_TEXT, HLO_TEXT]
    assert len(dump.modules) == 2


def test_torch_graphs_share_a_name_and_the_largest_wins(tmp_path):
    dump = load_dump(torch_dump(tmp_path, 21, 168))
    assert [m.normalised for m in dump.modules] == ["SyncTensorsGraph", "SyncTensorsGraph"]
    assert dump.main_program().program == "SyncTensorsGraph.168"


def test_timestamped_files_join_their_untimestamped_neighbours(tmp_path):
    write_tree(tmp_path, {
        "1700000000000001.module_0000.jit_f.before_optimizations.txt": hlo_text("jit_f"),
        "1700000000000001.module_0000.jit_f.cpu_after_optimizations.txt": hlo_text("jit_f"),
        "module_0000.jit_f.debug_options": "",
    })
    (module,) = load_dump(tmp_path).modules
    assert module.timestamp == 1700000000000001
    assert len(module.files) == 3


def test_pass_only_modules_read_their_first_snapshot(tmp_path):
    write_tree(tmp_path, {
        "module_0001.0002.IPU.after_b.before_c.txt": hlo_text("m", ("add", "add")),
        "module_0001.0001.IPU.after_allocation-finder.before_forward-allocation.txt": hlo_text("m"),
    })
    (module,) = load_dump(tmp_path).modules
    assert module.program == "" and module.stages == ("2 passes",)
    assert [f.stage.step for f in module.passes] == [1, 2]
    assert module.path.name.startswith("module_0001.0001.IPU")
    assert load_dump(tmp_path).main_reason.startswith("the only module with HLO text")


def test_after_optimizations_is_used_when_nothing_else_was_dumped(tmp_path):
    write_tree(tmp_path, {"module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt":
                          hlo_text("jit_f")})
    assert load_dump(tmp_path).main_program().path.name.endswith("gpu_after_optimizations.txt")


def test_unknown_files_are_listed_not_fatal(tmp_path):
    jax_dump(tmp_path)
    write_tree(tmp_path, {"README.md": "notes", "nested/run.log": "log"})
    dump = load_dump(tmp_path)
    assert [f.relative for f in dump.unknown] == ["README.md", "nested/run.log"]
    assert dump.main_program().normalised == "jit_train_step"


def test_nested_dump_folders_are_read(tmp_path):
    jax_dump(tmp_path / "host0")
    assert load_dump(tmp_path).main_program().path.parent == tmp_path / "host0"


def test_a_symlink_loop_does_not_hang(tmp_path):
    jax_dump(tmp_path)
    os.symlink(tmp_path, tmp_path / "loop")
    os.symlink(tmp_path / "missing", tmp_path / "dangling")
    assert load_dump(tmp_path).main_program().normalised == "jit_train_step"


def test_reading_writes_nothing_into_the_dump(tmp_path):
    jax_dump(tmp_path)
    before = snapshot(tmp_path)
    dump = load_dump(tmp_path)
    list_dump(dump)
    dump.main_program().module(AFTER)
    assert snapshot(tmp_path) == before


def test_names_are_read_before_any_parse(tmp_path, monkeypatch):
    """Sizes first: listing and choosing the main program parse nothing."""
    jax_dump(tmp_path)

    def no_parse(*_args, **_kwargs):
        raise AssertionError("parsed")
    monkeypatch.setattr("hlodiff.syntax.parser.parse_file", no_parse)
    dump = load_dump(tmp_path)
    assert dump.main_program().normalised == "jit_train_step"
    assert all(row.instructions is None for row in list_dump(dump, count=False).rows)
    with pytest.raises(AssertionError, match="parsed"):
        dump.main_program().instruction_count


def test_a_module_is_parsed_once(tmp_path, monkeypatch):
    jax_dump(tmp_path)
    calls = []
    real = hlodiff.syntax.parser.parse_file
    monkeypatch.setattr("hlodiff.syntax.parser.parse_file", lambda path: calls.append(path) or real(path))
    main = load_dump(tmp_path).main_program()
    assert main.instruction_count == main.instruction_count == 41
    assert len(calls) == 1


def test_a_broken_module_keeps_its_row_with_the_error(tmp_path):
    jax_dump(tmp_path)
    broken = tmp_path / "module_0002.jit_init_params.before_optimizations.txt"
    broken.write_text("HloModule x\nENTRY {")
    rows = {row.module.program: row for row in list_dump(load_dump(tmp_path)).rows}
    assert rows["jit_init_params"].instructions is None
    assert "module_0002.jit_init_params.before_optimizations.txt" in rows["jit_init_params"].error
    assert rows["jit_train_step"].instructions == 41 and rows["jit_train_step"].is_main


def test_explain_names_each_part():
    parts = explain(classify(
        "1700000000123456.module_0028.jit_train_step.cpu_after_optimizations-live-range.txt"))
    assert [p.text for p in parts] == ["1700000000123456", "module_0028", "jit_train_step",
                                       "cpu_after_optimizations", "-live-range.txt"]
    meanings = [p.meaning for p in parts]
    assert "2023-11-14 22:13:20 UTC" in meanings[0]
    assert meanings[1].startswith("module id 28: XLA's counter") and "not stable" in meanings[1]
    assert meanings[2] == "program name: the JAX function compiled with jax.jit"
    assert "for the cpu backend" in meanings[3] and "what actually ran" in meanings[3]
    assert meanings[4].startswith("live ranges")
    tf = explain(classify(f"module_0003.{TF_PROGRAM}.before_optimizations.txt"))
    assert tf[1].meaning.endswith("compared as a_inference_train_step")
    assert explain(classify("notes.md"))[0].meaning.startswith("not a name XLA writes")


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "missing", "no such file or directory"),
    (lambda p: write_tree(p, {"f.txt": "x"}) / "f.txt", "not a directory"),
    (lambda p: p, "empty directory"),
    (lambda p: write_tree(p, {"README.md": "x", "module_0001.jit_f.debug_options": ""}),
     "no HLO text among 2 files"),
])
def test_unusable_paths_are_errors_naming_the_path(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(HlodiffError, match=message) as err:
        load_dump(path)
    assert str(path) in str(err.value)


def test_a_single_file_is_a_one_module_dump(tmp_path):
    path = write_tree(tmp_path, {"prog.hlo": hlo_text("prog", ("add", "add"))}) / "prog.hlo"
    dump = file_dump(path)
    assert dump.main_program().path == path
    assert dump.main_program().instruction_count == 3
    with pytest.raises(HlodiffError, match="is a directory"):
        file_dump(tmp_path)


def test_docstring_examples_run():
    assert doctest.testmod(hlodiff.dumps).failed == 0


def test_load_dump_is_public():
    assert hlodiff.load_dump is load_dump


@pytest.mark.parametrize("case", corpus_cases(CORPUS, with_truth=True), ids=lambda p: p.name)
def test_corpus_main_program_is_the_truth(case):
    truth = json.loads((case / "truth.json").read_text())
    for run in ("run_a", "run_b"):
        main = load_dump(case / run).main_program()
        assert main.normalised == normalise_program(truth["main_program"]), run
