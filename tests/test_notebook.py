"""hlodiff.compare as the last line of a notebook cell shows the HTML report.

A real notebook, written to disk and run headless by nbclient on an IPython
kernel, compares two lowered JAX programs; the test reads what the kernel
sent back for that cell.
"""

from __future__ import annotations

import html
import re

import nbclient
import nbformat

from test_snapshot import MODEL

CELL = '''\
import jax
import numpy as np
import hlodiff
import model

def lowered(step):
    w, x, y = np.zeros((8, 4), np.float32), np.ones((16, 8), np.float32), np.ones((16, 4), np.float32)
    return jax.jit(step).lower(w, x, y)

hlodiff.compare(lowered(model.train_step), lowered(model.train_step_faster))
'''


def test_the_last_line_of_a_cell_shows_the_html_report(tmp_path):
    faster = MODEL.replace("def train_step(", "def train_step_faster(").replace("0.01 * grad",
                                                                              "0.02 * grad")
    (tmp_path / "model.py").write_text(MODEL + "\n\n" + faster)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    path = tmp_path / "compare.ipynb"
    nbformat.write(notebook, path)

    ran = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(ran, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    (output,) = ran.cells[0].outputs  # the result alone: nothing printed on the side
    assert output.output_type == "execute_result"
    shown = output.data["text/html"]
    assert shown.startswith('<iframe title="hlodiff: jit_train_step (jax.stages.Lowered) vs '
                            'jit_train_step_faster (jax.stages.Lowered)" sandbox="allow-scripts"')
    page = html.unescape(re.search(r'srcdoc="(.*)"></iframe>$', shown, re.S).group(1))
    assert page.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in page
    line = next(n for n, text in enumerate(MODEL.splitlines(), 1) if "0.01 * grad" in text)
    text = re.sub(r"<[^>]+>", " ", page)
    assert "0.01" in text and "0.02" in text
    assert f"model.py:{line}" in text
    assert output.data["text/plain"].startswith("Recompiles (jit_train_step")
