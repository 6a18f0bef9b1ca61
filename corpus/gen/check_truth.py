"""Check every corpus/<case>/truth.json against the dump files of its case.

    python corpus/gen/check_truth.py [CASE ...]

Textual checks only (stdlib; does not import hlodiff).  For each case:

* run_a/ and run_b/ exist and hold HLO *.txt files;
* the main module file -- the largest ``*before_optimizations.txt`` whose file
  name contains ``main_program`` -- exists in both runs; its after-optimization
  partner is the ``*after_optimizations.txt`` file with the same prefix;
* for every cause, in the stage(s) it names (before / after / both):
  - ``old`` occurs in run_a's main module text and ``new`` in run_b's (for
    kind constant: as ``constant(<v>)`` or as an element inside a literal
    ``constant({...})``; for constant_to_parameter / parameter_to_constant the
    constant side is checked that way and the parameter side as plain text);
  - the ``op_name`` fragment occurs in some ``op_name="..."`` of that text;
  - ``source_line``: some instruction whose op_name contains the fragment
    carries ``source_line=<n>`` or a ``stack_frame_id`` whose frame chain
    (StackFrames -> FileLocations; printed parent_frame_id is the parent id
    plus one, 1 = none) includes ``line=<n>`` (if op_name is null: anywhere);
  - ``source_file`` occurs as ``source_file="..."`` or in FileNames;
* kind ``environment`` (the framework or library version changed between the
  runs, not the program): ``old`` and ``new`` must differ and each occur in
  the truth's ``framework_version`` text, or be a line of the run's
  .debug_options (an XLA flag), or a device count the main module's header
  gives (``2 devices (num_partitions=2)``); op_name/source are not checked;
* dumps with no ``*before_optimizations.txt`` at all (after-optimizations
  only): the main module is the largest ``*after_optimizations.txt`` whose
  name contains ``main_program``; causes must then name stage
  after_optimizations, and the normalised comparison below uses that text;
* controls (same_executable true): the main module texts (before
  optimizations) are equal after dropping metadata={...}, the FileNames /
  FunctionNames / FileLocations / StackFrames tables, the HloModule name and
  renaming every %identifier by order of first appearance.  Caused cases
  must NOT be equal under the same normalisation, unless every cause is an
  elided_constant (the differing values are hidden behind ``{...}``).
* same_executable is true, false or null (null: the dumps cannot decide,
  e.g. an elided constant on both sides of an otherwise equal pair; every
  cause of a null case must be an elided_constant);
* a case that lists no elided_constant cause must not contain an elided
  literal ``constant({...})`` in its main module (either stage): such a
  constant would make the pair undecidable from the HLO text.

Single-run cases (``"kind": "single_run"``: one dump ``run/`` in which the
main program was compiled several times, and the run's log ``run.log``) list
``recompilations`` instead of causes: each names a ``module`` and the module
it is compared ``against`` (file prefixes ``module_NNNN.<program>``; both
must exist, hold main_program in their name and have a before- and an
after-optimizations file), and one ``cause`` checked as above with
``against`` in the role of run_a and ``module`` in the role of run_b.  The
dump must hold exactly len(recompilations) + 1 modules of main_program, and
run.log must exist.

Prints ``ok CASE`` or ``FAIL CASE: why`` per case and ``N passed, M failed``;
exits 1 if anything failed.
"""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)
SKIP = {"gen", "xla-conformance"}
KINDS = {"constant", "shape", "dtype", "opcode", "op_added", "op_removed", "op_moved", "attribute",
         "parameter", "constant_to_parameter", "parameter_to_constant", "metadata",
         "elided_constant", "module_added", "module_removed", "environment"}


class Fail(Exception):
    pass


def read(p):
    with open(p, encoding="utf-8", errors="replace") as f:
        return f.read()


def main_files(run_dir, main_program):
    """(before, after) of the main module; before is None in a dump that holds
    after-optimizations files only (no *before_optimizations.txt at all)."""
    if not glob.glob(os.path.join(run_dir, "*before_optimizations.txt")):
        afters = [p for p in glob.glob(os.path.join(run_dir, "*after_optimizations.txt"))
                  if main_program in os.path.basename(p)]
        if not afters:
            raise Fail("%s: no *after_optimizations.txt containing %r (and no "
                       "before_optimizations files)" % (os.path.basename(run_dir), main_program))
        return None, max(afters, key=os.path.getsize)
    cands = [p for p in glob.glob(os.path.join(run_dir, "*before_optimizations.txt"))
             if main_program in os.path.basename(p)]
    if not cands:
        raise Fail("%s: no *before_optimizations.txt containing %r"
                   % (os.path.basename(run_dir), main_program))
    before = max(cands, key=os.path.getsize)
    prefix = before[: -len("before_optimizations.txt")]
    afters = [p for p in glob.glob(prefix + "*after_optimizations.txt")
              if not p.endswith("before_optimizations.txt")]
    after = max(afters, key=os.path.getsize) if afters else None
    return before, after


