"""Answers kept between runs, as plain signed data that nothing can make run code.

A pre-merge check or a person iterating on a fix diffs the same two dumps
again and again; the second time should cost a hash of the files, not a
parse and an alignment. The same goes for Lark's analysis of hlodiff's
grammars. Entries live in the user's cache directory (hlodiff/paths.py;
never in a dump directory).

The cache directory can be written by others than its user: a CI cache
restored between jobs, a shared home, a container volume. So an entry is
JSON (hlodiff/plain.py rebuilds typed values from it; there is no pickle and
no other code path), and it is signed with HMAC-SHA256 over its name and
content, under a key that only the user can read: ``cache.key`` in
``$HLODIFF_SECRET_DIR``, else ``$XDG_CONFIG_HOME/hlodiff``, else
``~/.config/hlodiff``, a 0700 folder outside the cache directory. An entry
that is unsigned, forged, moved to another name, damaged or from an
incompatible hlodiff is ignored (``say`` is told why) and the answer is
computed afresh. Where no private key can be had, nothing is cached.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any, Callable, TypeVar

from .errors import HlodiffError
from .paths import cache_dir, package_files, secret_dir
from .plain import from_plain, to_plain

T = TypeVar("T")
Say = Callable[[str], None]

_MAGIC = b"hlodiff-cache-2\n"
_KEY_BYTES = 32
_PARALLEL_BYTES = 16_000_000  # below this, hashing takes ~10 ms: no threads


def _quiet(_: str) -> None:
    """The default ``say``: nothing to report."""


# --- keys ---------------------------------------------------------------------------

@cache
def program_identity() -> bytes:
    """The content of hlodiff's own modules and grammars: an upgrade or a local
    edit that can change an answer never reuses an old one."""
    digest = hashlib.sha256()
    for path in package_files():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


def key(what: str, options: tuple, named: list[str], by_content: list[Path]) -> str:
    """The name of the entry for ``what`` with ``options``, over plain data the
    caller lists: ``named`` strings (file names and sizes, say) and the files
    ``by_content``, hashed whole."""
    digest = hashlib.sha256(program_identity())
    digest.update(what.encode() + b"\0" + json.dumps(options).encode())
    for text in named:
        digest.update(text.encode() + b"\0")
    for content in _file_digests(by_content):
        digest.update(content)
    return f"{what}-{digest.hexdigest()}"


def _file_digests(paths: list[Path]) -> Iterator[bytes]:
    """The sha256 of each file, in order; on several cores at once when there
    is much to read (hashlib lets go of the GIL while it hashes)."""
    total = sum(_size(p) for p in paths)
    workers = min(len(paths), os.cpu_count() or 1)
    if workers < 2 or total < _PARALLEL_BYTES:
        return map(_file_digest, paths)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return iter(list(pool.map(_file_digest, paths)))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _file_digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError as err:  # as the parser would say it, which never got to read it
        raise HlodiffError(f"{path}: cannot read: {err.strerror}") from None
    return digest.digest()


# --- the signing key ------------------------------------------------------------------

def _private_folder(folder: Path) -> bool:
    """Is ``folder`` ours and closed to everyone else (0700 or stricter)?"""
    try:
        info = folder.stat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() \
        and not info.st_mode & 0o077


@cache
def _signing_key() -> bytes | None:
    """The user's private key, made on first use; None where none can be trusted."""
    folder = secret_dir()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    if not _private_folder(folder):
        return None
    path = folder / "cache.key"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError:
        return None
    else:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(_KEY_BYTES))
    try:
        info = path.stat()
        data = path.read_bytes()
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or len(data) != _KEY_BYTES:
        return None
    return data


def _signature(key_bytes: bytes, entry: str, payload: bytes) -> bytes:
    return hmac.new(key_bytes, entry.encode() + b"\0" + payload, hashlib.sha256).hexdigest().encode()


# --- entries ------------------------------------------------------------------------------

def load_bytes(entry: str, say: Say = _quiet) -> bytes | None:
    """The payload stored under ``entry`` if it carries the user's signature, else None."""
    path = cache_dir() / entry
    try:
        data = _read_entry(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        say(f"cache: {path}: unreadable ({err.strerror}); computing afresh")
        return None
    key_bytes = _signing_key()
    if key_bytes is None:
        say(f"cache: no private signing key in {secret_dir()}; computing afresh")
        return None
    head, _, payload = data[len(_MAGIC):].partition(b"\n")
    if not data.startswith(_MAGIC) or not hmac.compare_digest(
            head, _signature(key_bytes, entry, payload)):
        say(f"cache: {path}: not signed by this user's key (forged, damaged or "
            "from another machine); ignored, computing afresh")
        return None
    return payload


_ENTRY_LIMIT = 1 << 31  # bytes: the biggest entry a diff writes is a few hundred MB


def _read_entry(path: Path) -> bytes:
    """An entry's bytes, where it is a regular file of sane size. Others may
    write the cache folder: a FIFO there would hang the reader, a link to
    /dev/zero exhaust its memory, so neither is followed or waited on."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file")
        if info.st_size > _ENTRY_LIMIT:
            raise OSError(0, f"{info.st_size} bytes, more than an entry holds")
        return f.read(_ENTRY_LIMIT + 1)


def store_bytes(entry: str, payload: bytes) -> None:
    """Keep ``payload`` under ``entry``, signed; a cache that cannot be written is skipped."""
    key_bytes = _signing_key()
    if key_bytes is None:
        return
    directory = cache_dir()
    temporary = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, delete=False) as f:
            temporary = f.name
            f.write(_MAGIC + _signature(key_bytes, entry, payload) + b"\n" + payload)
        os.replace(temporary, directory / entry)  # readers never see half an entry
    except OSError:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)


def load(entry: str, kind: type[T], say: Say = _quiet) -> T | None:
    """The ``kind`` value stored under ``entry``, or None (absent, unsigned, damaged)."""
    payload = load_bytes(entry, say)
    if payload is None:
        return None
    try:
        return from_plain(json.loads(payload), kind)
    except (ValueError, TypeError) as err:  # signed by us, but by an hlodiff that wrote other fields
        say(f"cache: {entry}: does not hold a {kind.__name__} ({err}); computing afresh")
        return None


def store(entry: str, value: Any) -> None:
    """Keep the dataclass ``value`` under ``entry``."""
    store_bytes(entry, json.dumps(to_plain(value), separators=(",", ":")).encode())
