"""hlodiff's hash verdicts against what the frameworks really printed and keyed.

Every two-run corpus case made by a framework carries, in its truth.json
under ``observed``, what each run printed or wrote to its persistent cache
for the main program (JAX 0.10.2: the executable fingerprint log line and the
cache file name; TensorFlow 2.21: the compile signature and the persistent
cache file; torch-xla 2.9: the graph and computation hashes). For each hash
hlodiff models, its verdict on the main program must be what was observed:
changed exactly when the two runs printed different values. It may say
"cannot tell" only where the truth says the dumps cannot decide (a constant
printed as {...} in both runs, nothing else showing its values), and for
TensorFlow's compile signature where an integer constant changed: it may be
an argument TF needs as a shape, whose value the signature holds
(corpus/tf_shape_argument), or a captured Python int, whose value it does not;
and torch-xla's computation hash, which is moved by the Python call stack its
proto holds and no dump prints, wherever nothing else moved it.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import CORPUS, run_cli
from dump_trees import corpus_cases
from hlodiff.analysis.compare import compare
from hlodiff.analysis.hashes import HASHES, applicable
from test_corpus_diff import main_program

# What the truth files record under another name: the parts of a key, or the
# same value written twice (torch-xla's cache file is named by the graph hash).
SAME_AS = {"signature_fingerprint": "tf_compile_signature",
           "torch_xla_persistent_cache_key": "torch_xla_graph_hash"}
PART_OF = {"hlo_proto_fingerprint": "tf_persistent_cache_key"}
FRAMEWORKS = {"jax": "jax", "tensorflow": "tensorflow", "torch_xla": "pytorch"}


def _observed_cases() -> list[str]:
    out = []
    for case in corpus_cases(CORPUS, with_truth=True):
        truth = json.loads((case / "truth.json").read_text())
        if truth.get("kind") != "single_run" and "observed" in truth:
            out.append(case.name)
    return out


CASES = _observed_cases()


def _truth(case: str) -> dict:
    return json.loads((CORPUS / case / "truth.json").read_text())


@pytest.fixture(scope="module")
def reports():
    return {}


def _verdict(reports, case):
    if case not in reports:
        reports[case] = compare(CORPUS / case / "run_a", CORPUS / case / "run_b")
    return main_program(reports[case], _truth(case))


def test_every_framework_has_observed_cases():
    frameworks = {_truth(case)["framework"] for case in CASES}
    assert frameworks == {"jax", "tensorflow", "torch_xla"}
    assert len(CASES) >= 45


@pytest.mark.parametrize("case", CASES)
def test_each_hash_changes_exactly_when_the_runs_printed_different_values(case, reports):
    truth = _truth(case)
    observed = {name: changed for name, changed in truth["observed"]["main_program_changed"].items()
                if changed is not None and name not in PART_OF}
    verdict = _verdict(reports, case)
    checked = 0
    for name, changed in observed.items():
        name = SAME_AS.get(name, name)
        assert name in verdict.hashes, f"{name} was observed but hlodiff does not model it"
        said = verdict.hashes[name]
        if said is None:
            assert truth["same_executable"] is None or (
                name == "tf_compile_signature" and _integer_constant_changed(reports[case])
            ) or name == "torch_xla_computation_hash", (name, verdict.reason)
        else:
            assert said is changed, (name, verdict.hashes, verdict.reason)
            checked += 1
    assert checked, "no observed hash was compared"


JAX_SIDE_PROGRAMS = [case for case in CASES if _truth(case)["framework"] == "jax"
                     and len(_truth(case)["observed"].get("programs", {})) > 1]


@pytest.mark.parametrize("case", JAX_SIDE_PROGRAMS)
def test_no_program_is_told_to_keep_a_jax_key_that_moved(case, reports):
    """Every program JAX keyed in both runs, not only the main one: a verdict
    on its key is what was observed, or "cannot tell". jax_remat_added's
    jit_init_fn (optax's init of parameters nn.remat renamed) had the same HLO
    text in both runs and another key, its results' names being in the
    StableHLO the pruned dump dropped: hlodiff said "unchanged"."""
    _verdict(reports, case)
    observed = _truth(case)["observed"]["programs"]
    checked = 0
    for verdict in reports[case].programs:
        seen = observed.get(verdict.program)
        if not isinstance(seen, dict) or not all(isinstance(seen.get(run), dict)
                                                 for run in ("run_a", "run_b")):
            continue  # namesakes, or a program one run alone keyed
        keys = [seen[run].get("jax_cache_key") for run in ("run_a", "run_b")]
        said = verdict.hashes.get("jax_cache_key")
        if None in keys or said is None:
            continue
        assert said is (keys[0] != keys[1]), (verdict.program, verdict.reason)
        checked += 1
    assert checked


def _optimized_only(tmp_path, case: str) -> list[str]:
    """``case``'s two runs without their before_optimizations files: a dump of
    the optimized programs alone (jax_flax_after_only_init_largest is one as
    made; no xla_dump_* option of jaxlib 0.10 skips that stage, a user's copy
    of the dump may)."""
    runs = []
    for run in ("run_a", "run_b"):
        shutil.copytree(CORPUS / case / run, tmp_path / run)
        for stage in (tmp_path / run).glob("*.before_optimizations.txt"):
            stage.unlink()
        runs.append(str(tmp_path / run))
    return runs


@pytest.mark.parametrize("case", ["jax_flax_after_only_init_largest", "jax_remat_added",
                                  "jax_xla_flag"])
def test_a_dump_of_optimized_programs_tells_jax_key_from_their_module_mlir(tmp_path, case):
    """JAX keys a program on its StableHLO (module.mlir, debug information
    aside), the compile options and the XLA flags, not on the HLO. Without the
    compile input hlodiff said "compared 2 more programs that may differ" of
    flax's and optax's inits JAX keyed alike (jax_flax_after_only_init_largest),
    and the same of optax's init whose key moved with its results' names while
    its optimized HLO did not (jax_remat_added); an XLA flag still moves every
    key (jax_xla_flag)."""
    runs = _optimized_only(tmp_path, case)
    report = json.loads(run_cli("diff", *runs, "--format", "json", "--no-cache",
                                expect=1).stdout)
    observed = _truth(case)["observed"]["programs"]
    for program in report["programs"]:
        keys = [observed[program["program"]][run]["jax_cache_key"] for run in ("run_a", "run_b")]
        assert program["hashes"]["jax_cache_key"] is (keys[0] != keys[1]), program
        assert program["recompiles"] is (keys[0] != keys[1]), program
    assert len(report["programs"]) == len(observed)
    assert "programs that may differ" not in run_cli("diff", *runs, "--no-cache", expect=1).stdout


def _integer_constant_changed(report) -> bool:
    return any(f.kind == "constant" and (f.element_type or "")[:1] in "su"
               for top in report.findings for f in (top, *top.derived))


def test_a_tensor_argument_used_as_a_shape_leaves_the_tf_signature_undecided(reports):
    # The signature holds the value of an argument TF needs when compiling:
    # it moved, and hlodiff said "TF compile signature: unchanged" (a helper
    # session's tf.zeros(tf.stack([n, 3])) with n = 3 and 4).
    verdict = _verdict(reports, "tf_shape_argument")
    assert verdict.hashes["tf_compile_signature"] is None
    assert verdict.hashes["tf_persistent_cache_key"] is True
    top = reports["tf_shape_argument"].findings[0]
    assert (top.kind, top.old, top.new) == ("constant", "3", "4")


def _arguments(signature: str) -> str:
    """A TF compile signature without the function's name and trace counter."""
    return signature.split("]", 1)[1]


TF_SAME_ARGUMENTS = [
    case for case in CASES if _truth(case)["framework"] == "tensorflow" and (
        lambda seen: seen is not None and _arguments(seen["run_a"]["tf_compile_signature"])
        == _arguments(seen["run_b"]["tf_compile_signature"]))(
        _truth(case)["observed"]["programs"].get(_truth(case)["observed"]["main_program"]))]


@pytest.mark.parametrize("case", TF_SAME_ARGUMENTS)
def test_only_the_trace_counter_moves_the_tf_signature_when_the_arguments_are_equal(
        case, reports):
    # TF printed the same argument types in both runs: only the function's
    # name (its trace counter) can move the signature. A dtype change inside
    # tf_dtype and a frozen batch norm claimed it from what differed after
    # optimization, which the signature, over the compile input, never sees.
    _verdict(reports, case)
    claiming = {f.kind for f in reports[case].findings if "tf_compile_signature" in f.affects}
    assert claiming <= {"program_name"}, claiming


@pytest.mark.parametrize("case", CASES)
def test_the_recorded_parts_and_aliases_agree_with_each_other(case):
    """The truth files' own bookkeeping: a name written twice holds one value,
    and a key changes when one of its parts does."""
    observed = _truth(case)["observed"]["main_program_changed"]
    for name, same in SAME_AS.items():
        if name in observed:
            assert observed[name] == observed[same]
    for part, key in PART_OF.items():
        if part in observed and observed[part]:
            assert observed[key] is True


def test_every_rule_a_user_can_observe_here_was_observed():
    """A hash rule claimed as checked against real runs has real runs behind it."""
    seen = {SAME_AS.get(name, name) for case in CASES
            for name in _truth(case)["observed"]["main_program_changed"]}
    for rule in HASHES:
        assert rule.observable_here == (rule.name in seen), rule.name


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_each_framework_gets_the_hashes_its_runs_print(framework, reports):
    """A TF dump is not judged by JAX's key, nor a torch-xla dump by TF's."""
    seen = {SAME_AS.get(name, name) for case in CASES if _truth(case)["framework"] == framework
            for name in _truth(case)["observed"]["main_program_changed"]
            if name not in PART_OF}
    modelled = {rule.name for rule in applicable(FRAMEWORKS[framework]) if rule.observable_here}
    assert modelled == seen