# --- metadata / stack frames ------------------------------------------------
META_RE = re.compile(r'metadata=\{((?:[^{}"]|"(?:[^"\\]|\\.)*")*)\}')


def frame_tables(text):
    files, locs, frames = {}, {}, {}
    section = None
    for line in text.splitlines():
        s = line.strip()
        if s in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            section = s
            continue
        if not s or s.startswith(("HloModule", "ENTRY", "%")):
            if s.startswith(("ENTRY", "%")):
                section = None
            continue
        m = re.match(r"(\d+)\s+(.*)", s)
        if not m or section is None:
            continue
        i, rest = int(m.group(1)), m.group(2)
        if section == "FileNames":
            files[i] = rest.strip('"')
        elif section == "FileLocations":
            fm = re.search(r"file_name_id=(\d+)", rest)
            lm = re.search(r"\bline=(\d+)", rest)
            locs[i] = (int(fm.group(1)) if fm else 0, int(lm.group(1)) if lm else None)
        elif section == "StackFrames":
            lm = re.search(r"file_location_id=(\d+)", rest)
            pm = re.search(r"parent_frame_id=(\d+)", rest)
            frames[i] = (int(lm.group(1)) if lm else 0, int(pm.group(1)) if pm else 0)
    return files, locs, frames


def frame_chain(fid, frames):
    seen = []
    while fid in frames and fid not in seen:
        seen.append(fid)
        parent = frames[fid][1] - 1  # printed parent id is the parent's id + 1
        fid = parent
    return seen


def source_info(text, op_name):
    """(lines, files) recorded for instructions whose op_name contains op_name."""
    files, locs, frames = frame_tables(text)
    lines, fnames = set(), set()
    for m in META_RE.finditer(text):
        meta = m.group(1)
        om = re.search(r'op_name="((?:[^"\\]|\\.)*)"', meta)
        if op_name is not None and not (om and op_name in om.group(1)):
            continue
        sl = re.search(r"source_line=(\d+)", meta)
        if sl:
            lines.add(int(sl.group(1)))
        sf = re.search(r'source_file="((?:[^"\\]|\\.)*)"', meta)
        if sf:
            fnames.add(sf.group(1))
        fm = re.search(r"stack_frame_id=(\d+)", meta)
        if fm:
            for fid in frame_chain(int(fm.group(1)), frames):
                loc = locs.get(frames[fid][0])
                if loc:
                    if loc[1] is not None:
                        lines.add(loc[1])
                    if loc[0] in files:
                        fnames.add(files[loc[0]])
    return lines, fnames


# --- value checks -----------------------------------------------------------
def has_constant(text, v):
    if "constant(%s)" % v in text:
        return True
    for lit in re.findall(r"constant\((\{.*?\})\)", text):
        elems = [e.strip() for e in re.split(r"[{},]", lit) if e.strip()]
        if v in elems or v in lit:
            return True
    return False


def value_ok(kind, text, v, side):
    if kind in ("constant", "elided_constant"):
        return has_constant(text, v)
    if kind == "constant_to_parameter":
        return has_constant(text, v) if side == "old" else v in text
    if kind == "parameter_to_constant":
        return has_constant(text, v) if side == "new" else v in text
    return v in text


# --- normalisation for controls ---------------------------------------------
def normalise(text):
    out = []
    skipping = False
    for line in text.splitlines():
        s = line.strip()
        if s in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            skipping = True
            continue
        if skipping:
            if s == "" or re.match(r"\d+\s", s):
                continue
            skipping = False
        if s.startswith("HloModule "):
            line = re.sub(r"^HloModule [^,\s]+", "HloModule _", s)
        out.append(line)
    text = "\n".join(out)
    text = re.sub(r",\s*metadata=" + META_RE.pattern[len("metadata="):], "", text)
    names = {}

    def ren(m):
        return "%%v%d" % names.setdefault(m.group(1), len(names))
    text = re.sub(r"%([A-Za-z0-9_.\-]+)", ren, text)
    return "\n".join(l.rstrip() for l in text.splitlines() if l.strip())


