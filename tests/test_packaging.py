"""An installed wheel, not only a checkout, must find its grammar files."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from conftest import ROOT


def test_wheel_ships_the_grammars_and_parses_from_outside_the_checkout(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
                    str(ROOT)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("hlodiff-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {"hlodiff/grammar/hlo.lark", "hlodiff/grammar/shape.lark",
            "hlodiff/grammar/value.lark"} <= set(names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True)
    probe = ("import hlodiff, hlodiff.syntax.grammars as g; "
             "print(g.grammar_dir()); "
             "print(hlodiff.parse('ENTRY e { ROOT c = f32[] constant(1) }').entry.root.opcode)")
    out = subprocess.run([str(python), "-c", probe], cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out[0].startswith(str(venv)) and out[0].endswith("hlodiff/grammar")
    assert out[1] == "constant"
