"""hlodiff under real git: textconv, external diff (7 and 9 arguments), difftool, git-setup.

Each test builds a repository in tmp_path and runs the git binary, so what
is checked is what a user sees in their terminal.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS

HLODIFF = f"{sys.executable} -m hlodiff"
LR = CORPUS / "jax_learning_rate"
MODULE = "module_0006.jit_train_step.before_optimizations.txt"

pytestmark = pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True)
                                .returncode != 0, reason="git is not installed")


def git(repo: Path, *args: str, env: dict | None = None, check: bool = True):
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                          capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})})
    if check:
        assert done.returncode == 0, done.stderr
    return done


def renumbered(text: str) -> str:
    """The same program with every instruction and computation number moved by 1000."""
    return re.sub(r"(%[A-Za-z_][\w\-]*?)\.(\d+)\b", lambda m: f"{m[1]}.{int(m[2]) + 1000}", text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Three commits of model.hlo: lr=0.01, the same renumbered, lr=0.02."""
    git(tmp_path, "init", "-q")
    model = tmp_path / "model.hlo"
    model.write_text((LR / "run_a" / MODULE).read_text())
    git(tmp_path, "add", "model.hlo")
    git(tmp_path, "commit", "-qm", "lr 0.01")
    model.write_text(renumbered(model.read_text()))
    git(tmp_path, "commit", "-qam", "renumbered")
    model.write_text((LR / "run_b" / MODULE).read_text())
    git(tmp_path, "commit", "-qam", "lr 0.02")
    return tmp_path


