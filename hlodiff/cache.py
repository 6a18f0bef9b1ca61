"""Diff results kept between runs, keyed by the content of what was read.

A pre-merge check or a person iterating on a fix diffs the same two dumps
again and again; the second time should cost a hash of the files, not a
parse and an alignment. Entries live in the user's cache directory (never
in a dump directory): ``$HLODIFF_CACHE_DIR``, else ``$XDG_CACHE_HOME/hlodiff``,
else ``~/.cache/hlodiff``. The key covers hlodiff's version, its grammar
files, the options and every file a diff reads (HLO text, module.mlir,
debug_options: by content; other files: by name and size, since they only
take part in pairing). Each entry carries a checksum of its payload: a
truncated or corrupt entry is detected, ignored and replaced.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .dumps import HLO_TEXT, Dump
from .grammar_files import grammar_dir

_MAGIC = b"hlodiff-cache-1\n"
_READ_BY_CONTENT = frozenset({HLO_TEXT, "module.mlir", "debug_options"})
_PARALLEL_BYTES = 16_000_000  # below this, hashing takes ~10 ms: no threads


def cache_dir() -> Path:
    explicit = os.environ.get("HLODIFF_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hlodiff"


def _program_identity() -> bytes:
    """hlodiff's version and grammars: a new release must not reuse old results."""
    from . import __version__
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(grammar_dir().glob("*.lark")):
        digest.update(path.read_bytes())
    return digest.digest()


def key(dumps: list[Dump], options: tuple) -> str:
    """The cache key of a diff of ``dumps`` with ``options``."""
    digest = hashlib.sha256(_program_identity())
    digest.update(repr(options).encode())
    entries = []  # (what is hashed by name, path hashed by content or None), in order
    read_bytes = 0
    for dump in dumps:
        entries.append((b"\0dump\0", None))
        for file in sorted(dump.files, key=lambda f: f.relative):
            read = dump.root / file.relative if file.kind in _READ_BY_CONTENT else None
            read_bytes += file.size if read is not None else 0
            entries.append((f"{file.relative}\0{file.size}\0".encode(), read))
    contents = _file_digests([path for _, path in entries if path is not None], read_bytes)
    for named, path in entries:
        digest.update(named)
        if path is not None:
            digest.update(next(contents))
    return digest.hexdigest()


def _file_digests(paths: list[Path], total_bytes: int) -> Iterator[bytes]:
    """The sha256 of each file, in order; on several cores at once when there
    is much to read (hashlib lets go of the GIL while it hashes)."""
    workers = min(len(paths), os.cpu_count() or 1)
    if workers < 2 or total_bytes < _PARALLEL_BYTES:
        return map(_file_digest, paths)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return iter(list(pool.map(_file_digest, paths)))


def _file_digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.digest()


def load(entry: str) -> Any | None:
    """The value stored under ``entry``, or None (absent, corrupt or unreadable)."""
    try:
        data = (cache_dir() / entry).read_bytes()
    except OSError:
        return None
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 32:
        return None
    checksum, payload = data[len(_MAGIC):len(_MAGIC) + 32], data[len(_MAGIC) + 32:]
    if hashlib.sha256(payload).digest() != checksum:
        return None
    try:
        return pickle.loads(payload)
    except Exception:  # a payload from an incompatible hlodiff: treat as absent
        return None


def store(entry: str, value: Any) -> None:
    """Keep ``value`` under ``entry``; a cache that cannot be written is skipped."""
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    directory = cache_dir()
    temporary = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, delete=False) as f:
            temporary = f.name
            f.write(_MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(temporary, directory / entry)  # readers never see half an entry
    except OSError:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
