"""The hlo_snapshot fixture, run as a user runs it: pytest in a subprocess on a
small project in a temporary directory, with hlodiff installed as a plugin.

The first project is the README's model.py and test_model.py as written, a
JAX train step whose learning rate, scopes and lines are edited between
runs; the others check HLO text (no framework: quick).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hlodiff
from hlodiff.integrations import snapshot
from hlodiff.integrations.portable import portable

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_file(name: str) -> str:
    """The README's ```python block that starts with ``# NAME``, as written."""
    block = re.search(rf"```python\n(# {re.escape(name)}\n.*?)```", README.read_text(), re.S)
    return block.group(1)


MODEL, TEST_MODEL = readme_file("model.py"), readme_file("test_model.py")
PROGRAM = """\
HloModule scale
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(0.5), metadata={op_name="scale/mul" source_file="model.py" source_line=3}
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] multiply(p, b), metadata={op_name="scale/mul" source_file="model.py" source_line=3}
}
"""

TEST_TEXT = '''\
from pathlib import Path


def test_text_program(hlo_snapshot):
    hlo_snapshot.check(Path(__file__).with_name("program.hlo").read_text())
'''


def _project(folder: Path, files: dict[str, str]) -> Path:
    (folder / "pytest.ini").write_text("[pytest]\n")  # the project's root, not hlodiff's
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(JAX_PLATFORMS="cpu", COLUMNS="100")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=project, env=env, capture_output=True, text=True)


def _passed(run: subprocess.CompletedProcess) -> bool:
    return run.returncode == 0


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_readme_fixture_fails_on_the_learning_rate_not_on_a_scope(tmp_path):
    project = _project(tmp_path, {"model.py": MODEL, "test_model.py": TEST_MODEL})
    written = project / "__hlo_snapshots__" / "test_train_step_program.hlo"

    missing = _pytest(project)
    assert not _passed(missing)
    assert "no snapshot of this program yet: run pytest --hlo-snapshot-update to write " \
           "__hlo_snapshots__/test_train_step_program.hlo" in missing.stdout

    update = _pytest(project, "--hlo-snapshot-update")
    assert _passed(update), update.stdout
    assert "hlodiff: 1 snapshot written (1 new, 0 rewritten)" in update.stdout
    assert written.read_text().startswith("// hlodiff snapshot, schema 1")
    assert _passed(_pytest(project))

    model = project / "model.py"
    model.write_text(MODEL.replace("0.01 * grad", "0.02 * grad"))
    changed = _pytest(project)
    assert not _passed(changed)
    line = _line_of(MODEL, "0.01 * grad")
    first = changed.stdout.split("___ test_train_step_program ___")[1].split("\n")[1]
    assert first == f"constant 0.01 -> 0.02 at jit(train_step)/sgd/mul (model.py:{line})"
    assert f"\n    {first}\n" in README.read_text()  # the line the README promises
    assert "FAILED test_model.py::test_train_step_program - Failed: constant 0.01 -> 0.02" \
        in changed.stdout

    model.write_text(MODEL.replace('named_scope("sgd")', 'named_scope("optimizer")'))
    assert _passed(_pytest(project))
    metadata = _pytest(project, "--hlo-snapshot-metadata")
    assert not _passed(metadata)
    assert "metadata sgd -> optimizer at jit(train_step)/optimizer/mul" in metadata.stdout

    model.write_text("# a comment moves every line\n\n" + MODEL)
    assert _passed(_pytest(project))
    assert written.read_text() == snapshot.read(written).text  # a plain run never writes


def test_an_update_rewrites_only_what_changed(tmp_path):
    project = _project(tmp_path, {"program.hlo": PROGRAM, "test_text.py": TEST_TEXT})
    assert _passed(_pytest(project, "--hlo-snapshot-update"))
    written = project / "__hlo_snapshots__" / "test_text_program.hlo"
    before = written.stat().st_mtime_ns
    again = _pytest(project, "--hlo-snapshot-update")
    assert "hlodiff: 0 snapshots written" in again.stdout
    assert written.stat().st_mtime_ns == before

    (project / "program.hlo").write_text(PROGRAM.replace("constant(0.5)", "constant(0.25)"))
    rewritten = _pytest(project, "--hlo-snapshot-update")
    assert _passed(rewritten)
    assert "hlodiff: 1 snapshot written (0 new, 1 rewritten)" in rewritten.stdout
    assert "rewritten: __hlo_snapshots__/test_text_program.hlo" in rewritten.stdout
    assert "constant(0.25)" in written.read_text()
    assert _passed(_pytest(project))


