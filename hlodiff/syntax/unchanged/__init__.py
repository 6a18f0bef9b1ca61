"""The unchanged pass: what two runs share, found before anything is parsed.

Two dumps that should have shared an executable are nearly the same text. A
learning-rate change alters a few thousand of 350,000 lines; an op added to
the model renumbers every later instruction and computation, but leaves
nearly every line the same once names are put aside. Reading and aligning
every instruction costs far more than comparing lines, so, as difftastic
does before its structural diff, this pass first finds what is unchanged and
hands only the rest to the parser and the aligner.

Two lines are unchanged when they are equal once each name is replaced by
its twin in the other run: the same opcode, shape, attributes, metadata and
constant, reading the twins of what the other reads. They can take part in no
change the differ reports. hlodiff/syntax/unchanged/pairing.py finds them:

* computations equal once names are put aside (each instruction name stands
  for the line defining it, each called computation for what it holds, each
  stack frame for what it says) are paired whole; those of the same name and
  the same text are found without cutting them at their names;
* in computations that changed, lines are paired by name when no
  computation was added or removed (hlodiff/syntax/unchanged/namesakes.py,
  byte for byte), else by content, from the entry computations down the
  calls of paired lines.

What is paired is the same whatever the size of the files: the seed is
handed to the aligner either way, so a report does not depend on the pass.
On big files (``MIN_BYTES``) what is unchanged is also left unparsed:

* a computation unchanged as a whole, header to '}', is skipped by the
  scanner as one token and becomes an ``UnchangedComputation``: its lines
  are not even split until something asks for its instructions, and the
  aligner and the differ never do (most computations of a big dump);
* elsewhere, unchanged lines are left unparsed, as ``Unparsed`` instructions
  (a run of them is one token for the parser), unless they read an
  instruction that changed: those are parsed, so that the aligner can pair
  the changed instruction by its place among their operands, as it pairs
  everything else.

A line holding ``{...}`` is never unchanged: equal elided text says nothing
about the values. Lines not laid out one instruction per line, as XLA prints
them, are parsed. Lines left unparsed still get the checks the parser would
make (hlodiff/syntax/unchanged/checks.py): names defined before use and only
once, known opcodes, brackets closed and not nested too deep; a computation
that fails them is parsed, so that the parser reports the error at its
place, as for a small file.
"""

from __future__ import annotations

from ...collector import paused
from ...errors import HlodiffError
from ...model import Module
from ..parser import parse
from . import pairing
from .outline import outline_of
from .plan import Checked, LinePairs, Plan, Run, Seed, SeedSide, SkippedComputation

__all__ = ["MIN_BYTES", "LinePairs", "Plan", "Run", "Seed", "SeedSide", "SkippedComputation",
           "parse_pair", "plan_pair"]

# Below this (both texts together) parsing everything is quick anyway.
MIN_BYTES = 2_000_000


def parse_pair(text_a: str, text_b: str, path_a: str | None = None,
               path_b: str | None = None, *, min_bytes: int = MIN_BYTES,
               failing_a: Checked = None) -> tuple[Module, Module, Seed]:
    """Both modules, with what the two texts share left unparsed when they
    are ``min_bytes`` or more together, and the seed (the same either way).

    ``failing_a``: run a's checks, made elsewhere (see Plan.skip). Nothing
    waits for them: run a's lines are skipped on faith, and the checks are
    heard once both texts are parsed. Should they fail a computation
    skipped so, or give no answer, both texts are read again as if they had
    been heard first, so that the error is the one a small file gives."""
    skipping = len(text_a) + len(text_b) >= min_bytes
    plan = plan_pair(text_a, text_b, skipping, failing_a, on_faith=True)
    if plan is None:
        return parse(text_a, path=path_a), parse(text_b, path=path_b), Seed()
    try:
        a = parse(text_a, path=path_a, unchanged=plan.runs_a)
        b = parse(text_b, path=path_b, unchanged=plan.runs_b)
    except HlodiffError:
        if plan.checks_held():
            raise
    else:
        if plan.checks_held():
            return a, b, plan.seed
    heard = plan.failing_a()
    plan = plan_pair(text_a, text_b, skipping, None if heard is None else lambda: heard)
    return (parse(text_a, path=path_a, unchanged=plan.runs_a),
            parse(text_b, path=path_b, unchanged=plan.runs_b), plan.seed)


def plan_pair(text_a: str, text_b: str, skipping: bool = True,
              failing_a: Checked = None, on_faith: bool = False) -> Plan | None:
    """What two texts share, or None when they are not laid out as XLA
    prints them. What is paired does not depend on ``skipping``: only
    whether the plan says what to skip (``failing_a``, ``on_faith``: see
    Plan.skip)."""
    outline_a, outline_b = outline_of(text_a), outline_of(text_b)
    if outline_a is None or outline_b is None:
        return None
    with paused():  # millions of strings and lists, freed at the end: nothing to collect
        return pairing.plan(text_a, outline_a, text_b, outline_b, skipping, failing_a, on_faith)