def test_textconv_hides_renumbering_and_shows_only_the_changed_constants(repo: Path):
    (repo / ".gitattributes").write_text("*.hlo diff=hlo\n")
    git(repo, "config", "diff.hlo.textconv", f"{HLODIFF} canon")
    assert git(repo, "diff", "HEAD~2", "HEAD~1").stdout == ""
    changed = [line for line in git(repo, "diff", "HEAD~1", "HEAD").stdout.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert len(changed) == 8
    assert all(re.fullmatch(r"[-+]  %constant\.\d+ = f32\[\] constant\(0\.0[12]\)", line)
               for line in changed), changed
    # without the driver git shows every renumbered line
    assert len(git(repo, "-c", "diff.hlo.textconv=cat", "diff", "HEAD~2", "HEAD~1")
               .stdout.splitlines()) > 1000


def test_external_diff_reports_with_the_path_and_exits_0_under_git(repo: Path):
    done = git(repo, "-c", f"diff.external={HLODIFF} diff", "diff", "HEAD~2", "HEAD")
    lines = done.stdout.splitlines()
    assert lines[0] == "model.hlo"
    assert lines[1].startswith("Recompiles (jit_train_step), different executables")
    assert "constant" in done.stdout and "0.01 -> 0.02" in done.stdout
    assert "XLA executable fingerprint: changed" in done.stdout


def test_external_diff_with_exit_code_stops_git(repo: Path):
    done = git(repo, "-c", f"diff.external={HLODIFF} diff --exit-code", "diff", "HEAD~2", "HEAD",
               check=False)
    assert done.returncode != 0
    assert "external diff died" in done.stderr


def test_external_diff_renamed_and_added_files(repo: Path):
    git(repo, "mv", "model.hlo", "renamed.hlo")
    (repo / "renamed.hlo").write_text((LR / "run_a" / MODULE).read_text())
    (repo / "extra.hlo").write_text(
        (LR / "run_a" / "module_0000.jit_init_params.before_optimizations.txt").read_text())
    git(repo, "add", "renamed.hlo", "extra.hlo")
    done = git(repo, "-c", f"diff.external={HLODIFF} diff", "diff", "--cached", "-M", "HEAD")
    assert "model.hlo -> renamed.hlo\nRecompiles (jit_train_step), different executables" in done.stdout
    assert "0.02 -> 0.01" in done.stdout
    assert "extra.hlo: added" in done.stdout


def test_difftool_shows_the_report(repo: Path):
    done = git(repo, "difftool", "-y", "-x", f"{HLODIFF} diff", "HEAD~2", "HEAD", "--",
               "model.hlo")
    assert done.stdout.startswith("model.hlo\nRecompiles (jit_train_step), different executables")
    renumber_only = git(repo, "difftool", "-y", "-x", f"{HLODIFF} diff", "HEAD~2", "HEAD~1",
                        "--", "model.hlo")
    assert "Same executable" in renumber_only.stdout


def through_a_terminal(repo: Path, args: list[str], env: dict) -> str:
    """What git writes to a terminal: git only starts its pager on one."""
    import pty
    master, slave = pty.openpty()
    process = subprocess.Popen(["git", *args], cwd=repo, stdout=slave, stderr=subprocess.PIPE,
                               env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        out += chunk
    process.wait()
    os.close(master)
    return out.decode()


def test_colours_follow_gits_pager_and_no_color(repo: Path):
    args = ["-c", f"diff.external={HLODIFF} diff", "-c", "core.pager=cat", "diff", "HEAD~2",
            "HEAD"]
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    piped = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env)
    assert "different executables" in piped.stdout and "\x1b[" not in piped.stdout
    paged = through_a_terminal(repo, args, env)  # git pipes hlodiff into its pager
    assert "\x1b[1;31mRecompiles (jit_train_step)" in paged
    no_color = through_a_terminal(repo, args, {**env, "NO_COLOR": "1"})
    assert "Recompiles (jit_train_step)" in no_color and "\x1b[1;31m" not in no_color


def test_git_setup_prints_and_applies_the_settings(repo: Path):
    printed = subprocess.run([sys.executable, "-m", "hlodiff", "git-setup"], cwd=repo,
                             capture_output=True, text=True)
    assert "*.hlo diff=hlo" in printed.stdout
    assert "git config diff.hlo.textconv 'hlodiff canon --textconv'" in printed.stdout
    said = [subprocess.run([sys.executable, "-m", "hlodiff", "git-setup", "--apply"], cwd=repo,
                           check=True, capture_output=True, text=True).stdout
            for _ in range(2)]  # applying twice adds nothing twice, and says so
    assert "added 3 lines to" in said[0] and "had every line already" in said[1]
    assert (repo / ".gitattributes").read_text().count("*.hlo diff=hlo") == 1
    assert git(repo, "config", "diff.hlo.textconv").stdout.strip() == "hlodiff canon --textconv"
    assert git(repo, "config", "difftool.hlodiff.cmd").stdout.strip() == \
        'BASE="$MERGED" hlodiff diff "$LOCAL" "$REMOTE"'


def test_a_dump_checked_in_whole_diffs_its_other_files_as_git_would(repo: Path):
    # A dump checked in whole holds module.mlir, .debug_options and notes:
    # git's external diff stopped on the first ("external diff died") with
    # "expected '{' to open the computation" (a new user's session).
    for name, text in (("notes.txt", "lr 0.01\n"), ("run.debug_options", 'xla_dump_to: "a"\n')):
        (repo / name).write_text(text)
    git(repo, "add", "notes.txt", "run.debug_options")
    git(repo, "commit", "-qm", "notes")
    (repo / "notes.txt").write_text("lr 0.02\n")
    (repo / "run.debug_options").write_text('xla_dump_to: "b"\n')
    (repo / "weights.bin").write_bytes(b"\0\1\2")
    (repo / "model.hlo").write_text((LR / "run_a" / MODULE).read_text())
    git(repo, "add", "-A")
    done = git(repo, "-c", f"diff.external={HLODIFF} diff", "diff", "--cached", "HEAD")
    assert "Recompiles (jit_train_step), different executables" in done.stdout
    assert "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-lr 0.01\n+lr 0.02\n" in done.stdout
    assert '-xla_dump_to: "a"\n+xla_dump_to: "b"' in done.stdout
    # each with the header git prints itself (diff --git, index, new file
    # mode), which was left out: a new user's session
    for name in ("notes.txt", "run.debug_options", "weights.bin"):
        own = git(repo, "diff", "--no-ext-diff", "--cached", "HEAD", "--", name).stdout
        assert own.startswith(f"diff --git a/{name} b/{name}\n") and own in done.stdout, own


def test_files_that_are_not_hlo_look_as_git_shows_them(repo: Path):
    """Added, deleted, renamed, changed in the working tree, its mode alone
    changed, no newline at its end, binary: byte for byte git's own diff."""
    for name, text in (("notes.txt", "a\nb\n"), ("gone.txt", "x\n"), ("old.txt", "r\ns\nt\nu\n"),
                       ("mode.txt", "m\n"), ("data.bin", "\0\1")):
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "files")
    (repo / "notes.txt").write_text("a\nc")
    (repo / "added.txt").write_text("new\n")
    (repo / "gone.txt").unlink()
    git(repo, "mv", "old.txt", "renamed.txt")
    (repo / "renamed.txt").write_text("r\ns\nt\nv\n")
    (repo / "mode.txt").chmod(0o755)
    (repo / "data.bin").write_text("\0\2")
    git(repo, "add", "added.txt")
    for staged in ((), ("--cached",)):
        own = git(repo, "diff", "-M", *staged, "--", ".", ":!model.hlo").stdout
        through = git(repo, "-c", f"diff.external={HLODIFF} diff", "diff", "-M", *staged,
                      "--", ".", ":!model.hlo").stdout
        assert through == own


def test_difftool_titles_each_report_with_its_path(repo: Path):
    # git-setup's command for `git difftool -t hlodiff`, with this Python's
    # hlodiff first on PATH: the reports were untitled (git exports the path
    # in the repository only to -x commands), an added file named by git's
    # temporary file (a new user's session)
    subprocess.run([sys.executable, "-m", "hlodiff", "git-setup", "--apply"], cwd=repo,
                   check=True, capture_output=True)
    (repo / "extra.hlo").write_text((LR / "run_a" / MODULE).read_text())
    git(repo, "add", "extra.hlo")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = git(repo, "difftool", "-y", "-t", "hlodiff", "--cached", "HEAD~2", env={"PATH": path})
    assert done.stdout.startswith("extra.hlo: added") or "\nextra.hlo: added" in done.stdout
    assert "model.hlo\nRecompiles (jit_train_step), different executables" in done.stdout


