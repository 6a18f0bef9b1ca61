"""Diffing two versions of a module: alignment, classification, hash verdicts.

Small hand-written modules, each isolating one kind of change a user hits;
the corpus tests (test_corpus.py) check the same on real dumps.
"""

from __future__ import annotations

import pytest

from conftest import run_cli
from hlodiff.analysis.compare import compare

# Named as no framework names its programs (not jit_train_step): every hash applies.
BASE = """HloModule train_step, entry_computation_layout={(f32[16,8]{1,0})->f32[16,8]{1,0}}

FileNames
1 "train.py"

FunctionNames
1 "step"

FileLocations
1 {file_name_id=1 function_name_id=1 line=57 end_line=57 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

%region_0.4 (a.1: f32[], b.1: f32[]) -> f32[] {
  %a.1 = f32[] parameter(0)
  %b.1 = f32[] parameter(1)
  ROOT %add.3 = f32[] add(%a.1, %b.1)
}

ENTRY %main.12 (x.1: f32[16,8]) -> f32[16,8] {
  %x.1 = f32[16,8]{1,0} parameter(0), metadata={op_name="x"}
  %constant.2 = f32[] constant(0.01)
  %broadcast.3 = f32[16,8]{1,0} broadcast(%constant.2), dimensions={}
  %multiply.4 = f32[16,8]{1,0} multiply(%x.1, %broadcast.3), metadata={op_name="jit(train_step)/sgd/mul" stack_frame_id=1}
  %constant.5 = s32[] constant(10)
  %constant.6 = f32[] constant(0)
  %reduce.7 = f32[16]{0} reduce(%multiply.4, %constant.6), dimensions={1}, to_apply=%region_0.4
  %broadcast.8 = f32[16,8]{1,0} broadcast(%reduce.7), dimensions={0}
  ROOT %subtract.9 = f32[16,8]{1,0} subtract(%x.1, %broadcast.8), metadata={op_name="jit(train_step)/sgd/sub" stack_frame_id=1}
}
"""


def run(tmp_path, a_text: str, b_text: str):
    a, b = tmp_path / "a.hlo", tmp_path / "b.hlo"
    a.write_text(a_text)
    b.write_text(b_text)
    return compare(a, b)


def renumber(text: str) -> str:
    """The same program as XLA prints it after something earlier in the trace
    changed: every instruction and computation number moves."""
    import re
    return re.sub(r"(%[a-z_]+[_.])(\d+)", lambda m: f"{m.group(1)}{int(m.group(2)) + 100}", text)


def test_identical_programs_report_same_executable_and_nothing_else(tmp_path):
    report = run(tmp_path, BASE, BASE)
    assert report.same_executable is True
    assert report.findings == ()
    assert report.recompiles is False
    assert report.hashes == {"xla_executable_fingerprint": False, "jax_cache_key": False,
                             "graphcore_hlo_hash": False}


def test_renumbered_names_are_not_a_difference(tmp_path):
    report = run(tmp_path, BASE, renumber(BASE))
    assert report.same_executable is True
    assert report.findings == ()


def test_learning_rate_constant_is_the_top_finding_with_its_users_origin(tmp_path):
    report = run(tmp_path, BASE, renumber(BASE.replace("constant(0.01)", "constant(0.02)")))
    assert report.same_executable is False
    top = report.top
    assert (top.kind, top.old, top.new, top.count) == ("constant", "0.01", "0.02", 1)
    # The scalar has no metadata: its origin is the multiply that uses it.
    assert top.origin.op_name == "jit(train_step)/sgd/mul"
    assert (top.origin.source_file, top.origin.source_line) == ("train.py", 57)
    # JAX's key hashes every constant; the fingerprint XLA prints hashes the
    # module's text, where a scalar is printed in full (corpus/gen/HASHES.md).
    assert top.affects == ("jax_cache_key", "xla_executable_fingerprint", "graphcore_hlo_hash")
    assert report.recompiles is True


