"""Replace absolute paths of the generating machine inside dump files.

    python corpus/gen/sanitize.py DIR [DIR ...]

Every regular file under each DIR is rewritten in place (bytes; only the path
prefixes below change, nothing else).  Replacements, most specific first:

    <repo>/corpus/gen/...                    -> corpus/gen/...
    <venv>/lib/pythonX.Y/site-packages/...   -> <site-packages>/...
    /usr/lib/pythonX.Y/... , /usr/local/...  -> <python-lib>/...
    <dump dir> (a /work/... or /tmp/... path) -> <dump-dir>
    /tmp/<anything>                          -> <tmp>/<anything>
    /root, /home/<user>                      -> <home>

File names are never changed.  Stdlib only.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

RULES = [
    # generator scripts (and anything else inside the repo)
    (re.compile(re.escape(REPO.encode()) + rb"/"), b""),
    # the dump directories themselves (xla_dump_to in debug_options etc.)
    # are handled per directory in sanitize_dir
    (re.compile(rb"/[^\s\"':]*?/(?:site|dist)-packages/"), b"<site-packages>/"),
    (re.compile(rb"/usr/(?:local/)?lib/python3(?:\.\d+)?/"), b"<python-lib>/"),
    (re.compile(rb"/(?:root|home/[^/\s\"']+)/\.pyenv/versions/[^/\s\"']+/lib/python3(?:\.\d+)?/"),
     b"<python-lib>/"),
    (re.compile(rb"/tmp/"), b"<tmp>/"),
    (re.compile(rb"/root(?=[/\s\"']|$)"), b"<home>"),
    (re.compile(rb"/home/[^/\s\"']+"), b"<home>"),
    (re.compile(rb"/usr/(?:local/)?bin/"), b"<bin>/"),
]


def sanitize_bytes(data, dump_dir):
    # the absolute dump directory -> relative "run_x" style path
    rel = os.path.relpath(dump_dir, REPO).encode()
    data = data.replace(os.path.abspath(dump_dir).encode(), rel)
    for pat, rep in RULES:
        data = pat.sub(rep, data)
    return data


def dump_dirs(top):
    """run_* directories below top (or top itself)."""
    top = os.path.abspath(top)
    found = [os.path.join(top, d) for d in sorted(os.listdir(top))
             if d.startswith("run_") and os.path.isdir(os.path.join(top, d))]
    return found or [top]


def sanitize_dir(top):
    changed = 0
    for d in dump_dirs(top):
        for root, _dirs, files in os.walk(d):
            for f in files:
                p = os.path.join(root, f)
                with open(p, "rb") as fh:
                    data = fh.read()
                new = sanitize_bytes(data, d)
                if new != data:
                    with open(p, "wb") as fh:
                        fh.write(new)
                    changed += 1
    return changed


def main(argv):
    for top in argv:
        n = sanitize_dir(top)
        print("sanitized %d files under %s" % (n, top))


if __name__ == "__main__":
    main(sys.argv[1:])
