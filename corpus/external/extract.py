"""Pull HLO module texts out of files of public repositories.

Two uses:

* ``extract.py file PATH...`` prints what it finds in local files (one JSON
  line per module: path, line, kind, text), to try it on anything.
* ``extract.py build`` reads ``sources.tsv`` (beside this script), takes each
  listed repository from a snapshot brought here with the search tool's
  ``fetch`` (a bare git directory under ``--mirror``), extracts every module
  from the listed paths at the snapshot's HEAD and writes
  ``OUT/modules/<slug>/<n>.hlo`` plus ``MANIFEST.tsv`` (beside this script).
  Rerunning it on the same snapshots gives the same files and manifest.

What counts as a module: a whole file that is HLO text (a dump: ``HloModule``
header, possibly several separated by ``// -----``), or a string literal in
source code or documentation that holds an ``HloModule`` header or an
``ENTRY`` computation. Literals are read the way the language means them:

* C/C++: raw strings ``R"delim(...)delim"`` (taken exactly) and ordinary
  ``"..."`` literals, adjacent ones concatenated, escapes decoded;
* Python: triple-quoted strings (``r``/``b`` prefixes; f-strings are skipped,
  their braces are format fields), escapes decoded unless raw;
* JavaScript/TypeScript: template literals (skipped if they interpolate
  ``${...}``); Go: backquoted raw strings; Rust: ``r#"..."#`` and ``"..."``;
* Markdown/reStructuredText/notebook text: fenced or indented code blocks
  (notebooks: the JSON is decoded first).

Templates that are filled in before parsing (``$0`` from absl::Substitute,
``%s``/``%d`` from printf, ``{name}`` Python fields) are skipped: the text
as written is not what any parser saw.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_BYTES = 4 * 1024 * 1024

_HEADER = re.compile(r"^[ \t]*HloModule[ \t]+\S", re.M)
_ENTRY = re.compile(r"^[ \t]*ENTRY[ \t]+%?[\w.\-]+", re.M)
_SPLIT = re.compile(r"^[ \t]*//[ \t]*-----[ \t]*$", re.M)
_TEMPLATE = re.compile(r"\$\d|\$\{|%[sd]\b|%\([a-z_]+\)s")


@dataclass
class Found:
    line: int  # 1-based line of the module's first character in the file
    kind: str  # "dump" or "test-string"
    text: str


# --- string literals per language ---------------------------------------------------------

_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0",
              "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}


def _decode_c(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            n = body[i + 1]
            if n == "\n":  # line continuation
                i += 2
                continue
            if n in "01234567" and i + 2 < len(body) and body[i + 2] in "01234567":
                m = re.match(r"[0-7]{1,3}", body[i + 1:])
                out.append(chr(int(m.group(0), 8)))
                i += 1 + len(m.group(0))
                continue
            if n == "x":
                m = re.match(r"[0-9a-fA-F]+", body[i + 2:])
                if m:
                    out.append(chr(int(m.group(0), 16) & 0xFF))
                    i += 2 + len(m.group(0))
                    continue
            out.append(_C_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _skip_comment_or_char(text: str, i: int) -> int | None:
    """If a C-like comment or char literal starts at i, the index after it."""
    if text.startswith("//", i):
        j = text.find("\n", i)
        return len(text) if j < 0 else j
    if text.startswith("/*", i):
        j = text.find("*/", i + 2)
        return len(text) if j < 0 else j + 2
    if text[i] == "'":
        m = re.compile(r"'(?:[^'\\\n]|\\.){1,8}'").match(text, i)
        return m.end() if m else i + 1
    return None


def c_literals(text: str) -> list[tuple[int, str]]:
    """(offset, value) of each string literal in C/C++ source; adjacent ordinary
    literals (only whitespace or comments between them) are joined."""
    found: list[tuple[int, str]] = []
    i, n = 0, len(text)
    pending: tuple[int, list[str]] | None = None
    raw = re.compile(r'(?:u8|[uUL])?R"([^()\\\s]{0,16})\(')
    plain = re.compile(r'(?:u8|[uUL])?"((?:[^"\\\n]|\\.|\\\n)*)"', re.S)

    def flush():
        nonlocal pending
        if pending:
            found.append((pending[0], "".join(pending[1])))
            pending = None

    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        skip = _skip_comment_or_char(text, i)
        if skip is not None:
            i = skip
            continue
        m = raw.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            flush()
            close = ")" + m.group(1) + '"'
            j = text.find(close, m.end())
            if j < 0:
                break
            found.append((m.end(), text[m.end():j]))
            i = j + len(close)
            continue
        m = plain.match(text, i) if c in '"uUL' else None
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            value = _decode_c(m.group(1))
            if pending is None:
                pending = (m.start(1), [value])
            else:
                pending[1].append(value)
            i = m.end()
            continue
        flush()
        i += 1
    flush()
    return found


def python_literals(text: str) -> list[tuple[int, str]]:
    found = []
    pattern = re.compile(r"(?<![\w])([rRbBuUfF]{0,2})(\"\"\"|''')", re.S)
    i = 0
    while True:
        m = pattern.search(text, i)
        if not m:
            break
        prefix, quote = m.group(1).lower(), m.group(2)
        start = m.end()
        j = start
        while True:
            j = text.find(quote, j)
            if j < 0:
                return found
            backslashes = len(text[:j]) - len(text[:j].rstrip("\\"))
            if backslashes % 2 == 0:
                break
            j += 1
        body = text[start:j]
        i = j + 3
        if "f" in prefix:
            continue
        if "r" not in prefix:
            body = _decode_python(body)
        found.append((start, body))
    return found


def _decode_python(body: str) -> str:
    if "\\" not in body:
        return body
    try:
        return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return body


def js_literals(text: str) -> list[tuple[int, str]]:
    found = []
    i = 0
    while True:
        i = text.find("`", i)
        if i < 0:
            break
        j = i + 1
        while j < len(text) and text[j] != "`":
            j += 2 if text[j] == "\\" else 1
        body = text[i + 1:j]
        if "${" not in body:
            found.append((i + 1, _decode_js(body)))
        i = j + 1
    return found


def _decode_js(body: str) -> str:
    return re.sub(r"\\([`\\$])", r"\1", body) if "\\" in body else body


def go_literals(text: str) -> list[tuple[int, str]]:
    return [(m.start(1), m.group(1)) for m in re.finditer(r"`([^`]*)`", text)]


def rust_literals(text: str) -> list[tuple[int, str]]:
    found = [(m.start(2), m.group(2)) for m in re.finditer(r'r(#+)"(.*?)"\1', text, re.S)]
    found += [(m.start(1), _decode_c(m.group(1)))
              for m in re.finditer(r'(?<![#\w])"((?:[^"\\]|\\.)*)"', text, re.S)]
    return found


def doc_blocks(text: str) -> list[tuple[int, str]]:
    """Fenced (```) and indented code blocks of Markdown / reST."""
    found = []
    for m in re.finditer(r"^([ \t]*)(```|~~~)[^\n]*\n(.*?)^\1\2[ \t]*$", text, re.S | re.M):
        found.append((m.start(3), m.group(3)))
    lines = text.splitlines(keepends=True)
    offset, i = 0, 0
    offsets = []
    for line in lines:
        offsets.append(offset)
        offset += len(line)
    while i < len(lines):
        if lines[i].strip() and lines[i][:1] in " \t" and (i == 0 or not lines[i - 1].strip()):
            indent = len(lines[i]) - len(lines[i].lstrip())
            j = i
            block = []
            while j < len(lines) and (not lines[j].strip() or
                                      len(lines[j]) - len(lines[j].lstrip()) >= indent):
                block.append(lines[j][indent:] if lines[j].strip() else "\n")
                j += 1
            found.append((offsets[i], "".join(block)))
            i = j
        else:
            i += 1
    return found


