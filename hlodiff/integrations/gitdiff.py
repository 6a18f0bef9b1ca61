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

import hashlib
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
    meaningless names); ``under_git`` says git called us. ``external`` holds
    the 7 or 9 arguments of git's external diff, from which a file that is
    not HLO gets the header git itself prints (``diff --git``, ``index``).
    """

    a: str | None
    b: str | None
    title: str | None
    under_git: bool
    external: tuple[str, ...] = ()


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
        return DiffRequest(_side(args[1]), _side(args[4]), args[0], under_git, tuple(args))
    if len(args) == 9:
        return DiffRequest(_side(args[1]), _side(args[4]), f"{args[0]} -> {args[7]}", under_git,
                           tuple(args))
    raise HlodiffError(f"diff takes A B, or the 7 or 9 arguments git passes to an external "
                       f"diff; got {len(args)}")


def _side(path: str) -> str | None:
    return None if path == NULL else path


_ABBREV = 7  # git's shortest object name, as its index lines print it


def _git_header(args: tuple[str, ...]) -> tuple[str, str, str]:
    """The file's paths before and after, and the lines git prints between
    ``diff --git`` and ``---``, from git's external-diff arguments."""
    path, old, old_hex, old_mode, new, new_hex, new_mode = args[:7]
    if len(args) == 9:  # a rename: git hands over its header lines
        return path, args[7], args[8] if args[8].endswith("\n") or not args[8] else args[8] + "\n"
    return path, path, _header(old, old_hex, old_mode, new, _object_name(new, new_hex), new_mode)


def _object_name(path: str, given: str) -> str:
    """A file's object name; git gives none (zeros) for a working-tree file,
    and prints the one it computes."""
    if path == NULL or given.strip("0"):
        return given
    try:
        done = subprocess.run(["git", "hash-object", "--", path], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.SubprocessError):
        return given
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else given


def _header(old: str, old_hex: str, old_mode: str, new: str, new_hex: str,
            new_mode: str) -> str:
    """The lines git prints between ``diff --git`` and ``---`` for a file."""
    before, after = old_hex[:_ABBREV], new_hex[:_ABBREV]
    if old == NULL:
        return f"new file mode {new_mode}\nindex {'0' * _ABBREV}..{after}\n"
    if new == NULL:
        return f"deleted file mode {old_mode}\nindex {before}..{'0' * _ABBREV}\n"
    modes = f"old mode {old_mode}\nnew mode {new_mode}\n" if old_mode != new_mode else ""
    if old_hex == new_hex:
        return modes
    return modes + f"index {before}..{after}" + ("" if modes else f" {new_mode}") + "\n"


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


def is_binary(data: bytes) -> bool:
    """Does git take these bytes for a binary file (a NUL in the first 8000)?"""
    return b"\0" in data[:8000]


def textconv_as_is(data: bytes) -> bytes:
    """What git's textconv shows of a file hlodiff cannot read: its bytes as
    they are, so a byte that is not UTF-8 shows as git would show it without
    the driver (decoded with replacement, two such bytes read alike and their
    change went unseen). Git tells no binary file through a textconv, it
    diffs what the driver prints: a binary file is one line, its size and
    digest, that changes where its bytes do."""
    if not is_binary(data):
        return data
    digest = hashlib.sha256(data).hexdigest()[:16]
    return f"binary file, not HLO text: {len(data)} bytes, sha256 {digest}\n".encode()


def plain_diff(request: DiffRequest) -> str:
    """What git would show for a file that is not HLO: its ``diff --git``
    header (as git's external diff), then a unified diff of its lines, or
    the line saying that binary files differ."""
    title = request.title or request.b or request.a or ""
    old, new, header = _git_header(request.external) if request.external else (title, title, "")
    head = f"diff --git a/{old} b/{new}\n{header}" if request.external else ""
    labels = (f"a/{old}" if request.a is not None else NULL,
              f"b/{new}" if request.b is not None else NULL)
    texts = []
    for side in (request.a, request.b):
        if side is None:
            texts.append([])
            continue
        data = Path(side).read_bytes()
        if is_binary(data):
            if request.external:
                return f"{head}Binary files {labels[0]} and {labels[1]} differ\n"
            return f"Binary files differ: {request.title or side}\n"
        texts.append(data.decode("utf-8", errors="replace").splitlines(keepends=True))
    lines = unified_diff(texts[0], texts[1], *labels)
    return head + "".join(line if line.endswith("\n") else
                          line + "\n\\ No newline at end of file\n" for line in lines)


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
