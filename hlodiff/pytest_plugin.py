"""The ``hlo_snapshot`` pytest fixture: guard a compiled program in a test suite.

    def test_train_step_program(hlo_snapshot):
        hlo_snapshot.check(jax.jit(train_step).lower(params, batch))

pytest loads this module through hlodiff's ``pytest11`` entry point; it adds
two options and the fixture, and does nothing until a test asks for the
fixture (``-p no:hlodiff`` leaves it out). Each check captures the program
(hlodiff/integrations/capture.py) and compares it with its snapshot in
``__hlo_snapshots__/`` beside the test file (hlodiff/integrations/snapshot.py).
A failure's message is hlodiff's explanation: its first line is the cause,
old -> new, at the user's file:line.

With pytest-xdist each worker writes its own tests' snapshots, atomically;
the workers' counts reach the summary through ``workeroutput``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

_WRITTEN = pytest.StashKey[list]()
_UNSAFE = re.compile(r"[^\w.\-\[\]=,+]")
UPDATE = "--hlo-snapshot-update"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hlodiff", "hlodiff: compiled-program snapshots (hlo_snapshot)")
    group.addoption(UPDATE, action="store_true",
                    help="write missing hlo_snapshot files and rewrite those that changed")
    group.addoption("--hlo-snapshot-metadata", action="store_true",
                    help="hlo_snapshot checks fail on metadata changes too (op_names, source "
                         "lines), not only on what changes the executable")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_WRITTEN] = []


class HloSnapshot:
    """The fixture's value: ``check`` a program against its snapshot."""

    def __init__(self, request: pytest.FixtureRequest):
        self._request = request
        self._names: set[str] = set()

    def path(self, name: str | None = None) -> Path:
        """Where the snapshot of this test (and ``name``) lives."""
        node = self._request.node
        test = node.nodeid.split("::", 1)[-1].replace("::", ".")
        stem = _UNSAFE.sub("_", test + (f".{name}" if name else ""))
        return Path(node.path).parent / "__hlo_snapshots__" / f"{stem}.hlo"

    def check(self, program: Any, *args: Any, name: str | None = None,
              metadata: bool | None = None, **kwargs: Any) -> None:
        """Fail unless ``program`` still compiles as its snapshot says.

        ``program`` (and ``args``/``kwargs``) is anything ``hlodiff.capture``
        takes. By default only what changes the executable fails; ``metadata``
        (or ``--hlo-snapshot-metadata``) makes op_name and source-line changes
        fail too. ``name`` tells apart several checks in one test.
        """
        from .errors import HlodiffError
        from .integrations import snapshot
        from .integrations.capture import capture

        config = self._request.config
        if name in self._names:
            said = f"named {name!r}" if name else "without a name"
            raise ValueError(f"this test checks a second program {said}: give each check "
                             "its own name=")
        self._names.add(name)
        path = self.path(name)
        shown = _shown(path, config)
        current = snapshot.taken(capture(program, *args, **kwargs),
                                 self._request.node.nodeid, config.rootpath)
        try:
            exists = path.exists()
            if config.getoption(UPDATE):
                recorded = snapshot.read(path) if exists else None  # never overwrite a bad file
                if recorded is None or recorded.text != current.text:
                    snapshot.write(current, path)
                    config.stash[_WRITTEN].append((shown, "rewritten" if exists else "new"))
                return
            if not exists:
                pytest.fail(f"no snapshot of this program yet: run pytest {UPDATE} to write "
                            f"{shown}, then review and commit it", pytrace=False)
            checked = snapshot.check(path, current, metadata=bool(
                config.getoption("--hlo-snapshot-metadata") if metadata is None else metadata))
        except HlodiffError as err:
            error = str(err)
        else:
            error = None
        if error is not None:  # failed outside the handler: pytest shows it once, unchained
            pytest.fail(error, pytrace=False)
        if checked.outcome != "same":
            pytest.fail(_explained(checked, shown, config), pytrace=False)


@pytest.fixture
def hlo_snapshot(request: pytest.FixtureRequest) -> HloSnapshot:
    """Check compiled programs against snapshots in ``__hlo_snapshots__/`` beside the test."""
    return HloSnapshot(request)


def _shown(path: Path, config: pytest.Config) -> str:
    """The snapshot's path as the user reads it: from the project root."""
    try:
        return str(path.relative_to(config.rootpath))
    except ValueError:
        return str(path)


def _explained(checked, shown: str, config: pytest.Config) -> str:
    """The failure message: the cause in one line, then hlodiff's report."""
    from .comparison import drawn
    from .render.report import describe

    report = checked.report
    if checked.outcome == "undecided":
        first = _undecided(checked)
    else:
        first = describe(checked.causes[0], _FirstLine())
    body = drawn(report, max(config.get_terminal_writer().fullwidth, 80))
    differs = "differs" if checked.outcome == "changed" else "may differ"
    lines = [_visible(first), f"the program {differs} from its snapshot {shown}; hlodiff says:",
             body.rstrip("\n")]
    if checked.snapshot.constants is not None and any(
            f.kind == "elided_constant" for f in report.findings):
        lines.append("(the snapshot keeps the sha256 of each constant's values in JAX's "
                     "StableHLO: that is the module.mlir above)")
    if checked.snapshot.framework != checked.now.framework:
        lines.append(f"the snapshot was written with {checked.snapshot.framework}, this run has "
                     f"{checked.now.framework}")
    lines.append(f"if the change is meant: pytest {UPDATE} rewrites {shown} "
                 "(review its diff before committing)")
    return "\n".join(lines)


def _visible(text: str) -> str:
    from .render.escape import terminal
    return terminal(text)


class _FirstLine:
    """The cause in one line (a ``render.report.Spelling``, whose module loads
    only on a failure): strings from the program made visible, values cut."""

    def value(self, text: str) -> str:
        from .render.shorten import middle
        return middle(_visible(text), 60)

    op_name = location = staticmethod(_visible)


def _undecided(checked) -> str:
    """Why the check cannot tell, and what would let it."""
    origin = checked.undecided[0].origin
    place = " ".join(filter(None, (_visible(origin.op_name or ""),
                                   f"({_visible(origin.location)})" if origin.location else "")))
    framework = checked.now.framework
    source = "HLO text" if framework == "unknown" else f"a {framework} capture"
    hint = "; check the jax.stages.Lowered program instead, whose snapshot compares such " \
           "constants by their values" if framework.startswith("jax") else ""
    return (f"cannot tell whether {checked.snapshot.program} changed: XLA printed a constant "
            f"as {{...}}{' at ' + place if place else ''}, and {source} holds no values to "
            f"compare it by{hint}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: the controller counts
        workeroutput["hlodiff_snapshots_written"] = session.config.stash[_WRITTEN]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """pytest-xdist: a worker finished; count the snapshots it wrote."""
    written = getattr(node, "workeroutput", {}).get("hlodiff_snapshots_written", [])
    node.config.stash[_WRITTEN].extend(tuple(w) for w in written)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    written = config.stash[_WRITTEN]
    if not written and not config.getoption(UPDATE):
        return
    new = sum(1 for _, how in written if how == "new")
    said = f"{len(written)} snapshot{'s' if len(written) != 1 else ''} written" + \
        (f" ({new} new, {len(written) - new} rewritten)" if written else "")
    terminalreporter.write_sep("-", f"hlodiff: {said}")
    for shown, how in sorted(written):
        terminalreporter.write_line(f"{how}: {shown}")