def notebook_blocks(text: str) -> list[tuple[int, str]]:
    try:
        nb = json.loads(text)
    except ValueError:
        return []
    found = []
    for cell in nb.get("cells", []):
        chunks = [cell.get("source", [])]
        for output in cell.get("outputs", []):
            chunks.append(output.get("text", []))
            chunks.extend(output.get("data", {}).get("text/plain", []) and
                          [output["data"]["text/plain"]])
        for chunk in chunks:
            body = "".join(chunk) if isinstance(chunk, list) else str(chunk)
            found.extend((0, value) for _, value in python_literals(body))
            found.append((0, body))
    return found


LANGUAGES = {
    ".cc": c_literals, ".cpp": c_literals, ".cxx": c_literals, ".c": c_literals,
    ".h": c_literals, ".hpp": c_literals, ".cu": c_literals, ".inc": c_literals,
    ".py": python_literals, ".pyi": python_literals,
    ".js": js_literals, ".ts": js_literals, ".mjs": js_literals,
    ".go": go_literals, ".rs": rust_literals,
    ".md": doc_blocks, ".rst": doc_blocks, ".ipynb": notebook_blocks,
}


# --- modules inside a text ----------------------------------------------------------------

def _looks_like_hlo(text: str) -> bool:
    return bool(_HEADER.search(text) or _ENTRY.search(text)) and "{" in text


