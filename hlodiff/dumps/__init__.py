"""Dump directories: file names, modules, the main program, and pairing two runs.

``naming`` reads what a file name says; ``catalogue`` groups a directory's
files into modules and picks the main program; ``pairing`` matches the
modules of two runs; ``mlir`` reads JAX's module.mlir sidecar; ``pool``
reads many files on every core.
"""

from .catalogue import (Dump, DumpModule, ListedModule, Listing, MainProgram, file_dump,
                        human_size, list_dump, load_dump, load_target)
from .naming import (AFTER, BEFORE, HLO_TEXT, IN_PASS, PASS, UNKNOWN, DumpFile, NamePart,
                     ProgramName, Stage, classify, legend, normalise_program, program_name)
from .naming import explain as explain_name

__all__ = ["AFTER", "BEFORE", "HLO_TEXT", "IN_PASS", "PASS", "UNKNOWN", "Dump", "DumpFile",
           "DumpModule", "ListedModule", "Listing", "MainProgram", "NamePart", "ProgramName",
           "Stage", "classify", "explain_name", "file_dump", "human_size", "legend", "list_dump",
           "load_dump", "load_target", "normalise_program", "program_name"]