def devices_ok(value, text):
    """``2 devices (num_partitions=2)`` or ``1 device``: the count is the
    product of the header's replica_count and num_partitions (1 when unprinted),
    and every ``key=value`` named is in the header."""
    m = re.fullmatch(r"(\d+) devices?(?: \((.*)\))?", value)
    if not m:
        return False
    header = text.split("\n", 1)[0]
    found = dict(re.findall(r"\b(replica_count|num_partitions)=(\d+)", header))
    count = 1
    for v in found.values():
        count *= int(v)
    named = dict(kv.split("=", 1) for kv in m.group(2).split(", ")) if m.group(2) else {}
    return count == int(m.group(1)) and named == found


def check_causes(causes, text_a, text_b, truth):
    """Check causes: text_a/text_b map "before"/"after" to the two main texts."""
    for i, c in enumerate(causes):
        kind = c.get("kind")
        if kind not in KINDS:
            raise Fail("cause %d: unknown kind %r" % (i, kind))
        stage = c.get("stage", "before_optimizations")
        stages = {"before_optimizations": ["before"], "after_optimizations": ["after"],
                  "both": ["before", "after"]}.get(stage)
        if stages is None:
            raise Fail("cause %d: bad stage %r" % (i, stage))
        if kind == "environment":
            if not (c.get("old") and c.get("new") and c["old"] != c["new"]):
                raise Fail("cause %d (environment): needs differing old and new" % i)
            for side, text in (("old", text_a), ("new", text_b)):
                # a version names itself in framework_version; an XLA flag is a
                # line of the run's .debug_options ("(default)": no line); a
                # device count is what the main module's header says
                flag = c[side] == "(default)" or c[side] in text["debug_options"]
                if devices_ok(c[side], text["before"] or text["after"]):
                    continue
                if c[side] not in truth.get("framework_version", "") and not flag:
                    raise Fail("cause %d (environment): %s %r neither in framework_version "
                               "nor in the run's .debug_options" % (i, side, c[side]))
            continue
        for st in stages:
            if st == "before" and text_a["before"] is None:
                raise Fail("cause %d: stage %s, but the dump has no before_optimizations "
                           "files" % (i, stage))
            ta, tb = text_a[st], text_b[st]
            if c.get("old") is not None and not value_ok(kind, ta, c["old"], "old"):
                raise Fail("cause %d (%s): old %r not in run_a %s" % (i, kind, c["old"], st))
            if c.get("new") is not None and not value_ok(kind, tb, c["new"], "new"):
                raise Fail("cause %d (%s): new %r not in run_b %s" % (i, kind, c["new"], st))
            opn = c.get("op_name")
            if opn is not None:
                pat = re.compile(r'op_name="[^"]*' + re.escape(opn))
                if not (pat.search(ta) or pat.search(tb)):
                    raise Fail("cause %d: op_name fragment %r not in %s" % (i, opn, st))
            if c.get("source_line") is not None or c.get("source_file") is not None:
                la, fa = source_info(ta, opn)
                lb, fb = source_info(tb, opn)
                if c.get("source_line") is not None and c["source_line"] not in (la | lb):
                    raise Fail("cause %d: source_line %s not recorded for op_name %r (%s; saw %s)"
                               % (i, c["source_line"], opn, st, sorted(la | lb)[:12]))
                if c.get("source_file") is not None and c["source_file"] not in (fa | fb):
                    raise Fail("cause %d: source_file %r not recorded (%s; saw %s)"
                               % (i, c["source_file"], st, sorted(fa | fb)))


def main_texts(before, after):
    """{"before", "after", "debug_options"} texts of a main module (before None
    in an after-optimizations-only dump)."""
    stem = re.sub(r"\.(?:[a-z]+_)?(?:before|after)_optimizations\.txt$", "",
                  before or after)
    options = stem + ".debug_options"
    return {"before": read(before) if before else None,
            "after": read(after) if after else "",
            "debug_options": read(options) if os.path.exists(options) else ""}


def xla_flags(debug_options):
    """The non-default XLA options of a .debug_options file, dump settings aside."""
    return {line for line in debug_options.splitlines() if not line.startswith("xla_dump_")}


def module_files(run_dir, prefix):
    """(before, after) files of the module whose file names start with prefix."""
    before = os.path.join(run_dir, prefix + ".before_optimizations.txt")
    afters = [p for p in glob.glob(os.path.join(run_dir, prefix + ".*after_optimizations.txt"))]
    if not os.path.isfile(before) or not afters:
        raise Fail("module %s: no before- and after-optimizations files" % prefix)
    return before, max(afters, key=os.path.getsize)