def test_integer_constant_moves_all_three_hashes(tmp_path):
    report = run(tmp_path, BASE, BASE.replace("s32[] constant(10)", "s32[] constant(20)"))
    assert report.top.kind == "constant"
    assert report.top.affects == ("jax_cache_key", "xla_executable_fingerprint",
                                  "graphcore_hlo_hash")


def test_batch_size_is_one_parameter_finding_with_derived_shapes(tmp_path):
    b = BASE.replace("16,8", "32,8").replace("f32[16]", "f32[32]")
    report = run(tmp_path, BASE, b)
    top = report.top
    assert top.kind == "parameter"
    assert top.old == "f32[16,8]{1,0} parameter(0)" and top.new == "f32[32,8]{1,0} parameter(0)"
    derived = {d.kind: d.count for d in top.derived}
    assert derived.get("shape", 0) >= 5
    assert [f.kind for f in report.findings if f.moves_a_hash] == ["parameter"]


def test_renamed_name_scope_is_metadata_only(tmp_path):
    b = renumber(BASE.replace("jit(train_step)/sgd/", "jit(train_step)/optimizer/"))
    report = run(tmp_path, BASE, b)
    assert report.same_executable is True
    assert len(report.findings) == 1
    finding = report.findings[0]
    assert (finding.kind, finding.old, finding.new, finding.count) == ("metadata", "sgd", "optimizer", 2)
    # metadata is outside JAX's key, inside the text XLA's printed fingerprint hashes
    assert finding.affects == ("xla_executable_fingerprint",)
    assert report.recompiles is False


def test_added_operation(tmp_path):
    b = BASE.replace(
        '  ROOT %subtract.9 = f32[16,8]{1,0} subtract(%x.1, %broadcast.8)',
        '  %tanh.10 = f32[16,8]{1,0} tanh(%broadcast.8), metadata={op_name="jit(train_step)/squash/tanh"}\n'
        '  ROOT %subtract.9 = f32[16,8]{1,0} subtract(%x.1, %tanh.10)')
    report = run(tmp_path, BASE, b)
    top = report.top
    assert top.kind == "op_added" and "tanh" in top.new
    assert top.origin.op_name == "jit(train_step)/squash/tanh"


def test_constant_passed_as_argument_instead(tmp_path):
    b = BASE.replace("ENTRY %main.12 (x.1: f32[16,8]) ->", "ENTRY %main.12 (x.1: f32[16,8], lr: f32[]) ->")
    b = b.replace("%constant.2 = f32[] constant(0.01)", "%lr.2 = f32[] parameter(1)")
    b = b.replace("broadcast(%constant.2)", "broadcast(%lr.2)")
    report = run(tmp_path, BASE, b)
    top = report.top
    assert (top.kind, top.old, top.new) == ("constant_to_parameter", "0.01", "f32[] parameter(1)")
    assert any(d.kind == "parameter" for d in top.derived)  # the parameter count follows


def test_layout_only_change(tmp_path):
    b = BASE.replace("%broadcast.8 = f32[16,8]{1,0}", "%broadcast.8 = f32[16,8]{0,1}")
    report = run(tmp_path, BASE, b)
    assert report.top.kind == "layout"
    assert (report.top.old, report.top.new) == ("f32[16,8]{1,0}", "f32[16,8]{0,1}")


def test_attribute_change_names_the_attribute(tmp_path):
    b = BASE.replace("dimensions={1}, to_apply", "dimensions={0}, to_apply").replace(
        "f32[16]{0} reduce", "f32[8]{0} reduce")
    report = run(tmp_path, BASE, b)
    details = [f.detail for f in report.findings if f.kind == "attribute"]
    assert any(d.startswith("dimensions") for d in details), details


