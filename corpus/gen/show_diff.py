"""Show how the main modules of a case differ (a helper for writing truth.json).

    python corpus/gen/show_diff.py CASE MAIN_PROGRAM [before|after] [--raw]

Prints a unified diff of run_a vs run_b main module text; by default with
%identifiers renumbered and metadata kept (use --raw for the files as is).
"""
import difflib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_truth as ct  # noqa: E402


def renumber(text):
    names = {}

    def ren(m):
        return "%%v%d" % names.setdefault(m.group(1), len(names))
    return re.sub(r"%([A-Za-z0-9_.\-]+)", ren, text)


def main(argv):
    case, prog = argv[0], argv[1]
    stage = argv[2] if len(argv) > 2 and not argv[2].startswith("--") else "before"
    raw = "--raw" in argv
    texts = []
    for r in ("run_a", "run_b"):
        before, after = ct.main_files(os.path.join(ct.CORPUS, case, r), prog)
        p = before if stage == "before" else after
        print("#", r, os.path.basename(p))
        t = ct.read(p)
        texts.append(t if raw else renumber(t))
    for line in difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(),
                                     "run_a", "run_b", n=0, lineterm=""):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
