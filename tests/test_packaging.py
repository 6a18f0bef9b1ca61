"""An installed wheel, not only a checkout, must find its grammar files."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

from conftest import ROOT


def test_wheel_ships_the_grammars_and_parses_from_outside_the_checkout(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
                    str(ROOT)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("hlodiff-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {"hlodiff/grammar/hlo.lark", "hlodiff/grammar/shape.lark",
            "hlodiff/grammar/value.lark"} <= set(names)

    # A new virtualenv that sees this environment's dependencies (lark, rich...)
    # through a .pth file, but not its hlodiff: an editable install's own .pth
    # files are not read from a directory a .pth file adds.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    venv_site = subprocess.run([str(python), "-c", purelib], check=True, capture_output=True,
                               text=True).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(venv_site) / "hlodiff_test_deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True)
    probe = ("import hlodiff, hlodiff.syntax.grammars as g; "
             "print(g.grammar_dir()); "
             "print(hlodiff.parse('ENTRY e { ROOT c = f32[] constant(1) }').entry.root.opcode)")
    out = subprocess.run([str(python), "-c", probe], cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out[0].startswith(str(venv)) and out[0].endswith("hlodiff/grammar")
    assert out[1] == "constant"