@pytest.mark.parametrize("content, error", [
    ("garbage\n", "not an hlodiff snapshot (its first line should be '// hlodiff snapshot, "
                  "schema 1'); delete it and run pytest --hlo-snapshot-update"),
    ("// hlodiff snapshot, schema 2: from the future\n",
     "written by a newer hlodiff (snapshot schema 2; this hlodiff reads schema 1): "
     "upgrade hlodiff"),
    ("// hlodiff snapshot, schema 1\n// test: t\n// program: scale\n// stage: hlo\n"
     "// framework: unknown\nENTRY e {\n  ROOT r = f32[4] multiply(p, \n",
     "corrupt snapshot: "),
])
def test_a_bad_snapshot_is_a_clear_error_and_is_never_overwritten(tmp_path, content, error):
    project = _project(tmp_path, {"program.hlo": PROGRAM, "test_text.py": TEST_TEXT})
    bad = project / "__hlo_snapshots__" / "test_text_program.hlo"
    bad.parent.mkdir()
    bad.write_text(content)
    for args in ((), ("--hlo-snapshot-update",)):
        run = _pytest(project, *args)
        assert not _passed(run)
        assert error in run.stdout
        # said once: failing inside the handler printed it twice, chained by
        # "During handling of the above exception" (a new user's session)
        failures = run.stdout.split("short test summary info")[0]
        assert failures.count(error) == 1 and "During handling" not in run.stdout
        assert bad.read_text() == content


def test_a_constant_printed_as_dots_fails_saying_it_cannot_tell(tmp_path):
    elided = PROGRAM.replace("c = f32[] constant(0.5)", "c = f32[] constant(0.5)\n"
                             "  t = f32[4] constant({...})").replace("multiply(p, b)",
                                                                     "multiply(t, b)")
    project = _project(tmp_path, {"program.hlo": elided, "test_text.py": TEST_TEXT})
    assert _passed(_pytest(project, "--hlo-snapshot-update"))
    run = _pytest(project)
    assert not _passed(run)
    assert "cannot tell whether scale changed: XLA printed a constant as {...} at scale/mul " \
           "(model.py:3), and HLO text holds no values to compare it by" in run.stdout
    assert "the program may differ from its snapshot __hlo_snapshots__/test_text_program.hlo" \
        in run.stdout


def test_xdist_workers_write_their_own_snapshots_and_the_summary_counts_them_all(tmp_path):
    tests = "\n".join(f'''
def test_program_{n}(hlo_snapshot):
    hlo_snapshot.check(PROGRAM.replace("0.5", "{n}.5"))
''' for n in range(4))
    project = _project(tmp_path, {"test_many.py": f"PROGRAM = {PROGRAM!r}\n{tests}"})
    update = _pytest(project, "-n", "2", "--hlo-snapshot-update")
    assert _passed(update), update.stdout
    assert "hlodiff: 4 snapshots written (4 new, 0 rewritten)" in update.stdout
    folder = project / "__hlo_snapshots__"
    assert sorted(p.name for p in folder.iterdir()) == [f"test_program_{n}.hlo" for n in range(4)]
    for n in range(4):
        assert f"constant({n}.5)" in (folder / f"test_program_{n}.hlo").read_text()
    assert _passed(_pytest(project, "-n", "2"))