def test_a_file_hlodiff_cannot_read_does_not_stop_git(repo: Path):
    # A binary or truncated .hlo beside model.hlo stopped the whole git diff:
    # "external diff died, stopping at bin.hlo", and textconv's "unable to read
    # files to diff" (a helper session's run). Each is said on stderr and shown
    # as git would show it; git goes on to model.hlo.
    text = (LR / "run_a" / MODULE).read_text()
    (repo / "bin.hlo").write_bytes(b"\x00\x01binary\x00")
    (repo / "trunc.hlo").write_text(text[:2000])
    git(repo, "add", "bin.hlo", "trunc.hlo")
    git(repo, "commit", "-qm", "two files hlodiff cannot read")
    (repo / "bin.hlo").write_bytes(b"\x00\x02binary\x00")
    (repo / "trunc.hlo").write_text(text[:2100])
    (repo / "model.hlo").write_text(text)  # lr 0.02 -> 0.01, between bin.hlo and trunc.hlo
    git(repo, "commit", "-qam", "all three changed")
    external = git(repo, "-c", f"diff.external={HLODIFF} diff", "diff", "HEAD~1", "HEAD")
    assert "Binary files a/bin.hlo and b/bin.hlo differ\n" in external.stdout
    assert "bin.hlo: is a binary file" in external.stderr
    assert "+++ b/trunc.hlo" in external.stdout
    assert "Recompiles (jit_train_step), different executables" in external.stdout  # model.hlo
    (repo / ".gitattributes").write_text("*.hlo diff=hlo\n")
    textconv = git(repo, "-c", f"diff.hlo.textconv={HLODIFF} canon --textconv", "diff",
                   "HEAD~1", "HEAD", "--", "trunc.hlo")
    assert "+++ b/trunc.hlo" in textconv.stdout and "never closed" in textconv.stderr


def test_an_added_binary_file_under_an_hlo_name_is_shown_as_git_would(repo: Path):
    # An added binary .hlo read "added: a new program, compiled for the first
    # time" (a new user's run): it is not HLO, whatever its name.
    (repo / "bin.hlo").write_bytes(b"\x00\x01binary\x00")
    git(repo, "add", "bin.hlo")
    git(repo, "commit", "-qm", "a binary file")
    done = git(repo, "-c", f"diff.external={HLODIFF} diff", "diff", "HEAD~1", "HEAD")
    assert "new file mode 100644\nindex 0000000..57ac8df\n" \
        "Binary files /dev/null and b/bin.hlo differ\n" in done.stdout
    assert "a new program" not in done.stdout


def test_textconv_shows_a_binary_or_non_utf8_file_byte_for_byte(tmp_path: Path):
    # Under `hlodiff git-setup`'s textconv a binary .hlo read as text, its
    # bytes that are not UTF-8 each made U+FFFD: a file whose change was one
    # such byte (caf\xe9 -> caf\xe8, latin-1) showed no change at all, and a
    # binary one showed its NULs. Git diffs what a textconv prints (it tells
    # no binary file through one): the bytes as they are, a binary file as a
    # line with its size and digest; a name that is UTF-8 stays so in a
    # locale that cannot spell it.
    git(tmp_path, "init", "-q")
    subprocess.run([sys.executable, "-m", "hlodiff", "git-setup", "--apply"], cwd=tmp_path,
                   check=True, capture_output=True)
    files = {"bin.hlo": (b"\x00\x01binary\xff\x00", b"\x00\x02binary\xff\x00"),
             "latin.hlo": (b"HloModule m\n// caf\xe9\n", b"HloModule m\n// caf\xe8\n"),
             "name.hlo": tuple(b'HloModule m\n\nENTRY %main (p: f32[]) -> f32[] {\n  %p = f32[] '
                               b'parameter(0)\n  ROOT %c = f32[] custom-call(%p), custom_call_'
                               b'target="caf' + e.encode() + b'"\n}\n' for e in ("é", "è"))}
    for n in (0, 1):
        for name, versions in files.items():
            (tmp_path / name).write_bytes(versions[n])
        git(tmp_path, "add", *files)
        git(tmp_path, "commit", "-qm", f"version {n}")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(["git", "diff", "HEAD~1", "HEAD"], cwd=tmp_path, capture_output=True,
                          env={**os.environ, "PATH": path, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    out = done.stdout
    assert b"\x00" not in out
    for sign, data in (b"-", files["bin.hlo"][0]), (b"+", files["bin.hlo"][1]):
        digest = hashlib.sha256(data).hexdigest()[:16].encode()
        assert sign + b"binary file, not HLO text: 10 bytes, sha256 " + digest + b"\n" in out
    assert b"\n-// caf\xe9\n+// caf\xe8\n" in out
    assert 'target="café"\n+'.encode() in out and 'target="cafè"'.encode() in out
    assert b"bin.hlo: is a binary file, not HLO text" in done.stderr
