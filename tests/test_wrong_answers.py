"""The wrong answers users found (issue 12, then helper sessions hunting them), each as met.

Each program pair below is what a user would diff; the assertion is what
hlodiff must answer, through the same CLI and report a user reads. The
real-dump counterparts (int4/fp8 constants only module.mlir shows, a dump
whose largest module is flax's init) are corpus cases judged by
test_corpus_diff.py: jax_int4_elided, jax_fp8_elided,
jax_flax_after_only_init_largest.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, dump_runs, run_cli
from hlodiff.analysis.compare import compare

REDUCE = """HloModule jit_f, entry_computation_layout={(f32[16,8]{1,0})->f32[16]{0}}

%max.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %maximum.4 = f32[] maximum(%a.2, %b.3)
}

%add.5 (a.6: f32[], b.7: f32[]) -> f32[] {
  %a.6 = f32[] parameter(0)
  %b.7 = f32[] parameter(1)
  ROOT %add.8 = f32[] add(%a.6, %b.7)
}

ENTRY %main.9 (x.10: f32[16,8]) -> f32[16] {
  %x.10 = f32[16,8]{1,0} parameter(0)
  %constant.11 = f32[] constant(0)
  %reduce.12 = f32[16]{0} reduce(%x.10, %constant.11), dimensions={1}, to_apply=%max.1
  ROOT %negate.13 = f32[16]{0} negate(%reduce.12)
}
"""

SUBTRACT = """HloModule jit_f, entry_computation_layout={(f32[8]{0}, f32[8]{0})->f32[8]{0}}

ENTRY %main.1 (a.2: f32[8], b.3: f32[8]) -> f32[8] {
  %a.2 = f32[8]{0} parameter(0)
  %b.3 = f32[8]{0} parameter(1)
  ROOT %subtract.4 = f32[8]{0} subtract(%a.2, %b.3)
}
"""

CONSTANT = """HloModule jit_f, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

ENTRY %main.1 (x.2: f32[2]) -> f32[2] {
  %x.2 = f32[2]{0} parameter(0)
  %constant.3 = f32[2]{0} constant(VALUE)
  ROOT %multiply.4 = f32[2]{0} multiply(%x.2, %constant.3)
}
"""


def diff(tmp_path, a_text: str, b_text: str, *args: str, expect: int | None = None):
    """``hlodiff diff a.txt b.txt --format json`` as a user runs it: the JSON and the exit code."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(a_text)
    b.write_text(b_text)
    result = run_cli("diff", str(a), str(b), "--format", "json", *args, expect=expect)
    return json.loads(result.stdout), result.exit_code


def test_a_reduce_that_now_adds_instead_of_taking_the_max_is_a_different_executable(tmp_path):
    report, code = diff(tmp_path, REDUCE, REDUCE.replace("to_apply=%max.1", "to_apply=%add.5"))
    assert code == 1
    assert report["same_executable"] is False and report["recompiles"] is True
    top = report["findings"][0]
    assert top["kind"] == "called_computation"
    assert "max" in top["old"] and "add" in top["new"]


def test_a_called_computation_whose_body_changed_under_the_same_name_is_a_change(tmp_path):
    changed = REDUCE.replace("ROOT %maximum.4 = f32[] maximum(%a.2, %b.3)",
                             "ROOT %maximum.4 = f32[] minimum(%a.2, %b.3)")
    report, code = diff(tmp_path, REDUCE, changed)
    assert code == 1 and report["same_executable"] is False
    top = report["findings"][0]
    assert (top["kind"], top["old"], top["new"]) == ("opcode", "maximum", "minimum")


# what XLA's own parser stores for each (checked with jaxlib's hlo_module_from_text):
# an integer -0 is 0, 1e-50 rounds to 0 in f32
@pytest.mark.parametrize("old, new", [("{1, 2}", "{1,2}"), ("{0.5, 2}", "{5e-1, 2.0}"),
                                      ("{1, 2}", "{ 1 , 2 }"), ("{0, 1}", "{-0, 1}"),
                                      ("{0, 1}", "{1e-50, 1}")])
def test_the_same_values_spelled_otherwise_are_the_same_executable(tmp_path, old, new):
    report, code = diff(tmp_path, CONSTANT.replace("VALUE", old), CONSTANT.replace("VALUE", new))
    assert code == 0
    assert report["same_executable"] is True and report["recompiles"] is False
    assert [f for f in report["findings"] if f["affects"]] == []


@pytest.mark.parametrize("old, new", [("{0, 1}", "{-0.0, 1}"), ("{0.5, 2}", "{0.50001, 2}")])
def test_values_xla_stores_differently_are_a_change(tmp_path, old, new):
    # XLA keeps the sign of a float zero: -0.0 and 0 are different literals
    report, code = diff(tmp_path, CONSTANT.replace("VALUE", old), CONSTANT.replace("VALUE", new))
    assert code == 1 and report["same_executable"] is False
    assert report["findings"][0]["kind"] == "constant"


def test_swapped_operands_are_an_operand_change_not_swapped_parameters(tmp_path):
    report, code = diff(tmp_path, SUBTRACT,
                        SUBTRACT.replace("subtract(%a.2, %b.3)", "subtract(%b.3, %a.2)"))
    assert code == 1 and report["same_executable"] is False
    kinds = [f["kind"] for f in report["findings"] if f["affects"]]
    assert kinds == ["operands"], report["findings"]


def test_a_name_defined_twice_is_an_error_naming_the_second_definition(tmp_path):
    twice = SUBTRACT.replace("  ROOT %subtract.4", "  %b.3 = f32[8]{0} negate(%a.2)\n"
                                                   "  ROOT %subtract.4")
    (tmp_path / "a.txt").write_text(twice)
    (tmp_path / "b.txt").write_text(SUBTRACT)
    result = run_cli("diff", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), expect=2)
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert "a.txt:6:" in message and "b.3" in message


def test_a_diff_read_in_either_direction_tells_the_same_story(tmp_path):
    a, b = REDUCE, REDUCE.replace("to_apply=%max.1", "to_apply=%add.5")
    forward = compare_texts(tmp_path / "f", a, b)
    backward = compare_texts(tmp_path / "b", b, a)
    assert [(f.kind, f.old, f.new) for f in forward.findings] == \
        [(f.kind, f.new, f.old) for f in backward.findings]


def compare_texts(where, a_text: str, b_text: str):
    where.mkdir()
    (where / "a.txt").write_text(a_text)
    (where / "b.txt").write_text(b_text)
    return compare(where / "a.txt", where / "b.txt")


def test_an_unprinted_constant_in_an_optimized_dump_alone_cannot_tell_if_it_recompiles(tmp_path):
    # only after_optimizations files: a {...} constant nobody shows the values of
    # might differ, so whether the compile input's key moved cannot be told
    program = CONSTANT.replace("f32[2]", "f32[64]")
    for run in ("run_a", "run_b"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "module_0001.jit_f.cpu_after_optimizations.txt").write_text(
            program.replace("VALUE", "{...}"))
    report = compare(tmp_path / "run_a", tmp_path / "run_b")
    assert report.recompiles is None and report.same_executable is None
    assert report.hashes["jax_cache_key"] is None


NEGATED = SUBTRACT.replace("  ROOT %subtract.4 = f32[8]{0} subtract(%a.2, %b.3)",
                           "  %subtract.4 = f32[8]{0} subtract(%a.2, %b.3)\n"
                           "  ROOT %negate.5 = f32[8]{0} negate(%subtract.4)")


def test_root_moved_to_another_line_returns_another_value(tmp_path):
    # every line pairs as it was, but the program now returns the difference,
    # not its negation (found by fuzzing one-token edits against XLA's parser)
    moved = NEGATED.replace("  %subtract.4", "  ROOT %subtract.4").replace("ROOT %negate.5",
                                                                           "%negate.5")
    for a_text, b_text in ((NEGATED, moved), (moved, NEGATED)):
        report, code = diff(tmp_path, a_text, b_text)
        assert code == 1 and report["same_executable"] is False
        assert [(f["kind"], f["old"], f["new"]) for f in report["findings"] if f["affects"]] \
            == [("operands", f"ROOT {x} f32[8]{{0}}", f"ROOT {y} f32[8]{{0}}")
                for x, y in [("negate", "subtract") if a_text is NEGATED
                             else ("subtract", "negate")]]


def test_without_a_root_the_last_line_is_the_root(tmp_path):
    # XLA's parser takes the last instruction when no line says ROOT
    report, code = diff(tmp_path, NEGATED, NEGATED.replace("ROOT %negate.5", "%negate.5"))
    assert code == 0 and report["same_executable"] is True


def test_a_flag_whose_value_says_version_is_a_flag_and_buries_no_cause(tmp_path):
    # An XLA flag is told from a version difference by what its detail starts
    # with: a cache path ".../version3/..." once made the flag read as a JAX
    # upgrade, with the upgrade's advice, and the op the model added folded
    # under it as "follows from it".
    for run in ("run_a", "run_b"):
        shutil.copytree(CORPUS / "jax_op_added" / run, tmp_path / run)
    options = tmp_path / "run_b" / "module_0006.jit_train_step.debug_options"
    options.write_text(options.read_text()
                       + 'xla_gpu_kernel_cache_file: "/cache/version3/kernels.bin"\n')
    result = run_cli("diff", str(tmp_path / "run_a"), str(tmp_path / "run_b"), "--format",
                     "json", "--no-cache", expect=1)
    findings = json.loads(result.stdout)["findings"]
    assert [f["kind"] for f in findings] == ["environment", "op_added"]
    flag, added = findings
    assert "set the same XLA_FLAGS" in flag["advice"] and flag["derived"] == []
    assert (added["new"], added["origin"]["source_file"], added["origin"]["source_line"]) == \
        ("tanh f32[16,8,32]{2,1,0}", "corpus/gen/jax_cases.py", 130)