def split_modules(text: str) -> list[tuple[int, str]]:
    """(offset, text) of each module in a chunk of HLO text: chunks separated by
    '// -----' lines, and within a chunk one module per 'HloModule' header."""
    pieces = []
    start = 0
    for m in list(_SPLIT.finditer(text)) + [None]:
        end = m.start() if m else len(text)
        chunk = text[start:end]
        headers = [h.start() for h in _HEADER.finditer(chunk)]
        if not headers:
            if _ENTRY.search(chunk):
                pieces.append((start, chunk))
        else:
            bounds = headers + [len(chunk)]
            lead = chunk[:headers[0]]
            if _ENTRY.search(lead):  # a headerless module before the first header
                pieces.append((start, lead))
            for a, b in zip(bounds, bounds[1:]):
                pieces.append((start + a, chunk[a:b]))
        start = m.end() if m else len(text)
    return [(o, t) for o, t in pieces if "{" in t and "=" in t]


def _is_template(text: str) -> bool:
    return bool(_TEMPLATE.search(text))


def _clean(text: str) -> str:
    """The module as a file: trailing spaces of the literal kept, one final newline."""
    text = text.strip("\n")
    return text + "\n"


def extract_text(path: str, text: str) -> list[Found]:
    """Every module in one file's text (path only picks the reader)."""
    suffix = Path(path).suffix.lower()
    if suffix not in LANGUAGES:  # a dump, or a file that is only HLO text
        out = []
        for offset, module in split_modules(text):  # a file is never a template
            out.append(Found(text.count("\n", 0, offset) + 1, "dump", _clean(module)))
        return out
    reader = LANGUAGES.get(suffix)
    if reader is None:
        return []
    out = []
    for offset, literal in reader(text):
        if not _looks_like_hlo(literal) or _is_template(literal):
            continue
        for sub, module in split_modules(literal):
            line = text.count("\n", 0, offset) + 1 + literal.count("\n", 0, sub)
            out.append(Found(line, "test-string", _clean(module)))
    return out


# --- building the corpus from snapshots ---------------------------------------------------

@dataclass
class Source:
    repo: str
    slug: str
    licence: str
    include: list[str]
    exclude: list[str]
    limit: int
    note: str


