from conftest import run_cli


def test_missing_file_is_one_line_error_exit_2(tmp_path):
    result = run_cli("constants", str(tmp_path / "nope.txt"), expect=2)
    assert result.stderr.strip().count("\n") == 0
    assert result.stderr.startswith("hlodiff: error: ")
    assert "nope.txt" in result.stderr


def test_a_reader_that_leaves_early_ends_the_command_as_sigpipe_not_as_different():
    import signal
    import subprocess
    import sys

    from conftest import CORPUS
    run = CORPUS / "jax_learning_rate"
    for args in (["ls", str(run / "run_a"), "--explain"],
                 ["diff", str(run / "run_a"), str(run / "run_b"), "--format", "json"]):
        process = subprocess.Popen([sys.executable, "-m", "hlodiff", *args],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        process.stdout.close()  # the reader is gone before anything is written
        error = process.stderr.read().decode()
        assert process.wait() == -signal.SIGPIPE and "Traceback" not in error, error


def test_the_command_ends_with_all_it_wrote_and_its_exit_code(tmp_path):
    # hlodiff/command.py ends the process without tearing Python down: what
    # sits in the output buffers (a file is block-buffered) must be out first.
    import json
    import subprocess
    import sys

    from conftest import CORPUS
    run = CORPUS / "jax_learning_rate"
    for args, code in ((["diff", "--no-cache", str(run / "run_a"), str(run / "run_b")], 1),
                       (["diff", "--no-cache", str(run / "run_a"), str(run / "run_a")], 0)):
        report = tmp_path / "report.json"
        with report.open("w") as out:
            done = subprocess.run([sys.executable, "-m", "hlodiff", *args, "--format", "json"],
                                  stdout=out, stderr=subprocess.PIPE, text=True)
        said = "" if code else f"hlodiff: note: {run / 'run_a'} and {run / 'run_a'} are the " \
                               "same folder: one run against itself\n"
        assert (done.returncode, done.stderr) == (code, said)
        assert json.loads(report.read_text())["same_executable"] is (code == 0)
    missing = subprocess.run([sys.executable, "-m", "hlodiff", "diff", str(tmp_path / "nope"),
                              str(run / "run_b")], capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.startswith("hlodiff: error: ") and missing.stderr.count("\n") == 1
