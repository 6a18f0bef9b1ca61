"""How git calls hlodiff, and the settings that make it do so.

``hlodiff diff`` is called three ways:

* by a person or by ``git difftool -x 'hlodiff diff'``: ``A B``;
* as git's external diff (``diff.external`` or ``diff.<driver>.command``):
  ``path old-file old-hex old-mode new-file new-hex new-mode``, and for a
  rename two more, ``new-path`` and the rename header; a file added or
  deleted has ``/dev/null`` on the other side.

Under git (which sets ``GIT_DIFF_PATH_COUNTER`` for every external diff and
difftool call) a non-zero exit makes ``git diff`` stop with "external diff
died", so hlodiff then exits 0 unless ``--exit-code`` asks otherwise, as
difftastic does; a file that is not HLO (a dump's module.mlir, a README)
gets the unified diff git would print.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from difflib import unified_diff
from fnmatch import fnmatch
from pathlib import Path
from typing import Mapping

from ..errors import HlodiffError

NULL = "/dev/null"


@dataclass(frozen=True)
class DiffRequest:
    """What to compare and how to label it.

    ``a`` / ``b`` are None for the side of an added or deleted file.
    ``title`` is the path in the repository (git's temporary files have
    meaningless names); ``under_git`` says git called us.
    """

    a: str | None
    b: str | None
    title: str | None
    under_git: bool


def diff_request(args: tuple[str, ...], env: Mapping[str, str]) -> DiffRequest:
    """Read the arguments of ``hlodiff diff`` in any of the forms git uses.

    >>> diff_request(("a.hlo", "b.hlo"), {})
    DiffRequest(a='a.hlo', b='b.hlo', title=None, under_git=False)
    >>> r = diff_request(("m.hlo", "/tmp/x", "1a", "100644", "m.hlo", "2b", "100644"),
    ...                  {"GIT_DIFF_PATH_COUNTER": "1"})
    >>> r.title, r.under_git
    ('m.hlo', True)
    """
    under_git = "GIT_DIFF_PATH_COUNTER" in env
    if len(args) == 2:
        # git difftool exports the repository path as BASE for -x commands
        title = env.get("BASE") if under_git else None
        return DiffRequest(_side(args[0]), _side(args[1]), title, under_git)
    if len(args) == 7:
        return DiffRequest(_side(args[1]), _side(args[4]), args[0], under_git)
    if len(args) == 9:
        return DiffRequest(_side(args[1]), _side(args[4]), f"{args[0]} -> {args[7]}", under_git)
    raise HlodiffError(f"diff takes A B, or the 7 or 9 arguments git passes to an external "
                       f"diff; got {len(args)}")


def _side(path: str) -> str | None:
    return None if path == NULL else path


def is_hlo(request: DiffRequest) -> bool:
    """Is the file git hands over HLO text? By its name in the repository
    (``PATTERNS``), else by how it starts: a dump checked in whole holds
    module.mlir, .debug_options and notes beside its modules, and git's
    external diff calls hlodiff for each of them."""
    name = (request.title or "").split(" -> ")[-1].rsplit("/", 1)[-1]
    if any(fnmatch(name, pattern) for pattern in PATTERNS):
        return True
    side = request.a if request.a is not None else request.b
    return side is not None and starts_as_hlo(side)


def starts_as_hlo(path: str) -> bool:
    """Does the file start as HLO text does (a header, an ENTRY, a computation
    or a frame table)? A file that cannot be read does: the diff says why."""
    try:
        with open(path, "rb") as stream:
            start = stream.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return True
    return start.startswith((b"HloModule", b"ENTRY", b"%", b"FileNames"))


def plain_diff(request: DiffRequest) -> str:
    """What git would show for a file that is not HLO: a unified diff of its
    lines, or a line saying that binary files differ."""
    texts = []
    for side in (request.a, request.b):
        if side is None:
            texts.append([])
            continue
        data = Path(side).read_bytes()
        if b"\0" in data[:8192]:
            return f"Binary files differ: {request.title or side}\n"
        texts.append(data.decode("utf-8", errors="replace").splitlines(keepends=True))
    title = request.title or request.b or request.a or ""
    lines = unified_diff(texts[0], texts[1], f"a/{title}", f"b/{title}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


# --- setting git up -----------------------------------------------------------------------

# Files git should show through hlodiff: a hand-named module, and XLA's own dump names.
PATTERNS = ("*.hlo", "*.before_optimizations.txt", "*after_optimizations.txt")


@dataclass(frozen=True)
class GitSettings:
    """Lines for .gitattributes and ``git config`` keys with their values."""

    attributes: tuple[str, ...]
    config: tuple[tuple[str, str], ...]


def git_settings() -> GitSettings:
    """``diff=hlo`` files diff through ``hlodiff canon``; ``git difftool -t hlodiff`` reports."""
    return GitSettings(
        attributes=tuple(f"{p} diff=hlo" for p in PATTERNS),
        # git exports BASE (the path in the repository) for -x commands only: a
        # tool's command sets it, so each report is titled with its file
        config=(("diff.hlo.textconv", "hlodiff canon --textconv"),
                ("difftool.hlodiff.cmd", 'BASE="$MERGED" hlodiff diff "$LOCAL" "$REMOTE"')),
    )


def apply_settings(settings: GitSettings, where: Path) -> tuple[Path, int]:
    """Write ``settings`` into the repository containing ``where``; return its
    root and how many .gitattributes lines were added.

    Config goes through ``git config`` (into .git/config, not the user's
    global file); attribute lines already in .gitattributes are not added twice.
    """
    root = Path(_git(where, "rev-parse", "--show-toplevel").strip())
    for key, value in settings.config:
        _git(root, "config", key, value)
    attributes = root / ".gitattributes"
    present = attributes.read_text().splitlines() if attributes.exists() else []
    missing = [line for line in settings.attributes if line not in present]
    if missing:
        text = "\n".join(present + missing) + "\n"
        attributes.write_text(text)
    return root, len(missing)


def _git(where: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True)
    except FileNotFoundError:
        raise HlodiffError("git: not found on PATH") from None
    if done.returncode != 0:
        raise HlodiffError(f"git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return done.stdout
