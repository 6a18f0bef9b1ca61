"""The README's hlodiff.compare example, run exactly as written.

(Its hlo_snapshot example runs in tests/test_snapshot.py.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_compares_two_lowered_programs(tmp_path):
    section = README.read_text().split("## From Python: compare what the framework hands you")[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    example = tmp_path / "example.py"
    example.write_text(code)
    env = {**os.environ, "COLUMNS": "200", "JAX_PLATFORMS": "cpu"}
    printed = subprocess.run([sys.executable, str(example)], cwd=tmp_path, env=env, check=True,
                             capture_output=True, text=True).stdout
    promised = re.search(r"its top cause is `(constant .*?) \(/path/to/example.py:(\d+)\)`",
                         " ".join(section.split())).groups()
    assert f"Top cause: {promised[0]} ({example}:{promised[1]})." in " ".join(printed.split())
    assert printed.startswith("Recompiles (jit_train_step)")