def read_sources(path: Path) -> list[Source]:
    with open(path, encoding="utf-8") as f:
        rows = [r for r in csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t")]
    return [Source(r["repo"], r["slug"], r["licence"], r["include"].split(),
                   r["exclude"].split() if r["exclude"] != "-" else [], int(r["limit"]), r["note"])
            for r in rows]


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True,
                          capture_output=True).stdout


def _matches(path: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(path, p) for p in patterns)


def _spread(items: list, limit: int) -> list:
    """At most limit items, evenly spread over the list (keeps variety across files)."""
    if limit <= 0 or len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(k * step)] for k in range(limit)]


def build(args: argparse.Namespace) -> None:
    sources = read_sources(Path(args.sources))
    out = Path(args.out)
    rows = []
    seen: dict[str, str] = {}
    for source in sources:
        if args.only and source.slug not in args.only:
            continue
        git_dir = Path(args.mirror) / source.repo.replace("/", "+") / "repo"
        if not git_dir.exists():
            print(f"{source.repo}: no snapshot at {git_dir}; fetch it first", file=sys.stderr)
            continue
        commit = _git(git_dir, "rev-parse", "HEAD").decode().strip()
        listing = _git(git_dir, "ls-tree", "-r", "-l", "HEAD").decode("utf-8", "replace")
        files = []
        for line in listing.splitlines():
            meta, path = line.split("\t", 1)
            size = meta.split()[3]
            if size == "-" or not _matches(path, source.include) or _matches(path, source.exclude):
                continue
            files.append((path, meta.split()[2]))
        candidates = []
        for path, blob in sorted(files):
            try:
                data = _git(git_dir, "cat-file", "blob", blob)
            except subprocess.CalledProcessError:  # absent from the snapshot (large file)
                continue
            text = data.decode("utf-8", "replace")
            for found in extract_text(path, text):
                candidates.append((path, found))
        kept = []
        for path, found in candidates:
            data = found.text.encode("utf-8")
            digest = hashlib.sha256(data).hexdigest()
            if len(data) > MAX_BYTES or digest in seen:
                continue
            seen[digest] = f"{source.repo}:{path}"
            kept.append((path, found, digest, len(data)))
        kept = _spread(kept, source.limit)
        directory = out / "modules" / source.slug
        directory.mkdir(parents=True, exist_ok=True)
        for old in directory.glob("*.hlo"):
            old.unlink()
        for n, (path, found, digest, size) in enumerate(kept):
            name = f"{source.slug}/{n:04d}.hlo"
            (out / "modules" / name).write_text(found.text, encoding="utf-8")
            rows.append([name, source.repo, f"{path}:{found.line}", commit, source.licence,
                         digest, str(size), found.kind])
        print(f"{source.repo}: {len(candidates)} found, {len(kept)} kept", file=sys.stderr)
    if args.only:  # keep the other sources' rows
        old_rows = list(csv.reader(open(args.manifest, encoding="utf-8"), delimiter="\t"))[1:]
        rows = [r for r in old_rows if r[0].split("/")[0] not in args.only] + rows
        rows.sort(key=lambda r: r[0])
    with open(args.manifest, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["file", "repository", "path", "commit", "licence", "sha256", "bytes", "kind"])
        w.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("file", help="print the modules found in local files")
    one.add_argument("paths", nargs="+")
    many = sub.add_parser("build", help="extract every listed repository's modules")
    many.add_argument("--sources", default=str(HERE / "sources.tsv"))
    many.add_argument("--mirror", default="/work/.mirror")
    many.add_argument("--out", default="/work/external-hlo")
    many.add_argument("--manifest", default=str(HERE / "MANIFEST.tsv"))
    many.add_argument("--only", nargs="*", help="slugs to redo (the manifest keeps the others)")
    args = parser.parse_args()
    if args.command == "file":
        for path in args.paths:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
            for found in extract_text(path, text):
                print(json.dumps({"path": path, "line": found.line, "kind": found.kind,
                                  "text": found.text}))
    else:
        build(args)


if __name__ == "__main__":
    main()
