"""Python's garbage collector paused while a diff builds what it keeps.

The collector runs whenever enough new container objects pile up, and from
time to time walks every object still alive. Reading, pairing and diffing
big dumps makes millions of objects (strings, lists, instructions) and frees
few of them, none in cycles, until the diff is done: each walk finds
nothing, and walks what is kept over and over. On the every-constant pair
of bench/ (dtype20) that was 2.9 s of a 14 s diff; pausing it changed no
peak memory there, nor on model40 and lr40 (bench/README.md).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No collection inside the block; the collector as it was after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