def check_single_run(case_dir, truth):
    for key in ("framework", "framework_version", "description", "main_program",
                "recompilations", "notes"):
        if key not in truth:
            raise Fail("truth.json lacks %r" % key)
    d = os.path.join(case_dir, "run")
    if not os.path.isdir(d):
        raise Fail("run/ missing")
    if not os.path.isfile(os.path.join(case_dir, "run.log")):
        raise Fail("run.log missing")
    prog = truth["main_program"]
    mains = sorted({re.sub(r"\.(?:[a-z]+_)?(?:before|after)_optimizations\.txt$", "", f)
                    for f in os.listdir(d)
                    if f.endswith("before_optimizations.txt")
                    and re.search(r"\." + re.escape(prog) + r"[._]", f)})
    recs = truth["recompilations"]
    if not recs:
        raise Fail("no recompilations listed")
    if len(mains) != len(recs) + 1:
        raise Fail("dump holds %d modules of %s, truth lists %d recompilations"
                   % (len(mains), prog, len(recs)))
    for i, rec in enumerate(recs):
        for side in ("module", "against"):
            if "." + prog not in rec.get(side, ""):
                raise Fail("recompilation %d: %s %r is not a %s module"
                           % (i, side, rec.get(side), prog))
        if rec["module"] == rec["against"]:
            raise Fail("recompilation %d: module compared against itself" % i)
        ta = main_texts(*module_files(d, rec["against"]))
        tb = main_texts(*module_files(d, rec["module"]))
        try:
            check_causes([rec["cause"]], ta, tb, truth)
        except Fail as e:
            raise Fail("recompilation %d (%s vs %s): %s" % (i, rec["module"], rec["against"], e))
        if normalise(ta["before"]) == normalise(tb["before"]):
            raise Fail("recompilation %d: %s and %s are equal after normalisation"
                       % (i, rec["module"], rec["against"]))
    if sorted(r["module"] for r in recs) != mains[1:]:
        raise Fail("recompilations name %s, the dump's later %s modules are %s"
                   % (sorted(r["module"] for r in recs), prog, mains[1:]))


HASHES = ("xla_executable_fingerprint", "jax_cache_key")


def check_observed(obs, main_program):
    """Shape of the optional "observed" key (written by observe_hashes.py):
    {"how": str, "programs": {NAME[#k]: {"run_a": H|null, "run_b": H|null}},
     "main_program_changed": {hash: bool}} with H = {hash: str}; the
    fingerprint is decimal digits ("" for a program without parameters), the
    key is NAME-<64 hex>; main_program_changed agrees with programs."""
    if not isinstance(obs, dict) or set(obs) != {"how", "programs", "main_program_changed"}:
        raise Fail("observed must have exactly how, programs, main_program_changed")
    if not isinstance(obs["how"], str) or not obs["how"]:
        raise Fail("observed.how must be a non-empty string")
    progs = obs["programs"]
    if not isinstance(progs, dict) or not progs:
        raise Fail("observed.programs must be a non-empty object")
    for label, runs in progs.items():
        name = label.split("#")[0]
        if not isinstance(runs, dict) or not set(runs) <= {"run_a", "run_b"} or not runs:
            raise Fail("observed.programs[%r] must have run_a and/or run_b" % label)
        runs = {"run_a": runs.get("run_a"), "run_b": runs.get("run_b")}
        if runs["run_a"] is None and runs["run_b"] is None:
            raise Fail("observed.programs[%r] seen in neither run" % label)
        for r, h in runs.items():
            for h in (h if isinstance(h, list) else [h]):
                check_observed_value(label, name, r, h)
    main = progs.get(main_program)
    if main is None or main["run_a"] is None or main["run_b"] is None:
        raise Fail("observed.programs lacks the main program %r in both runs" % main_program)
    changed = obs["main_program_changed"]
    if not isinstance(changed, dict) or set(changed) != set(HASHES):
        raise Fail("observed.main_program_changed must have %s" % (HASHES,))
    for hname in HASHES:
        first = [(run[0] if isinstance(run, list) else run)[hname]
                 for run in (main["run_a"], main["run_b"])]
        want = first[0] != first[1]
        if changed[hname] is not want and None not in first:
            raise Fail("observed.main_program_changed.%s is %r but the runs' values say %r"
                       % (hname, changed[hname], want))