def test_several_programs_in_one_test_need_names(tmp_path):
    project = _project(tmp_path, {"test_two.py": f'''
PROGRAM = {PROGRAM!r}

def test_two(hlo_snapshot):
    hlo_snapshot.check(PROGRAM, name="half")
    hlo_snapshot.check(PROGRAM.replace("0.5", "0.25"), name="quarter")

def test_twice(hlo_snapshot):
    hlo_snapshot.check(PROGRAM)
    hlo_snapshot.check(PROGRAM)
'''})
    run = _pytest(project, "--hlo-snapshot-update")
    assert "this test checks a second program without a name: give each check its own name=" \
        in run.stdout
    folder = project / "__hlo_snapshots__"
    assert "constant(0.25)" in (folder / "test_two.quarter.hlo").read_text()
    assert "constant(0.5)" in (folder / "test_two.half.hlo").read_text()


def test_the_plugin_turns_off_with_p_no_hlodiff(tmp_path):
    project = _project(tmp_path, {"program.hlo": PROGRAM, "test_text.py": TEST_TEXT})
    run = _pytest(project, "-p", "no:hlodiff")
    assert "fixture 'hlo_snapshot' not found" in run.stdout
    assert not (project / "__hlo_snapshots__").exists()


# --- the snapshot file itself -------------------------------------------------------------


def test_a_snapshot_file_reads_back_as_it_was_written(tmp_path):
    taken = snapshot.taken(hlodiff.capture(PROGRAM), "test_x.py::test_y", tmp_path)
    path = tmp_path / "x.hlo"
    snapshot.write(taken, path)
    assert snapshot.read(path) == taken
    assert hlodiff.parse_file(path).name == "scale"  # an HLO file, header and all
    assert [p.name for p in tmp_path.iterdir()] == ["x.hlo"]


def test_portable_text_cuts_the_runners_frames_and_makes_paths_relative(tmp_path):
    root = tmp_path / "proj"
    text = f'''HloModule m

FileNames
1 "/usr/lib/python3.11/runpy.py"
2 "{root}/.venv/lib/python3.11/site-packages/_pytest/python.py"
3 "{root}/test_m.py"
4 "/opt/venv/lib/python3.11/site-packages/optax/_src/alias.py"

FunctionNames
1 "_run_module_as_main"
2 "pytest_pyfunc_call"
3 "test_m"
4 "update"

FileLocations
1 {{file_name_id=1 function_name_id=1 line=198 end_line=199 column=11 end_column=42}}
2 {{file_name_id=2 function_name_id=2 line=187 end_line=187 column=13 end_column=37}}
3 {{file_name_id=3 function_name_id=3 line=9 end_line=9 column=23 end_column=57}}
4 {{file_name_id=4 function_name_id=4 line=40 end_line=40 column=1 end_column=9}}

StackFrames
1 {{file_location_id=1 parent_frame_id=1}}
2 {{file_location_id=2 parent_frame_id=2}}
3 {{file_location_id=3 parent_frame_id=3}}
4 {{file_location_id=4 parent_frame_id=4}}


ENTRY %e () -> f32[] {{
  ROOT %c = f32[] constant(1), metadata={{op_name="update" stack_frame_id=4}}
}}
'''
    module = hlodiff.parse(portable(text, root))
    (_, instruction), = module.instructions()
    origin = module.origin(instruction)
    assert [(f.file, f.function, f.line) for f in origin.stack] == [
        ("<site-packages>/optax/_src/alias.py", "update", 40), ("test_m.py", "test_m", 9)]
    assert origin.location == "test_m.py:9"


def test_a_changed_large_constant_is_decided_by_its_digest(tmp_path):
    import jax
    import numpy as np

    def lowered(table):
        return jax.jit(lambda x: x * table).lower(np.ones(64, np.float32))

    table = np.arange(64, dtype=np.float32) / 7
    taken = snapshot.taken(hlodiff.capture(lowered(table)), "t", tmp_path)
    assert "constant({...})" in taken.hlo and len(taken.constants) == 1
    path = tmp_path / "t.hlo"
    snapshot.write(taken, path)
    same = snapshot.check(path, snapshot.taken(hlodiff.capture(lowered(table)), "t", tmp_path))
    assert same.outcome == "same"
    table[3] = 99
    changed = snapshot.check(path, snapshot.taken(hlodiff.capture(lowered(table)), "t", tmp_path))
    assert changed.outcome == "changed"
    assert changed.report.top.detail == "module.mlir shows different values of tensor<64xf32>"
