"""Where hlodiff finds its grammar files and keeps its cache.

A leaf: it imports nothing of hlodiff's, so every layer may ask it.
"""

from __future__ import annotations

import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent
# In a checkout the grammars sit in the top-level grammar/ folder; the wheel
# copies them into hlodiff/grammar/. Both are looked at, so an editable
# install and an installed wheel behave the same.
_GRAMMAR_CANDIDATES = (_HERE / "grammar", _HERE.parent / "grammar")


def grammar_dir() -> Path:
    """The folder holding hlodiff's ``.lark`` grammar files."""
    for candidate in _GRAMMAR_CANDIDATES:
        if (candidate / "hlo.lark").is_file():
            return candidate
    raise FileNotFoundError(
        "hlodiff's grammar files are missing; looked in " + ", ".join(map(str, _GRAMMAR_CANDIDATES)))


def cache_dir() -> Path:
    """The user's hlodiff cache: ``$HLODIFF_CACHE_DIR``, else the platform's
    cache folder (``$XDG_CACHE_HOME/hlodiff`` or ``~/.cache/hlodiff`` on Linux,
    ``~/Library/Caches/hlodiff`` on macOS, ``%LOCALAPPDATA%\\hlodiff\\Cache``
    on Windows). Never a dump directory."""
    explicit = os.environ.get("HLODIFF_CACHE_DIR")
    if explicit:
        return Path(explicit)
    from platformdirs import user_cache_path
    return user_cache_path("hlodiff", appauthor=False)


def secret_dir() -> Path:
    """Where the key that signs cache entries lives: ``$HLODIFF_SECRET_DIR``, else
    the platform's configuration folder (``$XDG_CONFIG_HOME/hlodiff`` or
    ``~/.config/hlodiff`` on Linux). Apart from the cache directory on purpose:
    whoever can write the cache must not be able to sign for it
    (hlodiff/cache.py)."""
    explicit = os.environ.get("HLODIFF_SECRET_DIR")
    if explicit:
        return Path(explicit)
    from platformdirs import user_config_path
    return user_config_path("hlodiff", appauthor=False)


def package_files() -> list[Path]:
    """hlodiff's own code and grammars: what a cached answer depends on besides its inputs."""
    files = sorted(_HERE.rglob("*.py")) + sorted(grammar_dir().glob("*.lark"))
    return [f for f in files if "__pycache__" not in f.parts]