def test_backend_config_names_the_field_that_changed(tmp_path):
    a = BASE.replace("dimensions={0}\n", 'dimensions={0}, backend_config={"k":"1"}\n')
    b = BASE.replace("dimensions={0}\n", 'dimensions={0}, backend_config={"k":"2"}\n')
    report = run(tmp_path, a, b)
    assert report.top.kind == "attribute"
    assert report.top.detail == "backend_config: k: 1 -> 2"
    # the CPU fingerprint hashes the printed module, backend_config included
    assert report.top.affects == ("jax_cache_key", "xla_executable_fingerprint",
                                  "graphcore_hlo_hash")


@pytest.mark.parametrize("old, new, detail", [
    ("sharding={devices=[2,1]0,1}", "sharding={devices=[1,2]0,1}",
     "sharding: {devices=[2,1]0,1} -> {devices=[1,2]0,1}"),
    ('frontend_attributes={_xla_stream="1", keep="x"}', 'frontend_attributes={_xla_stream="2", keep="x"}',
     "frontend_attributes: _xla_stream: 1 -> 2"),
])
def test_a_structured_attribute_names_the_part_that_changed(tmp_path, old, new, detail):
    a = BASE.replace("dimensions={0}\n", f"dimensions={{0}}, {old}\n")
    b = BASE.replace("dimensions={0}\n", f"dimensions={{0}}, {new}\n")
    report = run(tmp_path, a, b)
    assert (report.top.kind, report.top.detail) == ("attribute", detail)


def test_a_long_attribute_is_headed_by_its_changed_words(tmp_path):
    """A 60-character sharding is not printed whole twice: the headline and
    the table say which words changed."""
    tiles = "devices=[2,2,2]0,1,2,3,4,5,6,7 last_tile_dims={manual}"
    a = BASE.replace("dimensions={0}\n", f"dimensions={{0}}, sharding={{{tiles}}}\n")
    b = a.replace("0,1,2,3,4,5,6,7", "0,2,1,3,4,6,5,7")
    report = run(tmp_path, a, b)
    assert report.top.summary == ("attribute sharding: …devices=[2,2,2]0,1,2,3,4,5,6,7… -> "
                                  "…devices=[2,2,2]0,2,1,3,4,6,5,7…")
    text = run_cli("diff", str(tmp_path / "a.hlo"), str(tmp_path / "b.hlo"), expect=1).stdout
    assert "Top cause: attribute sharding: …devices" in text.replace("\n", " ")


def test_elided_constants_cannot_decide(tmp_path):
    a = BASE.replace("%constant.5 = s32[] constant(10)", "%constant.5 = f32[64,64]{1,0} constant({...})")
    report = run(tmp_path, a, renumber(a))
    assert report.same_executable is None and report.recompiles is None
    assert report.top.kind == "elided_constant"
    assert report.hashes["jax_cache_key"] is None
    # XLA's printed fingerprint hashes "{...}" on both sides: it cannot move
    assert report.hashes["xla_executable_fingerprint"] is False


def test_array_constant_reports_differing_elements(tmp_path):
    a = BASE.replace("s32[] constant(10)", "s32[4]{0} constant({1, 2, 3, 4})")
    b = BASE.replace("s32[] constant(10)", "s32[4]{0} constant({1, 2, 7, 4})")
    report = run(tmp_path, a, b)
    assert report.top.kind == "constant"
    assert report.top.detail == "[2]: 3 -> 7 (1 of 4 elements differ)"


@pytest.mark.parametrize("swap", [False, True])
def test_diff_is_symmetric(tmp_path, swap):
    a, b = BASE, renumber(BASE.replace("constant(0.01)", "constant(0.02)"))
    report = run(tmp_path, *((b, a) if swap else (a, b)))
    expected = ("0.02", "0.01") if swap else ("0.01", "0.02")
    assert (report.top.old, report.top.new) == expected


def test_a_file_against_itself_is_the_same_even_with_elided_constants(tmp_path):
    text = BASE.replace("%constant.5 = s32[] constant(10)",
                        "%constant.5 = f32[64,64]{1,0} constant({...})")
    path = tmp_path / "m.hlo"
    path.write_text(text)
    report = compare(path, path)
    assert report.same_executable is True and report.findings == ()