@pytest.mark.parametrize("option_a, option_b, old, new", [
    # a repeated field: XLA writes one line per value
    ('xla_disable_hlo_passes: "all-gather-combiner"\nxla_disable_hlo_passes: "cse"\n',
     'xla_disable_hlo_passes: "cse"\n', '"all-gather-combiner", "cse"', '"cse"'),
    # a map: one message per entry, over several lines, as jax 0.10.2 wrote them
    ('xla_backend_extra_options: {\n  key: "-inline-threshold"\n  value: "200"\n}\n'
     'xla_backend_extra_options: {\n  key: "-unroll-threshold"\n  value: "100"\n}\n',
     'xla_backend_extra_options: {\n  key: "-unroll-threshold"\n  value: "100"\n}\n',
     '{ key: "-inline-threshold" value: "200" }, { key: "-unroll-threshold" value: "100" }',
     '{ key: "-unroll-threshold" value: "100" }'),
])
def test_flags_given_more_than_once_are_compared_whole(tmp_path, option_a, option_b, old, new):
    # Read one line per name, the last value won, and two runs with different
    # pass lists said "Same executable, no recompile" (exit 0) while JAX wrote
    # a different persistent-cache entry for each (jax 0.10.2, checked).
    for run, option in (("run_a", option_a), ("run_b", option_b)):
        shutil.copytree(CORPUS / "jax_op_added" / "run_a", tmp_path / run)
        sidecar = tmp_path / run / "module_0006.jit_train_step.debug_options"
        sidecar.write_text(sidecar.read_text() + option)
    report = json.loads(run_cli("diff", str(tmp_path / "run_a"), str(tmp_path / "run_b"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    assert report["recompiles"] is True
    flag, = report["findings"]
    name = option_b.partition(":")[0].partition(" {")[0]
    assert (flag["kind"], flag["old"], flag["new"], flag["affects"]) == (
        "environment", f"{name}: {old}", f"{name}: {new}", ["jax_cache_key"])


def _many_parameters(partitions: str) -> str:
    """A program of 400 parameters, as a train step's header lists them: the
    device count comes after 6 kB of layout."""
    shapes = ", ".join(["f32[8,8]{1,0}"] * 400)
    lines = [f"HloModule jit_update, entry_computation_layout={{({shapes})->f32[8,8]{{1,0}}}}"
             f"{partitions}", "", "ENTRY %main.1 (" + ", ".join(
                 f"p.{i}: f32[8,8]" for i in range(400)) + ") -> f32[8,8] {"]
    lines += [f"  %p.{i} = f32[8,8]{{1,0}} parameter({i})" for i in range(400)]
    lines += ["  ROOT %add.500 = f32[8,8]{1,0} add(%p.0, %p.399)", "}", ""]
    return "\n".join(lines)


def test_a_device_count_is_read_however_long_the_header(tmp_path):
    # Only the header's first 4,000 characters were read: a program with many
    # parameters on two devices showed "attribute (none) -> 2" as its own cause
    # instead of the device count it follows from (helper session, jax 0.10.2
    # dumps of a 120-parameter update sharded over 2 devices).
    for run, partitions in (("run_a", ""), ("run_b", ", num_partitions=2")):
        (tmp_path / run).mkdir()
        (tmp_path / run / "module_0006.jit_update.before_optimizations.txt").write_text(
            _many_parameters(partitions))
    report = json.loads(run_cli("diff", str(tmp_path / "run_a"), str(tmp_path / "run_b"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    top, = report["findings"]
    assert (top["kind"], top["new"]) == ("environment", "2 devices (num_partitions=2)")
    assert [d["kind"] for d in top["derived"]] == ["attribute"]


def _frozen_weights_run(folder, scale: str, *flags: str):
    """A real JAX run of tests/programs/jax_frozen_weights.py, dumped to ``folder``."""
    program = Path(__file__).parent / "programs" / "jax_frozen_weights.py"
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": " ".join((f"--xla_dump_to={folder}", *flags))}
    subprocess.run([sys.executable, str(program), scale], env=env, check=True,
                   capture_output=True)
    return folder


def test_weights_printed_in_one_run_only_are_compared_by_their_values(tmp_path):
    # One run dumped with --xla_dump_large_constants printed the weights, the
    # other {...}: hlodiff said "constant { { 0, 1, 2, ... -> {...}" and
    # "different executables" for the same weights. The printed run is no
    # evidence of a change; JAX's module.mlir holds both runs' values. The
    # optimized texts differ all the same, and XLA's fingerprint hashes them:
    # jax 0.10.2 printed 162919818532015834516778360817889759812 with the flag,
    # 568770539812610519517866308218863437302 without, for these weights.
    printed = _frozen_weights_run(tmp_path / "printed", "1", "--xla_dump_large_constants=true")
    same = _frozen_weights_run(tmp_path / "same", "1")
    other = _frozen_weights_run(tmp_path / "other", "2")
    for a, b in ((printed, same), (same, printed)):
        report = json.loads(run_cli("diff", str(a), str(b), "--format", "json", "--no-cache",
                                    expect=None).stdout)
        assert (report["recompiles"], report["same_executable"]) == (True, True)
        assert {h["name"]: h["changed"] for h in report["hashes"]} == {
            "jax_cache_key": True, "xla_executable_fingerprint": True}
        assert [(f["kind"], f["affects"]) for f in report["findings"]] == [
            ("environment", ["jax_cache_key"]),
            ("elided_constant", ["xla_executable_fingerprint"])]
        assert "xla_dump_large_constants" in report["findings"][0]["detail"]
    report = json.loads(run_cli("diff", str(printed), str(other), "--format", "json",
                                "--no-cache", expect=1).stdout)
    assert report["same_executable"] is False
    changed = [f for f in report["findings"] if f["kind"] == "elided_constant"]
    assert len(changed) == 1 and "module.mlir shows different values" in changed[0]["detail"]


def test_a_renamed_scope_never_tops_what_made_the_executables_differ(tmp_path):
    # A renamed name_scope (metadata: no executable differs for it) beside a
    # change XLA made after optimization only (the thread partitions of a
    # machine with more cores, corpus/gen/HASHES.md): the rename was the "Top
    # cause" of "different executables", and the change claimed to move JAX's
    # key, which hashes the compile input, equal in both runs.
    for run in ("run_a", "run_b"):
        shutil.copytree(CORPUS / "jax_named_scope_rename" / run, tmp_path / run)
    optimized = tmp_path / "run_b" / "module_0006.jit_train_step.cpu_after_optimizations.txt"
    optimized.write_text(optimized.read_text().replace('"outer_dimension_partitions":["2"]',
                                                       '"outer_dimension_partitions":["4"]'))
    report = json.loads(run_cli("diff", str(tmp_path / "run_a"), str(tmp_path / "run_b"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    assert (report["recompiles"], report["same_executable"]) == (False, False)
    assert [(f["kind"], f["stage"], f["affects"]) for f in report["findings"]] == [
        ("attribute", "after_optimizations", ["xla_executable_fingerprint"]),
        ("metadata", "both", ["xla_executable_fingerprint"])]


def _copy_with(tmp_path, case: str, pattern: str, replace, files: str):
    """corpus ``case``'s run_a twice, run b's ``files`` edited with ``re.sub``."""
    for run in ("run_a", "run_b"):
        shutil.copytree(CORPUS / case / "run_a", tmp_path / run)
    for path in (tmp_path / "run_b").glob(files):
        path.write_text(re.sub(pattern, replace, path.read_text()))
    return json.loads(run_cli("diff", str(tmp_path / "run_a"), str(tmp_path / "run_b"),
                              "--format", "json", "--no-cache", expect=None).stdout)


def test_source_lines_moved_in_the_frame_tables_move_the_fingerprint(tmp_path):
    # A comment added above the jitted function moves every line in JAX's
    # FileLocations table, and no instruction's text (they say stack_frame_id=N):
    # hlodiff found nothing and said "XLA executable fingerprint: unchanged",
    # which moves for a moved line (corpus/gen/HASHES.md, experiment source_line).
    report = _copy_with(tmp_path, "jax_learning_rate", r"\bline=(\d+) end_line=(\d+)",
                        lambda m: f"line={int(m[1]) + 1} end_line={int(m[2]) + 1}",
                        "module_0006.jit_train_step.*.txt")
    assert (report["recompiles"], report["same_executable"]) == (False, True)
    assert {h["name"]: h["changed"] for h in report["hashes"]} == {
        "jax_cache_key": False, "xla_executable_fingerprint": True}
    moved, = report["findings"]
    assert (moved["kind"], moved["affects"]) == ("metadata", ["xla_executable_fingerprint"])
    assert moved["summary"].startswith("source locations moved at ")
    table = run_cli("diff", str(tmp_path / "run_a"), str(tmp_path / "run_b"), "--no-cache").stdout
    assert "metadata  source locations moved at" in table and "(none) -> (none)" not in table


def test_tensorflow_installed_elsewhere_moves_its_persistent_key(tmp_path):
    # TensorFlow records its own ops.py as every op's source_file: another
    # install path is in the module proto its persistent key hashes
    # (corpus/gen/HASHES_tf_torch.md). The origin leaves library files out, and
    # hlodiff said "TF persistent XLA cache key: unchanged" with no finding.
    report = _copy_with(tmp_path, "tf_learning_rate", "<site-packages>",
                        "/opt/venv2/lib/python3.11/site-packages", "*.txt")
    assert (report["recompiles"], report["same_executable"]) == (True, True)
    keys = {h["name"]: h["changed"] for h in report["hashes"]}
    assert keys["tf_persistent_cache_key"] is True and keys["tf_compile_signature"] is False
    assert {f["kind"] for f in report["findings"]} == {"metadata"}
    assert "/opt/venv2/lib/python3.11/site-packages" in report["findings"][0]["new"]


def test_a_function_compiled_for_two_shapes_pairs_shape_with_shape(tmp_path):
    # Run from a checkout with a longer path, the same program's modules grow
    # by the path in their metadata. Of two same-named modules (one function,
    # two shapes) the one closer in file size was paired: "Recompiles", top
    # cause "parameter f32[32,16] -> s32[32]", exit 1, while every JAX cache
    # key was the same (a helper session's real runs, jax 0.10.2).
    program = Path(__file__).parent / "programs" / "jax_two_sums.py"
    dumps = []
    for checkout in ("p", "a_longer_checkout_directory_name_xxxxxxxxxxxxxxxx"):
        (tmp_path / checkout).mkdir()
        shutil.copy(program, tmp_path / checkout / "sums.py")
        env = {**os.environ, "JAX_PLATFORMS": "cpu",
               "XLA_FLAGS": f"--xla_dump_to={tmp_path / checkout / 'dump'}"}
        subprocess.run([sys.executable, "sums.py"], cwd=tmp_path / checkout, env=env,
                       check=True, capture_output=True)
        dumps.append(tmp_path / checkout / "dump")
    report = json.loads(run_cli("diff", *map(str, dumps), "--all", "--format", "json",
                                "--no-cache", expect=0).stdout)
    assert (report["recompiles"], report["same_executable"]) == (False, True)
    assert {f["kind"] for f in report["findings"]} == {"metadata"}


def test_the_minus_one_over_the_batch_of_a_mean_follows_from_the_batch(tmp_path):
    # -1/(4B) (the backward pass of a negated mean, as optax's cross entropy has)
    # was a cause of its own, "A Python float is baked into the jitted function",
    # beside the batch size it follows from: only positive k*B and 1/(k*B) folded.
    program = Path(__file__).parent / "programs" / "jax_negative_mean.py"
    dumps = []
    for batch in ("32", "48"):
        dump = tmp_path / f"batch{batch}"
        env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_dump_to={dump}"}
        subprocess.run([sys.executable, str(program), batch], env=env, check=True,
                       capture_output=True)
        dumps.append(dump)
    report = json.loads(run_cli("diff", *map(str, dumps), "--format", "json", "--no-cache",
                                expect=1).stdout)
    top, *rest = report["findings"]
    assert (top["kind"], top["old"], top["new"]) == (
        "parameter", "f32[32,16]{1,0} parameter(1)", "f32[48,16]{1,0} parameter(1)")
    assert not [f for f in rest if f["kind"] == "constant"]
    assert ("constant", "-0.0078125", "-0.00520833349") in [
        (d["kind"], d["old"], d["new"]) for d in top["derived"]]


def test_the_fingerprint_line_agrees_with_the_one_xla_prints_after_a_cache_hit(tmp_path):
    # A run whose executable came from JAX's persistent cache dumps its
    # optimized module with the stack frame tables in another order (and as
    # after_optimizations.txt, without the platform): XLA's fingerprint, a hash
    # of that text, moved, and hlodiff said "unchanged" (a helper session's
    # flax runs). Judged here by the fingerprints XLA itself prints.
    program = Path(__file__).parent / "programs" / "jax_negative_mean.py"
    printed = re.compile(r"Fingerprint for executable jit_step: (\d+)")
    dumps, fingerprints = [], []
    for run in ("compiled", "from_cache", "compiled_again"):
        cache = tmp_path / ("cache" if run != "compiled_again" else "other_cache")
        env = {**os.environ, "JAX_PLATFORMS": "cpu",
               "XLA_FLAGS": f"--xla_dump_to={tmp_path / run}",
               "JAX_COMPILATION_CACHE_DIR": str(cache),
               "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
               "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1",
               "TF_CPP_MIN_LOG_LEVEL": "0", "TF_CPP_VMODULE": "py_executable=1"}
        log = subprocess.run([sys.executable, str(program), "32"], env=env, check=True,
                             capture_output=True, text=True).stderr
        fingerprints.append(printed.search(log)[1])
        dumps.append(tmp_path / run)
    for other in (1, 2):
        report = json.loads(run_cli("diff", str(dumps[0]), str(dumps[other]), "--module",
                                    "jit_step", "--format", "json", "--no-cache",
                                    expect=None).stdout)
        program_verdict, = report["programs"]
        assert program_verdict["same_executable"] is True
        assert program_verdict["hashes"]["xla_executable_fingerprint"] is \
            (fingerprints[0] != fingerprints[other])
    # "Same executable" beside "fingerprint: changed" says why they disagree
    assert fingerprints[0] != fingerprints[1]
    text = " ".join(run_cli("diff", str(dumps[0]), str(dumps[1]), "--module", "jit_step",
                            "--no-cache", expect=0).stdout.split())
    assert text.startswith("Same executable")
    assert "XLA executable fingerprint: changed note: the fingerprint XLA logs changed for " \
        "jit_step, though run b loaded it from JAX's persistent cache and compiled nothing" in text


def test_a_python_scalar_against_an_array_moves_jax_key_though_the_hlo_is_the_same(tmp_path):
    # The weak-typed Python float adds a stablehlo.convert that the HLO folds
    # away: both compile inputs were the same text, and hlodiff said "no
    # recompile, JAX persistent cache key: unchanged" while JAX wrote a second
    # cache entry. Judged by JAX's own cache: two entries for jit_step.
    program = Path(__file__).parent / "programs" / "jax_weak_scalar.py"
    cache = tmp_path / "cache"
    for kind in ("python", "array"):
        env = {**os.environ, "JAX_PLATFORMS": "cpu",
               "XLA_FLAGS": f"--xla_dump_to={tmp_path / kind}",
               "JAX_COMPILATION_CACHE_DIR": str(cache),
               "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
               "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}
        subprocess.run([sys.executable, str(program), kind], env=env, check=True,
                       capture_output=True)
    entries = {p.name for p in cache.iterdir() if p.name.startswith("jit_step-")}
    report = json.loads(run_cli("diff", str(tmp_path / "python"), str(tmp_path / "array"),
                                "--module", "jit_step", "--format", "json", "--no-cache",
                                expect=1).stdout)  # 1: it recompiles, the same executable (README)
    step, = report["programs"]
    assert step["hashes"]["jax_cache_key"] is (len(entries) == 2) is True
    assert (step["recompiles"], step["same_executable"]) == (True, True)
    top, = report["findings"]
    assert (top["kind"], top["affects"]) == ("stablehlo", ["jax_cache_key"])
    assert "stablehlo.convert" in top["old"]


@pytest.mark.parametrize("program, a, b, shown", [
    ("jax_result_names", "loss", "cost", "jax.result_info"),
    ("jax_weak_scalar", "python", "array", "stablehlo.convert")])
def test_a_compile_input_without_its_module_mlir_cannot_tell_jax_key_unchanged(
        tmp_path, program, a, b, shown):
    # Two byte-identical HLO texts, and JAX wrote a second cache entry: the
    # results' names (jax.result_info) and a convert XLA folds away are only
    # in the StableHLO it hashes, the dump's module.mlir. Without that file
    # (a pruned dump, the .txt files copied alone, two files given) hlodiff
    # said "Same executable, no recompile ... JAX persistent cache key:
    # unchanged", exit 0 (corpus/jax_remat_added's jit_init_fn: flax's
    # nn.remat renamed the optimizer state's results).
    script = Path(__file__).parent / "programs" / f"{program}.py"
    cache = tmp_path / "cache"
    for kind in (a, b):
        env = {**os.environ, "JAX_PLATFORMS": "cpu",
               "XLA_FLAGS": f"--xla_dump_to={tmp_path / kind}",
               "JAX_COMPILATION_CACHE_DIR": str(cache),
               "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
               "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}
        subprocess.run([sys.executable, str(script), kind], env=env, check=True,
                       capture_output=True)
    assert len({p.name for p in cache.iterdir() if p.name.startswith("jit_step-")}) == 2
    inputs = [next((tmp_path / kind).glob("*.jit_step.before_optimizations.txt"))
              for kind in (a, b)]
    assert inputs[0].read_text() == inputs[1].read_text()
    full = json.loads(run_cli("diff", str(tmp_path / a), str(tmp_path / b), "--module", "jit_step",
                              "--format", "json", "--no-cache", expect=1).stdout)
    assert full["programs"][0]["hashes"]["jax_cache_key"] is True
    assert shown in full["findings"][0]["old"] + full["findings"][0]["new"]
    pruned = {}
    for kind in (a, b):
        pruned[kind] = tmp_path / f"pruned_{kind}"
        shutil.copytree(tmp_path / kind, pruned[kind])
    shutil.rmtree(next(pruned[b].glob("module_*.jit_step")))  # run b's folder not copied
    one = [str(tmp_path / a), str(pruned[b])]
    shutil.rmtree(next(pruned[a].glob("module_*.jit_step")))
    for runs, missing in ((one, "run b"), ([str(pruned[a]), str(pruned[b])], "run a and run b"),
                          (list(map(str, inputs)), "run a and run b")):
        got = run_cli("diff", *runs, "--module", "jit_step", "--no-cache", expect=1)
        headline = " ".join(got.stdout.split("\ncompared")[0].split())
        assert headline.startswith(f"Recompiles: cannot tell (no module.mlir for jit_step in "
                                   f"{missing}: JAX's key hashes the StableHLO it holds"), headline
        assert "JAX persistent cache key: cannot tell" in got.stdout
        report = json.loads(run_cli("diff", *runs, "--module", "jit_step", "--format", "json",
                                    "--no-cache", expect=1).stdout)
        step, = report["programs"]
        assert (step["recompiles"], step["same_executable"]) == (None, True)
        assert step["hashes"]["jax_cache_key"] is None
        assert "the results' names" in step["reason"]


def test_one_run_against_a_copy_of_itself_keeps_jax_key_unchanged_with_module_mlir(tmp_path):
    # The other side of that rule: where both runs hold every program's
    # module.mlir, nothing in JAX's key is hidden, and a control stays exit 0.
    shutil.copytree(CORPUS / "jax_named_scope_rename" / "run_a", tmp_path / "run_a")
    got = run_cli("diff", str(CORPUS / "jax_named_scope_rename" / "run_a"), str(tmp_path / "run_a"),
                  "--no-cache", expect=0)
    assert got.stdout.startswith("Same executable, no recompile")
    shutil.rmtree(tmp_path / "run_a" / "module_0002.jit_zeros_like_tree")
    got = run_cli("diff", str(CORPUS / "jax_named_scope_rename" / "run_a"), str(tmp_path / "run_a"),
                  "--no-cache", expect=1)
    assert got.stdout.startswith("Recompiles: cannot tell (no module.mlir for "
                                 "jit_zeros_like_tree in run b")


def _cached_runs(tmp_path, program: str, a: str, b: str) -> tuple[set[str], dict]:
    """Two real runs of ``program`` sharing one JAX persistent cache: the
    cache's entries for jit_step (JAX's own judgement of its key) and
    hlodiff's JSON report of jit_step."""
    cache = tmp_path / "cache"
    dump_runs(tmp_path, program, a, b, env={
        "JAX_COMPILATION_CACHE_DIR": str(cache), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"})
    entries = {p.name for p in cache.iterdir() if p.name.startswith("jit_step-")}
    report = json.loads(run_cli("diff", str(tmp_path / a), str(tmp_path / b), "--module",
                                "jit_step", "--format", "json", "--no-cache", expect=1).stdout)
    return entries, report


def test_a_mask_of_ones_closed_over_against_one_built_in_the_step_recompiles_the_same(tmp_path):
    # Hugging Face's Flax BERT given attention_mask=jnp.ones_like(ids) made
    # outside the step, against none (it builds the ones inside): JAX stages a
    # splat constant dense<1> : tensor<4x16xi32> against a broadcast, and
    # wrote a second cache entry; XLA reads the splat as a broadcast, so the
    # HLO is the same. hlodiff counted the splat beside the token ids XLA
    # printed as {...} ("module.mlir holds 2 vs 1 constants of type
    # tensor<4x16xi32>: they cannot be paired") and said "Cannot tell" (a
    # helper session's run). Judged by JAX's own cache: two entries.
    entries, report = _cached_runs(tmp_path, "jax_splat_mask", "outside", "inside")
    step, = report["programs"]
    assert len(entries) == 2 and step["hashes"]["jax_cache_key"] is True
    assert (step["recompiles"], step["same_executable"]) == (True, True)
    top, = report["findings"]
    assert top["kind"] == "stablehlo" and "dense<1> : tensor<4x16xi32>" in top["old"]
    assert "outside the jitted function" in top["advice"]


def test_labels_sliced_from_token_ids_are_compared_by_the_values_xla_folded(tmp_path):
    # Hugging Face's Flax GPT-2 given an attention mask of ones against none
    # (it builds one itself, as floats cast to int): JAX wrote a second cache
    # entry, XLA made the same program. The loss's labels ids[:, 1:] are a
    # slice and a broadcast_in_dim of the ids' constant in module.mlir, which
    # XLA folds into one s32[4,15,1] constant printed as {...}; hlodiff looked
    # for a module.mlir constant of that type, found none and said "Cannot
    # tell" (a helper session's run). Judged by JAX's own cache: two entries.
    entries, report = _cached_runs(tmp_path, "jax_sliced_labels", "given", "built")
    step, = report["programs"]
    assert len(entries) == 2 and step["hashes"]["jax_cache_key"] is True
    assert (step["recompiles"], step["same_executable"]) == (True, True)
    assert [f["kind"] for f in report["findings"]] == ["stablehlo"]


def test_a_fold_of_a_constant_is_compared_on_the_elements_it_keeps():
    # what the fold keeps decides: an element the slice drops may differ
    from hlodiff.dumps.mlir import folded_in, settle
    text = """func.func public @main(%arg0: tensor<2x3xi32>) -> tensor<2x2x1xi32> {
    %c = stablehlo.constant dense<[[0, 1, 2], [3, 4, X]]> : tensor<2x3xi32>
    %0 = stablehlo.slice %c [0:2, Y:Z] : (tensor<2x3xi32>) -> tensor<2x2xi32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<2x2xi32>) -> tensor<2x2x1xi32>
    return %1 : tensor<2x2x1xi32>
  }"""

    def folded(x, start):
        return folded_in(text.replace("X", x).replace("Y", str(start))
                         .replace("Z", str(start + 2)))["2x2x1xi32"]
    assert folded("5", 0) == ["[0, 1, 3, 4]"]
    assert settle("2x2x1xi32", folded("5", 0), folded("9", 0)).differ is False
    assert settle("2x2x1xi32", folded("5", 1), folded("9", 1)).differ is True


def test_ops_that_read_an_argument_of_one_run_are_advised_as_an_input_given_once(tmp_path):
    # Keras' fit(sample_weight=w) (or class_weight) in one run only: the step
    # takes one more argument, f32[32], and multiplies the loss by it. The
    # headline was right, the advice "The model code adds operations here ...
    # look for a Python branch" (a helper session's runs) sent the user
    # hunting for a code change; it names an input given in one run only.
    dump_runs(tmp_path, "jax_sample_weight", "none", "given")
    for old, new, kind in (("none", "given", "op_added"), ("given", "none", "op_removed")):
        report = json.loads(run_cli("diff", str(tmp_path / old), str(tmp_path / new),
                                    "--module", "jit_step", "--format", "json", "--no-cache",
                                    expect=1).stdout)
        top = report["findings"][0]
        assert top["kind"] == kind and "parameter" in top["summary"]
        assert "given in one run only" in top["advice"] and "sample_weight" in top["advice"]
        assert "Python branch" not in top["advice"]
    # a layer added brings weights and ops of its own: a code change still
    layer = compare(CORPUS / "torch_layernorm_added" / "run_a",
                    CORPUS / "torch_layernorm_added" / "run_b").findings[0]
    assert layer.kind == "op_added" and "adds operations" in layer.advice


def test_a_float_set_inside_library_code_is_advised_as_the_librarys_setting(tmp_path, corpus):
    # Hugging Face's Flax BERT with hidden_dropout_prob 0.1 -> 0.2: "constant
    # 0.9 -> 0.8" at embeddings/dropout was right, the advice "pass it as an
    # array argument (jnp.asarray)" was not: the value is a config field the
    # library's own code multiplies by (a helper session's run). A literal of
    # the user's own code keeps that advice.
    dump_runs(tmp_path, "jax_library_rate", "0.1", "0.2")
    report = json.loads(run_cli("diff", str(tmp_path / "0.1"), str(tmp_path / "0.2"), "--module",
                                "jit_step", "--format", "json", "--no-cache", expect=1).stdout)
    top = report["findings"][0]
    assert (top["kind"], top["old"], top["new"]) == ("constant", "0.9", "0.8")
    assert "installed library code (minilayers)" in top["advice"]
    assert "a config field or a constructor argument" in top["advice"]
    assert "jnp.asarray" not in top["advice"]
    own = json.loads(run_cli("diff", str(corpus / "jax_dropout_rate" / "run_a"),
                             str(corpus / "jax_dropout_rate" / "run_b"), "--format", "json",
                             "--no-cache", expect=1).stdout)
    assert "jnp.asarray" in own["findings"][0]["advice"]


def _dumped_report(tmp_path, program: str, a: str, b: str, *options: str) -> dict:
    """The JSON report of two real runs of tests/programs/PROGRAM.py, variants a and b."""
    dump_runs(tmp_path, program, a, b)
    return json.loads(run_cli("diff", str(tmp_path / a), str(tmp_path / b), *options, "--format",
                              "json", "--no-cache", expect=1).stdout)


def test_an_integer_set_inside_library_code_is_advised_as_the_librarys_setting(tmp_path):
    # Keras 3 on JAX, Adam(gradient_accumulation_steps=2) against 4: "constant
    # 2 -> 4 at jit(train_step)/adam/jit(remainder)" was right, the advice
    # "pass it as an argument" was not: the optimizer takes its step count
    # modulo a constructor argument, in Keras' own code (this session's run).
    top = _dumped_report(tmp_path, "jax_library_rate", "every=2", "every=4",
                         "--module", "jit_step")["findings"][0]
    assert (top["kind"], top["old"], top["new"]) == ("constant", "2", "4")
    assert top["advice"].startswith("An integer set inside installed library code (minilayers)")
    assert "pass it as an argument" not in top["advice"]


def test_a_learning_rate_of_one_against_two_names_the_value_and_why_it_shows_as_added(tmp_path):
    # JAX folds ``p - 1.0 * g`` to ``p - g`` when it lowers the step, so a
    # learning rate of 1 against 2 is no constant change: run b has a multiply
    # run a lacks. The report said "added: 4 ops (multiply, constant,
    # broadcast)" and "the model code adds operations here", which sent the
    # user hunting for a code change; the value 2 was nowhere.
    top = _train_step_diff(tmp_path, "1.0", "2.0")
    assert (top["kind"], top["origin"]["op_name"]) == ("op_added", "jit(train_step)/sgd/mul")
    assert "constant(2)" in top["summary"]
    assert "was 1 or 0 in run a" in top["advice"] and "scales or shifts by 2" in top["advice"]


def test_a_float_printed_without_a_point_is_still_a_python_float(tmp_path):
    # XLA prints the f32 learning rates 2.0 and 3.0 as "2" and "3"; the advice
    # read the digits and called them "an integer (a loop bound, a step count)".
    top = _train_step_diff(tmp_path, "2.0", "3.0")
    assert (top["kind"], top["old"], top["new"]) == ("constant", "2", "3")
    assert top["advice"].startswith("A Python float is baked into the jitted function")


def _train_step_diff(tmp_path, lr_a: str, lr_b: str) -> dict:
    """The top finding of two real runs of tests/programs/jax_train_step.py
    that differ in the learning rate only."""
    program = Path(__file__).parent / "programs" / "jax_train_step.py"
    for lr in (lr_a, lr_b):
        env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_dump_to={tmp_path / lr}"}
        subprocess.run([sys.executable, str(program), lr, "16", str(tmp_path / f"{lr}.json")],
                       env=env, check=True, capture_output=True)
    report = json.loads(run_cli("diff", str(tmp_path / lr_a), str(tmp_path / lr_b),
                                "--format", "json", "--no-cache", expect=1).stdout)
    return report["findings"][0]


@pytest.mark.parametrize("devices_a, run_b, devices_b, says", [
    ("1", ("0.5", "0"), "1", "compile option exec_time_optimization_effort: (default) -> 0.5"),
    ("2", ("0", "1"), "2", "compile option device_assignment.computation_devices.replica_device_ids"),
    ("1", ("0", "0"), "2", "device topology: 1 host device -> 2 host devices"),
], ids=["effort", "device", "host-devices"])
def test_compile_options_and_topology_move_jax_key_without_moving_the_hlo(
        tmp_path, devices_a, run_b, devices_b, says):
    # Three pairs of real runs whose HLO and optimized files are the same
    # text, and which JAX nevertheless keyed apart (a helper session counted
    # its cache entries): hlodiff said "Same executable, no recompile, JAX
    # persistent cache key: unchanged". The difference is in the module's
    # compile_options.textproto or topology.textproto, which JAX hashes.
    program = Path(__file__).parent / "programs" / "jax_compile_options.py"
    cache = tmp_path / "cache"
    for side, arguments, devices in (("a", ("0", "0"), devices_a), ("b", run_b, devices_b)):
        env = {**os.environ, "JAX_PLATFORMS": "cpu",
               "XLA_FLAGS": f"--xla_dump_to={tmp_path / side} "
                            f"--xla_force_host_platform_device_count={devices}",
               "JAX_COMPILATION_CACHE_DIR": str(cache),
               "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
               "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}
        subprocess.run([sys.executable, str(program), *arguments], env=env, check=True,
                       capture_output=True)
    entries = [p.name for p in cache.iterdir() if p.name.startswith("jit_train_step-")]
    report = json.loads(run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--module",
                                "jit_train_step", "--format", "json", "--no-cache",
                                expect=1).stdout)  # 1: it recompiles, the same executable (README)
    step, = report["programs"]
    assert step["hashes"]["jax_cache_key"] is (len(entries) == 2) is True
    assert (step["recompiles"], step["same_executable"]) == (True, True)
    assert says in report["findings"][0]["detail"]
    # A baseline keeps those files, so a pre-merge check sees the same
    run_cli("baseline", str(tmp_path / "a"), "-o", str(tmp_path / "baseline.json"))
    checked = run_cli("check", "--baseline", str(tmp_path / "baseline.json"), str(tmp_path / "b"),
                      expect=1)  # a gate on the exit code hears that it recompiles
    assert "Recompiles (jit_train_step), but XLA produces the same executable" in checked.stdout


def test_a_layer_added_to_weights_named_by_position_is_a_layer_with_its_weights(tmp_path):
    # JAX names a list's leaves by position (params[2][0]): a hidden layer more
    # shifts every later name, so the step's old output weights were paired by
    # name with the new hidden ones, and the top cause read "dimension 4 -> 32
    # in params[2][0]". Helper sessions met it with equinox (eqx.nn.MLP depth
    # 2 -> 3), Keras (a Dense layer added) and optax.MultiSteps.
    dump_runs(tmp_path, "jax_layer_added", "2", "3")
    report = json.loads(run_cli("diff", str(tmp_path / "2"), str(tmp_path / "3"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    top = report["findings"][0]
    assert top["kind"] == "op_added"
    assert "with 4 new parameters (f32[32,32]{1,0}, f32[32]{0})" in top["summary"]
    assert not [f for f in report["findings"] if f["kind"] == "parameter"]


def test_a_clip_norm_of_one_sharing_another_constant_is_a_constant_change(tmp_path):
    # With a clip norm of 1, the clip's compare reads the 1 of the bias
    # correction (JAX keeps one constant per value); with 0.5 it reads its
    # own. `constants` said "No constant varies across the 2 runs" and `diff`
    # said "added: constant(0.5)" with the advice to look for a code change
    # (a helper session's optax clip_by_global_norm 1.0 -> 0.5 run).
    dump_runs(tmp_path, "jax_clip_norm", "1.0", "0.5")
    a, b = str(tmp_path / "1.0"), str(tmp_path / "0.5")
    listed = json.loads(run_cli("constants", a, b, "--format", "json", expect=1).stdout)
    varying = {(c["origin"]["op_name"], tuple(c["values"])) for c in listed["constants"]}
    assert ("jit(train_step)/lt", ("1", "0.5")) in varying
    for old, new, x, y in (("1", "0.5", a, b), ("0.5", "1", b, a)):
        top = json.loads(run_cli("diff", x, y, "--format", "json", "--no-cache",
                                 expect=1).stdout)["findings"][0]
        assert (top["kind"], top["old"], top["new"]) == ("constant", old, new)
        assert top["origin"]["op_name"] == "jit(train_step)/lt"


def test_helpers_retyped_by_x64_pair_shape_with_shape_and_the_same_step_is_said(tmp_path):
    # jax_enable_x64 makes the scalar of each eager `normal(...) * 0.1` an f64
    # argument: no jit_multiply kept its interface, so the three paired by
    # file size, crosswise (f32[32,32] with f32[32,4]: a false "input got
    # smaller"), and the verdict named only helpers while the train step was
    # the same. A helper session's run.
    dump_runs(tmp_path, "jax_x64", "0", "1")
    result = run_cli("diff", str(tmp_path / "0"), str(tmp_path / "1"), "--no-cache", expect=1)
    assert "the main program jit_train_step is the same" in " ".join(result.stdout.split())
    report = json.loads(run_cli("diff", str(tmp_path / "0"), str(tmp_path / "1"), "--format",
                                "json", "--no-cache", expect=1).stdout)
    multiplies = [(p["a"], p["b"]) for p in report["programs"]
                  if p["program"].startswith("jit_multiply")]
    assert len(multiplies) == 3 and all(a == b for a, b in multiplies)


def test_a_run_that_loaded_its_programs_from_jax_cache_compiled_nothing(tmp_path):
    # A run that loads every program from JAX's persistent cache dumps only
    # their optimized text, named without a platform. The text said "compared
    # 11 more programs that differ" while the JSON said every one was the
    # same executable (a helper session's Keras run).
    program = Path(__file__).parent / "programs" / "jax_x64.py"
    for side in ("a", "b"):
        env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_dump_to={tmp_path / side}",
               "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache"),
               "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
               "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}
        subprocess.run([sys.executable, str(program), "0"], env=env, check=True,
                       capture_output=True)
    # And it said "Recompiles: cannot tell": a run that loaded a program from
    # the cache compiled nothing.
    text = " ".join(run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--no-cache",
                            expect=0).stdout.split())
    assert text.startswith("Same executable, no recompile: run b loaded every program from "
                           "JAX's persistent cache.")
    assert "that differ" not in text
    listed = " ".join(run_cli("ls", str(tmp_path / "b")).stdout.split())
    assert re.search(r"\b\d+ modules loaded from JAX's persistent cache, not compiled", listed)


def test_an_activation_swapped_is_ops_replaced_not_a_constant_changed(tmp_path):
    # tanh -> relu (a static argument): the 1 of tanh's derivative and the 0 of
    # relu's x > 0 are each broadcast to the same shape, and the two
    # broadcasts paired, so the top cause read "constant 1 -> 0 at
    # jit(train_step)/jvp()/gt" with the advice for a loop bound (a helper
    # session's run).
    dump_runs(tmp_path, "jax_activation", "tanh", "relu")
    report = json.loads(run_cli("diff", str(tmp_path / "tanh"), str(tmp_path / "relu"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    top = report["findings"][0]
    assert top["kind"] in ("replaced", "opcode")
    assert "relu" in top["origin"]["op_name"] and "tanh" in (top["old"] or "")
    assert not [f for f in report["findings"] if f["kind"] == "constant"]


def test_optimizer_state_renamed_in_place_is_no_parameter_order_change(tmp_path):
    # optax.chain(clip_by_global_norm, adamw) puts the clip's (empty) state
    # first: every moment keeps its place and shape, and its name moves from
    # opt_state[0] to opt_state[1], which named the other moment before. The
    # top cause read "parameter order: ... moved from position 31 to 54" (a
    # helper session's GPT-2 run, whose entry layouts were byte-identical).
    dump_runs(tmp_path, "jax_clip_chain", "0", "1")
    report = json.loads(run_cli("diff", str(tmp_path / "0"), str(tmp_path / "1"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    assert not [f for f in report["findings"] if f["kind"].startswith("parameter")]
    top = report["findings"][0]
    assert top["kind"] == "op_added" and top["origin"]["source_line"] in (25, 26)


def test_a_weight_the_step_returns_is_no_batch_when_its_first_dimension_grows(tmp_path):
    # A vocabulary of 128 -> 160 read "batch 128 -> 160 in params[...]['embedding']"
    # with the advice to feed every step the same batch size (a helper
    # session's GPT-2 run; also a flax nnx scan over 3 -> 4 layers).
    dump_runs(tmp_path, "jax_vocabulary", "100", "120")
    top = json.loads(run_cli("diff", str(tmp_path / "100"), str(tmp_path / "120"), "--format",
                             "json", "--no-cache", expect=1).stdout)["findings"][0]
    assert top["summary"].startswith("model dimension 100 -> 120 in params['embedding']")
    assert "batch size" not in top["advice"]


def test_more_attention_heads_are_a_reshape_not_a_constant(tmp_path):
    # GPT-2 with 2 -> 4 heads read "constant 4 -> 2.828 at attn/div" (the
    # sqrt of the head size) with the advice for a Python float, the 111
    # reshaped shapes folded under it (a helper session's run). The reshape
    # that splits the heads is the cause; the scale and the mean's 1/N follow.
    dump_runs(tmp_path, "jax_heads", "2", "4")
    report = json.loads(run_cli("diff", str(tmp_path / "2"), str(tmp_path / "4"), "--format",
                                "json", "--no-cache", expect=1).stdout)
    top, = report["findings"]
    assert (top["kind"], top["old"], top["new"]) == \
        ("shape", "f32[4,16,2,16]{3,2,1,0}", "f32[4,16,4,8]{3,2,1,0}")
    assert top["origin"]["op_name"].endswith("/reshape")
    assert {d["kind"] for d in top["derived"]} == {"constant", "shape"}


def test_a_set_iterated_in_another_order_is_the_same_operations_in_another_order(tmp_path):
    # Summing a loss per weight over a set of names: the set's order changes
    # with PYTHONHASHSEED, so every process traces the same operations in
    # another order and JAX writes another cache entry. hlodiff said
    # "operands tanh(dot f32[2,4]) -> tanh(dot f32[2,4])" five times over,
    # the two sides alike, and said nothing of why.
    cache = tmp_path / "cache"
    knobs = {"JAX_COMPILATION_CACHE_DIR": str(cache),
             "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
             "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
    for seed in ("1", "2"):  # two seeds these five names iterate in another order
        dump_runs(tmp_path, "jax_set_order", seed, env={**knobs, "PYTHONHASHSEED": seed})
    assert len(list(cache.glob("jit_train_step-*"))) == 2  # JAX's key moved
    report = json.loads(run_cli("diff", str(tmp_path / "1"), str(tmp_path / "2"), "--format",
                                "json", "--no-cache", expect=1).stdout)
    top, = report["findings"]
    assert top["kind"] == "operands" and top["count"] == 5
    assert top["summary"].startswith("the same operations in another order")
    assert "PYTHONHASHSEED" in top["advice"] and "sorted(" in top["advice"]
    assert top["origin"]["source_line"] == 20
    assert top["old"] != top["new"]  # what each reads, not "tanh(dot f32[2,4])" twice
    assert "weights['" in top["old"]
    same = json.loads(run_cli("diff", str(tmp_path / "1"), str(tmp_path / "1"), "--format",
                              "json", "--no-cache").stdout)
    assert same["findings"] == []


def test_another_prng_implementation_is_key_data_not_a_batch(tmp_path):
    # jax_default_prng_impl threefry2x32 -> rbg read "batch 2 -> 4 in key
    # u32[2]" with the advice to feed every step the same batch size, and the
    # threefry loop's three computations as rows of their own (a helper
    # session's run).
    report = _dumped_report(tmp_path, "jax_prng_impl", "threefry2x32", "rbg",
                            "--module", "jit_train_step")
    top = report["findings"][0]
    assert top["summary"].startswith("PRNG key data 2 -> 4 in key")
    assert "jax_default_prng_impl" in top["advice"] and "batch" not in top["advice"]
    assert not [f for f in report["findings"] if f["kind"].startswith("computation_")]


def test_another_threefry_layout_is_advised_as_a_prng_setting_not_a_cast(tmp_path):
    # jax_threefry_partitionable flipped read "dtype u64[4] -> u32[64] at iota"
    # with the advice to check mixed-precision settings and casts (a helper
    # session's run): every place is inside the code JAX lowers random to.
    dump_runs(tmp_path, "jax_prng_impl", "threefry2x32", "unpartitioned")
    report = json.loads(run_cli("diff", str(tmp_path / "threefry2x32"),
                                str(tmp_path / "unpartitioned"), "--module", "jit_train_step",
                                "--format", "json", "--no-cache", expect=1).stdout)
    assert report["findings"]
    for finding in report["findings"]:
        assert "jax_threefry_partitionable" in finding["advice"], finding
        assert "mixed-precision" not in finding["advice"]


def test_an_xla_option_from_jits_compiler_options_is_advised_there_too(tmp_path):
    # jax.jit(..., compiler_options={"xla_cpu_enable_fast_math": True}) read
    # "XLA_FLAGS differ between the runs", where XLA_FLAGS were the same (a
    # helper session's run): the dump's .debug_options show both alike.
    dump_runs(tmp_path, "jax_fast_math", "off", "on")
    report = json.loads(run_cli("diff", str(tmp_path / "off"), str(tmp_path / "on"), "--format",
                                "json", "--no-cache", expect=1).stdout)
    top = report["findings"][0]
    assert top["kind"] == "environment" and "xla_cpu_enable_fast_math" in top["new"]
    assert "compiler_options" in top["advice"]


def test_momentum_added_is_a_code_change_not_a_value_folded_away(tmp_path):
    # optax.sgd(lr) against sgd(lr, momentum=0.9) read "Run b scales or
    # shifts by 0.9 ... or a value was 1 or 0 in run a, where its multiply is
    # folded away. Pass such values as arguments.": but the ops came with a
    # trace per weight, new arguments of the step, which no folding removes.
    dump_runs(tmp_path, "jax_momentum", "plain", "momentum")
    report = json.loads(run_cli("diff", str(tmp_path / "plain"), str(tmp_path / "momentum"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    top = report["findings"][0]
    assert top["kind"] == "op_added" and "constant(0.9)" in top["new"]
    assert "new parameters" in top["summary"]
    assert "folded away" not in top["advice"] and "code change" in top["advice"]


@pytest.mark.skipif(len(getattr(os, "sched_getaffinity", lambda _: ())(0)) < 2,
                    reason="needs two cores to take one away")
def test_fewer_cores_is_advised_as_the_machine_not_the_code(tmp_path):
    # A run limited to one core (taskset) read "attribute (none) ->
    # {outer_dimension_partitions: [2]} at prog.py:3" with the advice to look
    # at the code there for a changed option (a helper session's run).
    dump_runs(tmp_path, "jax_cores", "all", "one")
    report = json.loads(run_cli("diff", str(tmp_path / "all"), str(tmp_path / "one"),
                                "--format", "json", "--no-cache", expect=None).stdout)
    split = [f for f in report["findings"] if "outer_dimension_partitions" in
             f"{f['old']} {f['new']}"]
    assert split, report["findings"]
    assert all("cores" in f["advice"] and "look at the code" not in f["advice"] for f in split)


def _set_orders_apart(names: list[str]) -> tuple[str, str]:
    """Two hash seeds under which a set of ``names`` iterates in other orders."""
    orders = {}
    for seed in map(str, range(1, 20)):
        done = subprocess.run([sys.executable, "-c", f"print(list(set({names!r})))"],
                              env={**os.environ, "PYTHONHASHSEED": seed},
                              capture_output=True, text=True, check=True)
        orders.setdefault(done.stdout, seed)
        if len(orders) == 2:
            return tuple(orders.values())
    raise AssertionError("one order under every seed")


def test_a_list_of_weights_built_from_a_set_is_the_same_arguments_in_another_order(tmp_path):
    # Heads of widths 3, 7, 5, 2, 4 in a list built from a set, under two
    # PYTHONHASHSEEDs, the code unchanged: "model dimension 3 -> 4 in
    # st[0].mu['heads'][3]" with the advice that the configuration changed
    # (a helper session's optax run).
    first, second = _set_orders_apart(["sentiment", "topic", "language", "toxicity", "length"])
    for seed in (first, second):
        dump_runs(tmp_path, "jax_set_heads", seed, env={"PYTHONHASHSEED": seed})
    report = json.loads(run_cli("diff", str(tmp_path / first), str(tmp_path / second),
                                "--module", "jit_train_step", "--format", "json", "--no-cache",
                                expect=1).stdout)
    top = report["findings"][0]
    assert top["kind"] == "parameter_order" and "PYTHONHASHSEED" in top["advice"]
    assert not [f for f in report["findings"] if f["kind"] == "parameter"]


@pytest.mark.parametrize("run_b, graphs", [("torch_extra_mark_dump", 2), ("torch_compile_dump", 4)])
def test_a_step_split_into_several_graphs_reads_as_a_split_not_removed_code(run_b, graphs):
    """An extra xm.mark_step() after backward (or torch.compile) compiles the step of run a
    in several graphs; the operations missing from the paired graph run in the others (the
    truth files book each graph torch-xla compiled and ran, corpus/logs/torch_*.truth.json).
    Before, the diff advised a code change for 'removed: 13 ops' and warned that run a
    never compiled run b's main program (did it stop before?)."""
    logs = CORPUS / "logs"
    document = json.loads(run_cli("diff", str(logs / "torch_plain_dump"), str(logs / run_b),
                                  "--format", "json", expect=1).stdout)
    (split,) = document["splits"]
    assert (split["run"], len(split["modules"])) == ("b", graphs)
    assert 2 * split["moved"] >= split["missing"] > 0
    assert not any("did it stop before" in w for w in document["warnings"])
    removed = [f for f in document["findings"] if f["kind"] == "op_removed"]
    assert removed and all(f["advice"].startswith("These operations still run") for f in removed)
    text = run_cli("diff", str(logs / "torch_plain_dump"), str(logs / run_b), expect=1).stdout
    assert f"Top cause: run b compiled in {graphs} graphs" in " ".join(text.split())


def test_a_layer_setting_baked_in_is_advised_as_one(corpus):
    # Keras' Dropout(0.1) against Dropout(0.3) on the JAX backend read only
    # "pass it as an array argument (jnp.asarray)": a layer's rate is no
    # argument of the step a user could pass so. The advice names such
    # settings, as TensorFlow's does, and that each value compiles its own.
    report = json.loads(run_cli("diff", str(corpus / "jax_dropout_rate" / "run_a"),
                                str(corpus / "jax_dropout_rate" / "run_b"), "--format", "json",
                                "--no-cache", expect=1).stdout)
    top = report["findings"][0]
    assert (top["kind"], top["old"], top["new"]) == ("constant", "0.9", "0.8")
    assert "a dropout rate" in top["advice"] and "a program of its own" in top["advice"]


def test_a_scan_length_that_sizes_an_input_is_a_loop_length_not_a_batch(tmp_path):
    # lax.scan over xs[:T] with length=T, T 6 -> 10: the step's xs grows in
    # its first dimension, and the scan's while loop compares its counter
    # with T. The top cause read "batch 6 -> 10 in xs" with batch-size advice
    # (a helper session's RNN run); 10 -> 6 advised dropping a short last batch.
    dump_runs(tmp_path, "jax_scan_length", "6", "10")
    for old, new in (("6", "10"), ("10", "6")):
        report = json.loads(run_cli("diff", str(tmp_path / old), str(tmp_path / new), "--format",
                                    "json", "--no-cache", expect=1).stdout)
        top = report["findings"][0]
        assert top["summary"].startswith(f"loop length {old} -> {new} in xs f32[{old},5,4]")
        assert "lax.scan" in top["advice"] and "batch" not in top["advice"]


RESIDUAL = """HloModule jit_step, entry_computation_layout={(f32[8]{0}, f32[8]{0}, f32[8]{0})->(f32[8]{0}, f32[8]{0})}

ENTRY %main.1 (x.2: f32[8], w.3: f32[8], g.4: f32[8]) -> (f32[8], f32[8]) {
  %x.2 = f32[8]{0} parameter(0), metadata={op_name="x"}
  %w.3 = f32[8]{0} parameter(1), metadata={op_name="w"}
  %g.4 = f32[8]{0} parameter(2), metadata={op_name="g"}
  %mul.5 = f32[8]{0} multiply(%x.2, %w.3), metadata={op_name="jit(step)/jvp(LM)/layers_0/mul" source_file="model.py" source_line=20}
  %tanh.6 = f32[8]{0} tanh(%mul.5), metadata={op_name="jit(step)/jvp(LM)/layers_0/tanh" source_file="model.py" source_line=21}
  FORWARD
  %mul.8 = f32[8]{0} multiply(%g.4, %tanh.6), metadata={op_name="jit(step)/transpose(jvp(LM))/layers_0/mul" source_file="model.py" source_line=21}
  %mul.9 = f32[8]{0} multiply(%mul.8, %w.3), metadata={op_name="jit(step)/transpose(jvp(LM))/layers_0/mul" source_file="model.py" source_line=20}
  BACKWARD
  ROOT %tuple.12 = (f32[8]{0}, f32[8]{0}) tuple(OUTPUT, GRADIENT)
}
"""


def test_a_residual_added_shows_the_forward_add_before_the_gradient_sums_it_brings(tmp_path):
    # A residual `x = x + h` adds one add to the forward pass and, in the
    # backward pass JAX derives from it, the sums of the gradients that now
    # reach x twice (add_any in transpose(jvp(...))): more ops there, so the
    # backward pass's finding came first (a helper session's flax run).
    a = RESIDUAL.replace("FORWARD\n", "").replace("BACKWARD\n", "") \
        .replace("OUTPUT", "%tanh.6").replace("GRADIENT", "%mul.9")
    b = RESIDUAL.replace("FORWARD", '%add.7 = f32[8]{0} add(%x.2, %tanh.6), metadata={op_name='
                         '"jit(step)/jvp(LM)/layers_0/add" source_file="model.py" source_line=22}') \
        .replace("BACKWARD", '%add_any.10 = f32[8]{0} add(%mul.9, %g.4), metadata={op_name='
                 '"jit(step)/transpose(jvp(LM))/layers_0/ln1/add_any" source_file="model.py" '
                 'source_line=19}\n  %add_any.11 = f32[8]{0} add(%add_any.10, %g.4), metadata={'
                 'op_name="jit(step)/transpose(jvp(LM))/layers_0/ln1/add_any" '
                 'source_file="model.py" source_line=19}') \
        .replace("OUTPUT", "%add.7").replace("GRADIENT", "%add_any.11")
    report, code = diff(tmp_path, a, b, "--no-cache", expect=1)
    added = [(f["origin"]["op_name"], f["count"]) for f in report["findings"]
             if f["kind"] == "op_added"]
    assert added == [("jit(step)/jvp(LM)/layers_0/add", 1),
                     ("jit(step)/transpose(jvp(LM))/layers_0/ln1/add_any", 2)]


def test_layers_stacked_for_a_scan_are_said_so_not_a_model_dimension(tmp_path):
    # Layers kept apart against the same layers stacked and scanned (flax's
    # nn.scan): the step's arguments, paired by position across two trees of
    # weights, read "model dimension 8 -> 3 in nu['layers']['scale']" (a
    # helper session's flax run read "model dimension 8 -> 16").
    dump_runs(tmp_path, "jax_stacked_layers", "loop", "scan")
    for old, new, said in (("loop", "scan", "layers stacked: run b holds the weights of 3 "
                            "layers stacked, one argument per weight, 41 -> 17 arguments"),
                           ("scan", "loop", "layers unstacked: run b holds the weights of 3 "
                            "layers one argument per layer, 17 -> 41 arguments")):
        report = json.loads(run_cli("diff", str(tmp_path / old), str(tmp_path / new), "--format",
                                    "json", "--no-cache", expect=1).stdout)
        top = report["findings"][0]
        assert top["summary"].startswith(said) and "nn.scan" in top["advice"]
        assert not [f for f in report["findings"] if "dimension" in f["summary"]]


def test_a_count_of_steps_leads_the_last_step_index_computed_from_it(tmp_path):
    # Accumulating gradients over K steps, as optax.MultiSteps does, bakes in
    # K (the counter's modulo) and K - 1 (the step that applies the update).
    # K 2 -> 4 read "constant 1 -> 3" at the compare, the value the user never
    # wrote (a helper session's MultiSteps every_k 2 -> 4 run).
    dump_runs(tmp_path, "jax_every_k", "2", "4")
    report = json.loads(run_cli("diff", str(tmp_path / "2"), str(tmp_path / "4"), "--format",
                                "json", "--no-cache", expect=1).stdout)
    top = report["findings"][0]
    assert (top["kind"], top["old"], top["new"]) == ("constant", "2", "4")
    assert top["origin"]["op_name"] == "jit(train_step)/jit(remainder)"
    assert [(d["old"], d["new"], d["detail"]) for d in top["derived"]
            if d["kind"] == "constant"] == [("1", "3", "x - 1 of it")]
    assert [f for f in report["findings"] if f["kind"] == "constant"] == [top]


def test_a_value_that_becomes_another_constants_value_is_still_a_constant_change(tmp_path):
    # An EMA decay 0.99 -> 0.999 beside Adam's b2 = 0.999 read "removed: 4 ops
    # (constant(0.99), broadcast)" with code-change advice: JAX keeps one
    # constant (and one broadcast) per value, so at 0.999 the EMA reads Adam's
    # and its own disappear; 1 - decay, 0.01 (the learning rate's) then 0.001
    # (Adam's 1 - b2), read "operands" (a helper session's optax run).
    dump_runs(tmp_path, "jax_ema_decay", "0.99", "0.999")
    report = json.loads(run_cli("diff", str(tmp_path / "0.99"), str(tmp_path / "0.999"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    kinds = [f["kind"] for f in report["findings"]]
    assert kinds == ["constant"], report["findings"]
    top = report["findings"][0]
    values = {(top["old"], top["new"])} | {(d["old"], d["new"]) for d in top["derived"]
                                           if d["kind"] == "constant"}
    assert {("0.99", "0.999"), ("0.01", "0.001")} <= values
    assert top["origin"]["source_line"] == 28  # the EMA's line, not Adam's


def test_the_decay_the_user_wrote_leads_its_one_minus_decay(tmp_path):
    # The same EMA decay 0.99 -> 0.999 led with "constant 0.01 -> 0.001", its
    # 1 - decay, the decay under it as "1 - x of it": the two print alike and
    # 1 - x relates them both ways, so the first found led. The decay is the
    # EMA's own literal in run a; 0.01 and 0.001 are in each run the
    # constants of other lines (the learning rate's, Adam's 1 - b2).
    dump_runs(tmp_path, "jax_ema_decay", "0.99", "0.999")
    for x, y in (("0.99", "0.999"), ("0.999", "0.99")):
        got = run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--no-cache", expect=1)
        assert f"Top cause: constant {x} -> {y} at" in got.stdout
        top = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format",
                                 "json", "--no-cache", expect=1).stdout)["findings"][0]
        complement = {"0.99": "0.01", "0.999": "0.001"}
        assert [(d["old"], d["new"], d["detail"]) for d in top["derived"]
                if d["kind"] == "constant"] == [(complement[x], complement[y], "1 - x of it")]


def test_a_compile_input_checked_in_outside_its_dump_is_still_a_compile_input(tmp_path):
    # TF's concat -> stack rewrite: the compile inputs differ, XLA's optimized
    # programs do not. A dump's before_optimizations file checked into git
    # (collect.before_optimizations.txt) was read as the program itself:
    # "different executables", where the dump folders say "cannot tell"
    # (a new user's git diff).
    case = CORPUS / "tf_concat_vs_stack"
    for stage, same in (("before_optimizations", None), ("cpu_after_optimizations", True)):
        paths = []
        for run in ("run_a", "run_b"):
            (found,) = (case / run).glob(f"*.{stage}.txt")
            paths.append(tmp_path / run / f"collect.{stage}.txt")
            paths[-1].parent.mkdir(exist_ok=True)
            paths[-1].write_text(found.read_text())
        report = json.loads(run_cli("diff", *map(str, paths), "--format", "json", "--no-cache",
                                    expect=None).stdout)
        assert report["same_executable"] is same, stage


def test_a_change_seen_before_optimization_alone_does_not_claim_the_executable(tmp_path):
    # Dumps of the compile input only: the footer said "XLA executable
    # fingerprint: cannot tell" while the finding's moves column said
    # "JAX, XLA" (a new user's dumps). What XLA makes of a changed compile
    # input is not in such a dump (TF's concat -> stack rewrite compiles alike).
    for run in ("run_a", "run_b"):
        (tmp_path / run).mkdir()
        for path in (CORPUS / "jax_learning_rate" / run).glob("*.before_optimizations.txt"):
            shutil.copy(path, tmp_path / run)
    report = json.loads(run_cli("diff", str(tmp_path / "run_a"), str(tmp_path / "run_b"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    top = report["findings"][0]
    assert (top["kind"], top["old"], top["new"]) == ("constant", "0.01", "0.02")
    assert report["programs"][0]["hashes"]["xla_executable_fingerprint"] is None
    assert top["affects"] == ["jax_cache_key"]


def test_a_dropout_switched_off_is_told_at_the_dropout_not_at_the_key_split(tmp_path):
    # equinox's eqx.nn.Dropout(p, inference=True): the dropout's ops go, and
    # with them the split of the step's key that only they read (JAX leaves
    # out what nothing reads). The removed ops' first in program order, that
    # split, was the top cause's origin: "removed: 9 ops ... at
    # jit(train_step)/jit(_threefry_split) (train.py:31)", the line
    # `keys = jax.random.split(key, n)` the user did not change (a helper
    # session's equinox run). Most of the ops come from the dropout's lines.
    dump_runs(tmp_path, "jax_dropout_inference", "0", "1")
    for x, y, kind in (("0", "1", "op_removed"), ("1", "0", "op_added")):
        top = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format", "json",
                                 "--no-cache", expect=1).stdout)["findings"][0]
        assert top["kind"] == kind
        assert top["origin"]["source_file"].endswith("jax_dropout_inference.py")
        assert top["origin"]["source_line"] in (21, 22)  # dropout's body, not the split (27)
        assert "_threefry_split" not in top["origin"]["op_name"]


def test_a_block_put_under_checkpoint_is_the_remat_not_a_copied_bernoulli(tmp_path):
    # Hugging Face's FlaxBertForSequenceClassification(config,
    # gradient_checkpointing=True): JAX traces the checkpointed layers apart,
    # so their dropouts call a copy of the bernoulli the embedding's dropout
    # calls (_bernoulli_8 next to _bernoulli, each with its own _uniform).
    # The copy, alike but for names, was the top cause, "called_computation
    # _bernoulli.20 (7 instructions) -> _bernoulli_8.30 (7 instructions)",
    # above the 470 ops jax.checkpoint adds (a helper session's run).
    # The checkpoint is the cause, told as such (hlodiff/analysis/recompute.py).
    dump_runs(tmp_path, "jax_remat_block", "0", "1")
    for x, y, run in (("0", "1", "b"), ("1", "0", "a")):
        report = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format",
                                    "json", "--no-cache", expect=1).stdout)
        top = report["findings"][0]
        assert top["summary"].startswith(f"jax.checkpoint (remat) in run {run} only: the "
                                         "backward pass recomputes"), top["summary"]
        assert "(, " not in top["summary"]
        assert not [f for f in report["findings"] if f["kind"] in (
            "called_computation", "computation_added", "computation_removed")]


def test_a_helper_compiled_in_two_graphs_does_not_take_the_main_programs_headline(tmp_path):
    # A Hugging Face Flax BERT with gradient_checkpointing=True: its eager
    # set-up compiled jit_reduce_sum twice where the other run compiled
    # jit__reduce_sum once, and the headline's top cause was that split,
    # "run b compiled in 2 graphs (module_0210.jit_reduce_sum, ...)", while
    # the table's first row, the train step's, was the cause (a helper
    # session's run). The split stays in the report, under its own program.
    dump_runs(tmp_path, "jax_helper_split", "0", "1")
    text = " ".join(run_cli("diff", str(tmp_path / "0"), str(tmp_path / "1"), "--no-cache",
                            expect=1).stdout.split())
    assert "Top cause: constant 0.01 -> 0.02 at jit(train_step)/mul" in text
    report = json.loads(run_cli("diff", str(tmp_path / "0"), str(tmp_path / "1"), "--format",
                                "json", "--no-cache", expect=1).stdout)
    assert [s["program"] for s in report["splits"]] == ["jit_prepare"]


def test_a_step_run_without_jit_is_not_paired_with_a_jitted_add(tmp_path):
    # Keras on the JAX backend with jit_compile=False runs the step op by op
    # through its backend's jitted functions. Run b's largest program, a
    # jitted add, was paired with run a's jit_train_step "only as the largest
    # of each run", and the top cause read "batch 16 -> 32 in argument 0
    # f32[16,4] at jit(add)/add" (a helper session's Keras run). A training
    # step and a program that runs no backward pass are not one program.
    dump_runs(tmp_path, "jax_step_unjitted", "jit", "eager")
    for x, y, run in (("jit", "eager", "a"), ("eager", "jit", "b")):
        report = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format",
                                    "json", "--no-cache", expect=1).stdout)
        assert any(w.startswith(f"run {run}'s main program, jit_train_step, has no counterpart")
                   for w in report["warnings"]), report["warnings"]
        assert not [p for p in report["programs"] if "jit_train_step" in (p["a"] or "") + (
            p["b"] or "")]
        text = " ".join(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--no-cache",
                                expect=1).stdout.split())
        assert "batch" not in text


def test_a_layer_run_op_by_op_is_told_by_its_programs_not_by_a_helpers_metadata(tmp_path):
    # Keras on the JAX backend with jit_compile=False, a Dropout added (a
    # helper session's run): JAX compiles each operation on its first call,
    # with that call's stack as metadata. The Dropout's select came first, so
    # jit_select_n, the same program in both runs, carried relu's stack in
    # one and the Dropout's in the other, and that metadata led the headline
    # ("Top cause: metadata nn.py:35 ... -> random.py:83 ... at
    # jit(select_n)"); here a zeros_like helper's did. The Dropout's own
    # programs, compiled by one run alone, are the cause.
    dump_runs(tmp_path, "jax_eager_dropout", "plain", "dropout")
    for x, y, run in (("plain", "dropout", "b"), ("dropout", "plain", "a")):
        text = " ".join(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--no-cache",
                                expect=1).stdout.split())
        headline = text[text.index("Recompiles"):text.index(" compared ")]
        assert f"Top cause: run {run} alone compiled 6 modules:" in headline, headline
        assert "jit__bernoulli" in headline, headline
        assert "source locations" not in headline and "metadata" not in headline, headline


def test_an_optimizer_swapped_is_its_operations_not_a_constant_they_share(tmp_path):
    # Keras' Adam swapped for RMSprop under model.fit: every operation of the
    # step has the model.fit line as its place in the user's code, so the
    # changes were one finding, led by the most direct kind, "constant 0.001
    # -> 0.9" (adam's 1 - beta2 paired with RMSprop's rho), with "61 replaced
    # changes" following from it and the advice to pass the float as an array
    # (a helper session's run; a schedule swapped read "constant 10 -> 100").
    # Operations added or removed do not follow from a value.
    dump_runs(tmp_path, "jax_optimizer_swap", "adam", "rmsprop")
    for x, y in (("adam", "rmsprop"), ("rmsprop", "adam")):
        top = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format", "json",
                                 "--no-cache", expect=1).stdout)["findings"][0]
        assert top["kind"] in ("op_added", "op_removed", "replaced"), top["summary"]
        assert "power" in top["summary"] and "array argument" not in top["advice"]


def test_runs_that_share_no_program_are_never_the_same_executable():
    # With every module compiled in one run only and none paired, the report
    # had no program to judge and said "Same executable, no recompile" (a
    # module.mlir given as HLO beside a good file, once the training-step
    # pairing rule left the two unpaired): nothing was compared.
    from hlodiff.analysis.explain import ExtraCompilation, explain
    report = explain([], (ExtraCompilation("a", "module_0001.jit_f", "jit_f"),), (), ())
    assert report.same_executable is None and report.recompiles is None
    assert not report.shares_executable


def test_a_sharding_jax_gives_a_key_or_the_result_is_not_an_op_of_the_model(tmp_path):
    # A typed PRNG key (jax.random.key) where the other run passed a raw one
    # (jax.random.PRNGKey), and out_shardings given to jax.jit, read "added:
    # custom-call u32[2]" and "added: 3 ops (custom-call, tuple, ...)" with
    # "The model code adds operations here", the module's mesh a finding of
    # its own: JAX annotates a typed key's data, and a result given
    # out_shardings, with a custom-call of its own (a hunt's real runs).
    dump_runs(tmp_path, "jax_key_kind", "raw", "typed", "out")
    for other, said, advice in (("typed", "argument 1 key u32[2] (a typed PRNG key) in run b "
                                 "only", "jax.random.PRNGKey"),
                                ("out", "the result f32[16,4] in run b only", "out_shardings")):
        report = json.loads(run_cli("diff", str(tmp_path / "raw"), str(tmp_path / other),
                                    "--format", "json", "--no-cache", expect=1).stdout)
        main = [f for f in report["findings"] if f["program"] == "jit_train_step"]
        assert main[0]["summary"] == f"sharding annotation by JAX: {said}"
        assert advice in main[0]["advice"] and "model code adds" not in main[0]["advice"]
        assert len(main) == 1  # the module's mesh and propagation flags follow from it


def test_an_argument_jit_keeps_unread_is_not_an_op_the_model_adds(tmp_path):
    # keep_unused=True keeps an argument the step does not read: "added:
    # parameter s32[] in step" came with "The model code adds operations
    # here ... look for a Python branch" (a hunt's real run), though no
    # operation changed and jit's keep_unused did.
    dump_runs(tmp_path, "jax_keep_unused", "0", "1")
    for x, y, kind in (("0", "1", "op_added"), ("1", "0", "op_removed")):
        top = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format", "json",
                                 "--no-cache", expect=1).stdout)["findings"][0]
        assert (top["kind"], top["origin"]["op_name"]) == (kind, "step")
        assert "keep_unused" in top["advice"] and "model code" not in top["advice"]


def test_an_argument_left_unread_by_a_schedule_is_not_said_to_change_with_no_operation(tmp_path):
    # A learning rate computed from the step count (a schedule) where the step
    # multiplied by the rate it was given: jit leaves the rate out, unread. The
    # advice said "no operation changed with it: ... keep_unused differs" (a
    # hunt's Keras run, float learning rate against ExponentialDecay), while
    # the schedule's ops were the first finding
    dump_runs(tmp_path, "jax_schedule_argument", "constant", "decay")
    report = json.loads(run_cli("diff", str(tmp_path / "constant"), str(tmp_path / "decay"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    unread = [f for f in report["findings"]
              if f["kind"] == "op_removed" and f["origin"]["op_name"] == "lr"]
    assert len(unread) == 1, [(f["kind"], f["origin"]["op_name"]) for f in report["findings"]]
    assert "no operation changed" not in unread[0]["advice"]
    assert "reads it in run a only" in unread[0]["advice"]


def test_arguments_placed_with_a_sharding_are_one_finding_of_how_they_were_placed(tmp_path):
    # Weights and batch put on a one-device mesh with jax.device_put in one
    # run read as five findings of the step (the parameters' sharding, each
    # one's Shardy copy of it, the module's mesh, its propagation flags), the
    # first with "look at the code where this op_name is built for a changed
    # option" (a hunt's real run): the code did not change, the placement did.
    dump_runs(tmp_path, "jax_argument_sharding", "plain", "placed")
    report = json.loads(run_cli("diff", str(tmp_path / "plain"), str(tmp_path / "placed"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    main = [f for f in report["findings"] if f["program"] == "jit_train_step"]
    assert [f["summary"] for f in main] == ["argument sharding: w, x (none) -> {replicated}"]
    assert "jax.device_put" in main[0]["advice"] and "look at the code" not in main[0]["advice"]


def test_a_numpy_scalar_that_promotes_the_step_is_told_as_a_scalar_kind(tmp_path):
    # 2.0 against np.float32(2.0) times a bf16 array: "dtype bf16[] -> f32[]"
    # with "check mixed-precision settings" (a hunt's real run), where the
    # cause is the kind of scalar: a Python float takes the array's dtype.
    dump_runs(tmp_path, "jax_scalar_kind", "python", "numpy")
    top = json.loads(run_cli("diff", str(tmp_path / "python"), str(tmp_path / "numpy"),
                             "--format", "json", "--no-cache", expect=1).stdout)["findings"][0]
    assert (top["kind"], top["old"], top["new"]) == ("dtype", "bf16[]", "f32[]")
    assert (top["origin"]["source_file"].endswith("jax_scalar_kind.py"),
            top["origin"]["source_line"]) == (True, 19)
    assert "np.float32(2.0)" in top["advice"] and "Python scalar" in top["advice"]


def test_a_layer_more_from_a_static_argument_points_at_static_argnums(tmp_path):
    # A loop over a static argument 2 -> 3 adds a layer's ops; the advice
    # named a Python branch on a configuration value only (a hunt's real run).
    dump_runs(tmp_path, "jax_static_layers", "2", "3")
    for x, y, kind in (("2", "3", "op_added"), ("3", "2", "op_removed")):
        top = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format", "json",
                                 "--no-cache", expect=1).stdout)["findings"][0]
        assert top["kind"] == kind and top["origin"]["source_line"] == 17
        assert "static_argnums" in top["advice"]


def test_a_value_that_was_1_leads_the_multiply_its_change_brings_back(tmp_path):
    # Keras' Huber delta 1 -> 2: JAX folds the multiply by delta away at 1,
    # and the report led with "added: 2 ops (multiply)" and model-code
    # advice, the delta under it (a helper session's Keras run). Also when
    # 0.5 * delta**2 shares a constant with delta (2 in run b).
    dump_runs(tmp_path, "jax_huber_delta", "1", "2")
    for x, y, kind in (("1", "2", "op_added"), ("2", "1", "op_removed")):
        top = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format", "json",
                                 "--no-cache", expect=1).stdout)["findings"][0]
        assert (top["kind"], top["old"], top["new"]) == ("constant", x, y)
        assert top["origin"]["source_line"] == 18
        assert kind in [d["kind"] for d in top["derived"]]


def test_a_layer_computing_in_bf16_is_told_as_a_dtype_not_as_what_bf16_lowers_to(tmp_path):
    # A Flax BERT given dtype=bfloat16 read "added: 3 ops (abs, constant(0))"
    # at its erfc (a helper session's run), and this one-line model
    # "constant 0.00518832775 -> -0.000801019371", erfc's coefficients for
    # bf16: what the dtype brings led it, as all came from one line.
    dump_runs(tmp_path, "jax_compute_dtype", "float32", "bfloat16")
    for x, y in (("float32", "bfloat16"), ("bfloat16", "float32")):
        top = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format", "json",
                                 "--no-cache", expect=1).stdout)["findings"][0]
        assert top["kind"] == "dtype", top
        assert top["origin"]["op_name"] == "jit(train_step)/jvp()/convert_element_type"
        assert {"f32", "bf16"} == {side.split("[")[0] for side in (top["old"], top["new"])}
def test_a_tf_config_setting_is_named_as_the_cause_not_a_renamed_program(corpus):
    # tf_config_proto: the same tf.function, run b after
    # tf.config.optimizer.set_experimental_options(...). TF fingerprints its
    # ConfigProto into the function's name, so every key moved while the HLO
    # did not; the top cause read "the program is named <150 characters> in
    # run a and <150 characters> in run b", saying neither what differs nor
    # what to do (a helper session's raw tf.function runs).
    report = json.loads(run_cli("diff", str(corpus / "tf_config_proto" / "run_a"),
                                str(corpus / "tf_config_proto" / "run_b"), "--format", "json",
                                "--no-cache", expect=1).stdout)
    top = report["findings"][0]
    assert top["kind"] == "program_name"
    assert top["summary"].startswith("TensorFlow's configuration differs (config_proto "
                                     "13561319589895757934 -> 18085853740527455266)")
    assert "tf.config" in top["summary"] and "the program is named" not in top["summary"]


def test_tf_auto_clustering_placeholder_file_is_no_source_line(corpus):
    # tf_auto_jit_scale: TF's auto-clustering (set_jit, no jit_compile) writes
    # source_file="dummy_file_name" source_line=10 on every op of a cluster.
    # The top cause read "in mul, dummy_file_name:10" and its advice "Run b
    # scales or shifts by 2 at this line": a file and line the user has not
    # (a helper session's auto-clustered runs).
    report = json.loads(run_cli("diff", str(corpus / "tf_auto_jit_scale" / "run_a"),
                                str(corpus / "tf_auto_jit_scale" / "run_b"), "--format", "json",
                                "--no-cache", expect=1).stdout)
    top = report["findings"][0]
    assert top["kind"] == "op_added" and top["origin"]["op_name"] == "mul"
    assert top["origin"]["source_file"] is None and top["origin"]["source_line"] is None
    assert "dummy_file_name" not in json.dumps(report["findings"])
    assert "at this line" not in top["advice"]


def test_tf32_turned_off_is_one_process_wide_setting(corpus):
    # tf_tensor_float_32: run b calls
    # tf.config.experimental.enable_tensor_float_32_execution(False), which
    # gives the matmul and its gradient operand_precision={highest,highest}.
    # It read one change at matmul, "follows from it: 1 attribute change" of
    # the very same change at the gradient, and "look at the code where this
    # op_name is built" (a helper session's raw tf.function runs).
    report = json.loads(run_cli("diff", str(corpus / "tf_tensor_float_32" / "run_a"),
                                str(corpus / "tf_tensor_float_32" / "run_b"), "--format", "json",
                                "--no-cache", expect=1).stdout)
    [top] = [f for f in report["findings"] if f["affects"]]
    assert (top["kind"], top["detail"], top["new"]) == \
        ("attribute", "operand_precision", "{highest,highest}")
    assert {w["a"].split(".")[0] for w in top["places"]} == {"matmul", "MatMul"}
    assert top["derived"] == []
    assert "tf.config.experimental.enable_tensor_float_32_execution" in top["advice"]
    assert "look at the code" not in top["advice"]


def test_an_auto_clustering_cluster_number_is_no_trace_counter(tmp_path):
    # TF auto-clustering (set_jit) names the clusters it forms cluster_N, N
    # counted over the process: a run that formed g's cluster before f's read
    # "the function's trace counter 0 -> 1" for f's cluster_0 -> cluster_1 (a
    # helper session's auto-clustered runs; these are their module names)
    from dump_trees import hlo_text, write_tree
    attributes = ("__XlaCompiledKernel_true__XlaHasReferenceVars_false__XlaNumConstantArgs_0"
                  "__XlaNumResourceArgs_1_")
    for run, module, cluster in (("a", 0, 0), ("b", 2, 1)):
        name = f"cluster_{cluster}{attributes}.2"
        write_tree(tmp_path / run, {f"module_{module:04d}.{name}.before_optimizations.txt":
                                    hlo_text(name, ("multiply", "add") * 6)})
    report = json.loads(run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--format",
                                "json", "--no-cache", expect=1).stdout)
    [named] = [f for f in report["findings"] if f["kind"] == "program_name"]
    assert named["detail"].startswith("the auto-clustering cluster number 0 -> 1: TensorFlow "
                                      "numbers the clusters it forms for XLA")
    assert "trace counter" not in named["detail"]
    # the module number shifted with it, and is counted under it
    assert [d["kind"] for d in named["derived"]] == ["module_number"]
    assert not [f for f in report["findings"] if f["kind"] == "module_number"]


def test_ops_removed_per_weight_are_one_finding_whatever_the_aligner_paired():
    # Keras' clipnorm -> global_clipnorm removes clip_by_norm, clip_by_norm_1,
    # ... (one per weight). The aligner paired another of each scope's ops
    # with the global norm's new ops: 15, 14 (no divide) and 14 ops removed
    # read as three op_removed findings of one optimizer setting (a helper
    # session's Keras runs; these are their op_names and opcodes).
    from hlodiff.analysis.diff import Change
    from hlodiff.analysis.findings import _parallel
    from hlodiff.model import Origin

    def removed(scope, ops):
        return [Change("op_removed", f"{opcode} f32[4]", None, "step", f"{name}.{i}", None,
                       Origin(op_name=f"sgd_1/{scope}/{name}"), opcode=opcode)
                for i, (name, opcode) in enumerate(ops)]
    norm = [("Sqrt", "sqrt"), ("Greater", "compare"), ("Select", "select"),
            ("Maximum", "maximum"), ("truediv", "broadcast"), ("truediv", "constant")]
    groups = [removed("clip_by_norm", norm + [("truediv", "divide"), ("truediv", "broadcast")]),
              removed("clip_by_norm_1", norm),
              removed("clip_by_norm_2", norm + [("truediv", "divide")]),
              removed("clip_by_norm_3", norm + [("truediv", "divide")])]
    [(members, times)] = _parallel(groups)
    assert times == 4 and len(members) == sum(map(len, groups))
    # a different op removed in each of two scopes stays two findings
    other = removed("clip_by_norm_1", [("Relu", "maximum")])
    assert sorted(times for _, times in _parallel([groups[0], other])) == [1, 1]


def test_a_model_run_op_by_op_is_said_to_have_no_program_that_is_the_model(tmp_path):
    # Keras with jit_compile=False on JAX: every operation is a program, and
    # hlodiff took the largest, jit_add, for the model. A Dense layer added
    # read "Same executable, no recompile", and a baseline of such a run
    # recorded jit_add alone, so its gate passed any change of the model (a
    # helper session's Keras runs). Both say now that no program is the model.
    dump_runs(tmp_path, "jax_eager_dropout", "plain", "dropout")
    text = " ".join(run_cli("diff", str(tmp_path / "plain"), str(tmp_path / "dropout"),
                            "--no-cache", expect=1).stdout.split())
    assert "warning: no program of these runs is the model: the largest of the user's, " \
           "jit_add, holds 7 instructions" in text
    assert "The model ran op by op" in text
    recorded = " ".join(run_cli("baseline", str(tmp_path / "plain"), "-o",
                                str(tmp_path / "base.json")).stdout.split())
    assert recorded.startswith("warning: jit_add, the largest program of the user's, holds 7 "
                               "instructions among 3 such programs: no program of this run is "
                               "the model.")
    # a jitted step is a model: no warning
    whole = run_cli("baseline", str(CORPUS / "jax_learning_rate" / "run_a"), "-o",
                    str(tmp_path / "step.json")).stdout
    assert "warning" not in whole and "recorded 1 module (jit_train_step)" in whole


def test_a_program_paired_across_a_rename_is_called_by_both_names():
    """JAX 0.10 compiles ``jit_stage`` where 0.4.30 compiled
    ``jit_convert_element_type``; the two pair by structure. The headline
    named only run a's program ("jit_convert_element_type (module_0000 vs
    module_0000)"), so a user looking for run b's jit_stage found nothing."""
    runs = [str(CORPUS / "jax_version_upgrade" / run) for run in ("run_a", "run_b")]
    got = run_cli("diff", "--no-cache", "--format", "json", *runs, expect=1)
    programs = [p["program"] for p in json.loads(got.stdout)["programs"]]
    assert "jit_convert_element_type vs jit_stage" in programs
    assert "jit__unstack vs jit_unstack" in programs
    headline = run_cli("diff", "--no-cache", *reversed(runs), expect=1).stdout.splitlines()[0]
    assert "jit_stage vs jit_convert_element_type," in headline


TWO_DOTS = """HloModule jit_f, entry_computation_layout={(f32[4,4]{1,0}, f32[4,4]{1,0})->f32[4,4]{1,0}}

ENTRY %main.1 (x.2: f32[4,4], w.3: f32[4,4]) -> f32[4,4] {
  %x.2 = f32[4,4]{1,0} parameter(0)
  %w.3 = f32[4,4]{1,0} parameter(1)
  %dot.4 = f32[4,4]{1,0} dot(%x.2, %w.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}FIRST
  ROOT %dot.5 = f32[4,4]{1,0} dot(%dot.4, %w.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}SECOND
}
"""


@pytest.mark.parametrize("both, every", [(True, True), (False, False)])
def test_a_precision_is_the_processs_only_when_every_matmul_has_it(tmp_path, both, every):
    # JAX's jax_default_matmul_precision sets every dot's precision; a
    # precision= given to one layer sets that layer's only, and is the code's
    highest = ", operand_precision={highest,highest}"
    a = TWO_DOTS.replace("FIRST", "").replace("SECOND", "")
    b = TWO_DOTS.replace("FIRST", highest).replace("SECOND", highest if both else "")
    report, _ = diff(tmp_path, a, b, expect=1)
    top = report["findings"][0]
    assert top["detail"] == "operand_precision"
    assert top["summary"].startswith("precision of every matmul and convolution:") is every


@pytest.mark.parametrize("variable, value, flags, setting", [
    ("JAX_DISABLE_MOST_OPTIMIZATIONS", "1",
     {"xla_backend_optimization_level", "xla_llvm_disable_expensive_passes"},
     "jax_disable_most_optimizations"),
    ("JAX_COMPILER_ENABLE_REMAT_PASS", "0", {"xla_disable_hlo_passes"},
     "jax_compiler_enable_remat_pass")])
def test_an_xla_option_jax_sets_itself_is_named_with_xla_flags(tmp_path, variable, value, flags,
                                                               setting):
    # JAX sets these XLA options from its own configuration; a run with
    # JAX_DISABLE_MOST_OPTIMIZATIONS=1 and the same XLA_FLAGS read "XLA's
    # options differ between the runs: set the same XLA_FLAGS in both" (a
    # helper session's run)
    dump_runs(tmp_path / "a", "jax_fast_math", "off")
    dump_runs(tmp_path / "b", "jax_fast_math", "off", env={variable: value})
    report = json.loads(run_cli("diff", str(tmp_path / "a" / "off"), str(tmp_path / "b" / "off"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    named = [f for f in report["findings"] if f["kind"] == "environment"]
    assert {f["new"].split(":")[0] for f in named} == flags
    assert all(setting in f["advice"] and "XLA_FLAGS" in f["advice"] for f in named)


def test_a_program_compiled_again_in_one_run_is_named_with_its_inputs(tmp_path):
    # A short last batch in run b only: the step compiled a second time. The
    # headline read "Same executable, no recompile: ...; 1 extra compilation
    # in one run", right of the programs both runs compiled, but never said
    # that run b compiled the step again, nor why (a helper session's run).
    dump_runs(tmp_path, "jax_last_batch", "16", "20")
    got = run_cli("diff", "--no-cache", str(tmp_path / "16"), str(tmp_path / "20"))
    assert got.stdout.startswith("Same executable, no recompile")  # exit 0: both runs' step alike
    headline = " ".join(got.stdout.split("\ncompared")[0].split())
    assert "run b compiled jit_train_step again for other inputs, f32[8,16] -> f32[4,16], " \
        "f32[8,4] -> f32[4,4] (smaller: a short last batch?)" in headline
    report = json.loads(run_cli("diff", "--no-cache", "--format", "json", str(tmp_path / "20"),
                                str(tmp_path / "16")).stdout)
    [extra] = report["extra_compilations"]
    assert (extra["run"], extra["program"], extra["smaller"]) == ("a", "jit_train_step", True)


def test_a_fori_loop_unrolled_otherwise_names_the_unroll(tmp_path):
    # jax.lax.fori_loop(0, 4, ..., unroll=1 -> 2) is a scan: the same finding
    dump_runs(tmp_path, "jax_scan_unroll", "fori-1", "fori-2")
    for x, y, said in (("fori-1", "fori-2", "unroll 1 -> 2: the loop runs 2 steps per "
                        "iteration, 4 -> 2 iterations"),
                       ("fori-2", "fori-1", "unroll 2 -> 1: the loop runs 1 step per "
                        "iteration, 2 -> 4 iterations")):
        report = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format",
                                    "json", "--no-cache", expect=1).stdout)
        assert [f["summary"] for f in report["findings"]] == [f"lax.scan {said}"]


def test_a_layer_changed_inside_a_loop_unrolled_otherwise_is_no_unrolling(tmp_path):
    # unroll 1 -> 2, and the step adds its input to its output: the programs
    # do other work, and the added op is a cause of its own
    dump_runs(tmp_path, "jax_scan_unroll", "1", "2-residual")
    for x, y in (("1", "2-residual"), ("2-residual", "1")):
        report = json.loads(run_cli("diff", str(tmp_path / x), str(tmp_path / y), "--format",
                                    "json", "--no-cache", expect=1).stdout)
        assert not [f for f in report["findings"] if f["summary"].startswith("lax.scan")]
        assert any(f["origin"]["source_line"] == 22 and f["kind"] in ("op_added", "op_removed")
                   for f in report["findings"]), [f["summary"] for f in report["findings"]]


def test_a_layer_changed_beside_a_checkpoint_added_stays_a_cause_of_its_own(tmp_path):
    # A scan's step wrapped in jax.checkpoint while its layer lost a sine:
    # the layer's ops removed at its line were folded under "jax.checkpoint
    # (remat) in run b only", the only finding, because the same tanh is
    # recomputed in run b (a merge of two helper sessions' rules)
    report = _dumped_report(tmp_path, "jax_remat_beside", "sin", "ckpt-plain")
    summaries = [f["summary"] for f in report["findings"] if f["affects"]]
    assert summaries[0].startswith("jax.checkpoint (remat) in run b only"), summaries
    layer_lines = {f["origin"]["source_line"] for f in report["findings"][1:]
                   if f["kind"] in ("op_removed", "replaced")}
    assert 26 in layer_lines, report["findings"]  # layer_with_sine's line


def test_a_stack_the_user_dropped_beside_a_relu_added_in_a_scan_stays_a_cause(tmp_path):
    # Run a's loss averaged the scan's stacked outputs; run b drops that and
    # adds a relu in the step, whose mask the scan now keeps instead. Only
    # what a loop keeps for one model change inside it follows from that
    # change: the mean the user removed (line 31) stays a cause of its own
    report = _dumped_report(tmp_path, "jax_scan_residual", "plain-ys", "relu")
    causes = [(f["kind"], f["origin"]["source_line"]) for f in report["findings"]]
    assert ("op_added", 23) in causes and ("op_removed", 31) in causes, causes


def test_a_scale_seen_only_in_the_backward_pass_is_not_the_checkpoints(tmp_path):
    # The loss halved beside a checkpoint added: the step returns no loss, so
    # only the backward pass multiplies by 0.5. A first version of the
    # checkpoint finding took every backward-pass change under it, and the
    # 0.5 was said nowhere but in its "follows from it"
    report = _dumped_report(tmp_path, "jax_remat_beside", "plain", "ckpt-plain-half")
    tops = [f for f in report["findings"] if f["affects"]]
    assert tops[0]["summary"].startswith("jax.checkpoint (remat) in run b only"), tops
    assert any("constant(0.5)" in (f["new"] or "") for f in tops[1:]), tops


def test_an_attribute_alike_for_its_first_words_shows_the_words_that_differ():
    # jit's out_shardings replicated in run b: the sharding Shardy keeps on
    # the result read "xla.sdy.sharding: #sdy.sharding_per_value<[<@mesh,
    # [{}, {… -> #sdy.sharding_per_value<[<@mesh, [{}, {…", two texts alike
    # as far as shown (a hunt's real run): the model axis dropped was cut off
    case = CORPUS / "jax_result_sharding"
    report = compare(case / "run_a", case / "run_b")
    shown = [f.detail for f in report.findings
             if f.program == "jit_train_step" and "xla.sdy.sharding" in f.detail]
    assert shown and all('{"model"}' in d and "{}]" in d.split(" -> ")[-1] for d in shown), shown


def test_a_result_returned_with_another_sharding_is_jits_out_shardings():
    # jit's out_shardings replicated in run b: the top cause was Shardy's
    # attribute on the result at "jit(train_step)/sub" with "look at the code
    # at this line for a changed option", and XLA's sharding of the tuple
    # element JAX returns it in a cause of its own (a hunt's real run)
    for x, y, said in (("run_a", "run_b", '[{}, {"model"}] -> [{}, {}]'),
                       ("run_b", "run_a", '[{}, {}] -> [{}, {"model"}]')):
        report = json.loads(run_cli("diff", str(CORPUS / "jax_result_sharding" / x),
                                    str(CORPUS / "jax_result_sharding" / y), "--format", "json",
                                    "--no-cache", expect=1).stdout)
        main = [f for f in report["findings"] if f["program"] == "jit_train_step"]
        assert [f["summary"] for f in main] == [f"result sharding (jit's out_shardings): {said}"]
        assert "out_shardings" in main[0]["advice"] and "this line" not in main[0]["advice"]


def test_a_mesh_of_another_shape_is_the_cause_not_the_shardings_it_tiles(capsys):
    # Eight devices as a mesh of data=8, model=1, then data=4, model=2, the
    # PartitionSpecs kept: the top cause was "sharding: {replicated} ->
    # {devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate} at w", with
    # x's tiling a second cause and the mesh itself third, as "module header:
    # frontend_attributes" with "look at the code in the model code" (a
    # hunt's real run)
    for x, y, said in (("run_a", "run_b", "mesh data=8, model=1 -> data=4, model=2"),
                       ("run_b", "run_a", "mesh data=4, model=2 -> data=8, model=1")):
        out = run_cli("diff", str(CORPUS / "jax_mesh_shape" / x),
                      str(CORPUS / "jax_mesh_shape" / y), "--no-cache", expect=1).stdout
        assert f"Top cause: device mesh: {said}." in " ".join(out.split())
        report = json.loads(run_cli("diff", str(CORPUS / "jax_mesh_shape" / x),
                                    str(CORPUS / "jax_mesh_shape" / y), "--format", "json",
                                    "--no-cache", expect=1).stdout)
        assert [f["summary"] for f in report["findings"] if f["affects"]] == \
            [f"device mesh: {said}"]  # once for the run: jit__reduce_sum is on it too
        assert "jax.sharding.Mesh" in report["findings"][0]["advice"]


def test_mesh_axes_renamed_take_the_shardings_naming_them_along(tmp_path):
    # The same mesh with its model axis named tensor (a hunt's real run, made
    # here by renaming it in every file of the corpus run): each PartitionSpec
    # naming the axis changes with it, and was a cause of its own, the first
    # one's text cut before the name
    for run in ("model", "tensor"):
        shutil.copytree(CORPUS / "jax_mesh_shape" / "run_b", tmp_path / run)
    for path in (tmp_path / "tensor").rglob("*"):
        if path.is_file():
            path.write_text(path.read_text().replace('"model"', '"tensor"')
                            .replace('\\"model\\"', '\\"tensor\\"'))
    report = json.loads(run_cli("diff", str(tmp_path / "model"), str(tmp_path / "tensor"),
                                "--format", "json", "--no-cache", expect=1).stdout)
    assert [f["summary"] for f in report["findings"] if f["affects"]] == \
        ["device mesh: mesh data=4, model=2 -> data=4, tensor=2"]
    assert report["same_executable"] is True
    # and the row does not say it moves the fingerprint the verdict calls unchanged
    # (it read "moves JAX, XLA" under "XLA executable fingerprint: unchanged")
    assert "xla_executable_fingerprint" not in report["findings"][0]["affects"]


def test_an_arguments_partition_spec_is_one_finding_with_xlas_tiling_under_it():
    # The weights replicated (PartitionSpec()) where they were split over
    # model: XLA's sharding of w and Shardy's copy of its PartitionSpec were
    # two causes of the step, neither said as the argument's, XLA's first
    # ("sharding: {devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate} ->
    # {replicated} at w", a hunt's real run); the side program reading the
    # result had the same two
    report = json.loads(run_cli("diff", str(CORPUS / "jax_partition_spec" / "run_a"),
                                str(CORPUS / "jax_partition_spec" / "run_b"), "--format", "json",
                                "--no-cache", expect=1).stdout)
    said = {p: [f["summary"] for f in report["findings"] if f["program"] == p]
            for p in ("jit_train_step", "jit__reduce_sum")}
    assert said == {"jit_train_step": ['argument sharding: w [{}, {"model"}] -> [{}, {}]'],
                    "jit__reduce_sum": ['argument sharding: a [{}, {"model"}] -> [{}, {}]']}
    assert "in_shardings" in report["findings"][0]["advice"]
