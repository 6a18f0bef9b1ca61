from conftest import run_cli


def test_missing_file_is_one_line_error_exit_2(tmp_path):
    result = run_cli("constants", str(tmp_path / "nope.txt"), expect=2)
    assert result.stderr.strip().count("\n") == 0
    assert result.stderr.startswith("hlodiff: error: ")
    assert "nope.txt" in result.stderr
