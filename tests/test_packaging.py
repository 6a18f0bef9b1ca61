"""An installed wheel, with only the dependencies it declares, finds its grammars and diffs."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from conftest import CORPUS, ROOT


def test_wheel_ships_the_grammars_and_parses_from_outside_the_checkout(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
                    str(ROOT)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("hlodiff-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {"hlodiff/grammar/hlo.lark", "hlodiff/grammar/shape.lark",
            "hlodiff/grammar/value.lark"} <= set(names)

    # A new virtualenv with the wheel and the dependencies it declares, and
    # nothing else: a package hlodiff needs but does not declare fails here
    # (numpy, which rapidfuzz's cdist imports, once did), not on a user's machine.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)],
                   check=True, capture_output=True)
    probe = ("import hlodiff, hlodiff.syntax.grammars as g; "
             "print(g.grammar_dir()); "
             "print(hlodiff.parse('ENTRY e { ROOT c = f32[] constant(1) }').entry.root.opcode)")
    out = subprocess.run([str(python), "-c", probe], cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out[0].startswith(str(venv)) and out[0].endswith("hlodiff/grammar")
    assert out[1] == "constant"
    # the README's first command, and a pair the aligner must pair by similarity
    for case in ("jax_learning_rate", "jax_flax_batch_size"):
        run = subprocess.run([str(venv / "bin" / "hlodiff"), "diff", str(CORPUS / case / "run_a"),
                              str(CORPUS / case / "run_b"), "--no-cache"], cwd=tmp_path,
                             capture_output=True, text=True)
        assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
        assert run.stdout.startswith("Recompiles")