def check_observed_value(label, name, r, h):
    """One compilation's observed hashes: {hash: value} (and its dump "module")."""
    if h is None:
        return
    if not isinstance(h, dict) or set(h) - {"module", "jax_cache_key_components"} != set(HASHES):
        raise Fail("observed.programs[%r].%s must have %s" % (label, r, HASHES))
    fp, key = h["xla_executable_fingerprint"], h["jax_cache_key"]
    if fp is not None and (not isinstance(fp, str) or not re.fullmatch(r"\d*", fp)):
        raise Fail("observed.programs[%r].%s: fingerprint %r is not decimal" % (label, r, fp))
    if not isinstance(key, str) or not re.fullmatch(re.escape(name) + r"-[0-9a-f]{64}(-cache)?", key):
        raise Fail("observed.programs[%r].%s: key %r is not %s-<sha256 hex>" % (label, r, key, name))


def check_case(case_dir):
    truth = json.load(open(os.path.join(case_dir, "truth.json")))
    name = os.path.basename(case_dir)
    if truth.get("case") != name:
        raise Fail("truth case %r != directory %r" % (truth.get("case"), name))
    if truth.get("kind") == "single_run":
        return check_single_run(case_dir, truth)
    for key in ("framework", "framework_version", "description", "same_executable",
                "main_program", "causes", "notes"):
        if key not in truth:
            raise Fail("truth.json lacks %r" % key)
    if "observed" in truth and truth["framework"] == "jax":
        check_observed(truth["observed"], truth["main_program"])
    texts = {}
    for r in ("run_a", "run_b"):
        d = os.path.join(case_dir, r)
        if not os.path.isdir(d):
            raise Fail("%s missing" % r)
        if not glob.glob(os.path.join(d, "*.txt")):
            raise Fail("%s has no .txt files" % r)
        before, after = main_files(d, truth["main_program"])
        texts[r] = main_texts(before, after)

    check_causes(truth["causes"], texts["run_a"], texts["run_b"], truth)

    if not any(c.get("kind") == "elided_constant" for c in truth["causes"]):
        for r in ("run_a", "run_b"):
            for st in ("before", "after"):
                if "constant({...})" in (texts[r][st] or ""):
                    raise Fail("%s %s main module has an elided constant({...}) but no "
                               "elided_constant cause is listed" % (r, st))

    se = truth["same_executable"]
    if se not in (True, False, None):
        raise Fail("same_executable must be true, false or null, not %r" % (se,))
    # "recompiles, but the same executable": the optimized programs are equal
    same_after = truth.get("same_after_optimizations") is True
    stage = "before" if texts["run_a"]["before"] is not None and not same_after else "after"
    na = normalise(texts["run_a"][stage])
    nb = normalise(texts["run_b"][stage])
    if se is None and not (truth["causes"] and all(
            c.get("kind") == "elided_constant" for c in truth["causes"])):
        raise Fail("same_executable null (undecidable) needs elided_constant causes only")
    if se:
        bad = [c for c in truth["causes"] if c.get("kind") != "metadata"]
        if bad and not same_after:
            raise Fail("control lists non-metadata causes")
        if na != nb:
            la, lb = na.splitlines(), nb.splitlines()
            for k, (x, y) in enumerate(zip(la, lb)):
                if x != y:
                    raise Fail("control differs beyond metadata/names at line %d: %r vs %r"
                               % (k, x[:100], y[:100]))
            raise Fail("control differs in length: %d vs %d lines" % (len(la), len(lb)))
    else:
        if not truth["causes"]:
            raise Fail("no causes listed for a differing case")
        only_elided = all(c.get("kind") == "elided_constant" for c in truth["causes"])
        # XLA flags change the executable, not the HLO: the .debug_options
        # sidecars must differ instead
        flags_differ = xla_flags(texts["run_a"]["debug_options"]) != \
            xla_flags(texts["run_b"]["debug_options"])
        if na == nb and not only_elided and not flags_differ:
            raise Fail("main modules equal after normalisation, yet same_executable is false")


def main(argv):
    cases = argv or sorted(
        d for d in os.listdir(CORPUS)
        if d not in SKIP and os.path.isfile(os.path.join(CORPUS, d, "truth.json")))
    passed = failed = 0
    for name in cases:
        try:
            check_case(os.path.join(CORPUS, name))
        except Fail as e:
            print("FAIL %s: %s" % (name, e))
            failed += 1
        except Exception as e:  # a broken truth file is a failure too
            print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
            failed += 1
        else:
            print("ok %s" % name)
            passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
