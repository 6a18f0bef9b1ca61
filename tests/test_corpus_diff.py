"""hlodiff diff on every real dump pair in corpus/, judged against its truth.json.

For the main program the truth names: the verdicts must be right (same
executable as the truth says; recompiles exactly when the framework's own
compile-input key moved in the real runs), controls must report nothing
that changes the program, the top finding must be the cause the truth file
names, with its origin (op_name fragment and the user's source line where
the framework records one), and there is one finding per cause: at most
one more hash-moving finding than the truth lists causes.
"""

from __future__ import annotations

import json

import pytest

from dump_trees import corpus_cases
from hlodiff.analysis.compare import compare
from hlodiff.model import GENERIC_PARAMETER_NAMES

from conftest import CORPUS

CASES = [case.name for case in corpus_cases(CORPUS, with_truth=True)
         if json.loads((case / "truth.json").read_text()).get("kind") != "single_run"]

# The keys each framework looks its compiled programs up by, across runs.
COMPILE_INPUT_KEYS = {"jax": ("jax_cache_key",), "tensorflow": ("tf_persistent_cache_key",),
                      "torch_xla": ("torch_xla_graph_hash",)}
# A finding of the truth's kind, or the structural finding that holds it.
KIND_OF = {"op_added": {"op_added", "replaced"}, "op_removed": {"op_removed", "replaced"},
           "parameter": {"parameter", "parameter_order"}, "shape": {"shape", "parameter"}}


def _truth(case: str) -> dict:
    return json.loads((CORPUS / case / "truth.json").read_text())


def _without_layout(text: str) -> str:
    """f32[16,8]{1,0} -> f32[16,8]: truth files write shapes without layouts."""
    out, depth = [], 0
    for char in text:
        if char == "{" and out and out[-1] == "]":
            depth += 1
        if depth == 0:
            out.append(char)
        if char == "}" and depth:
            depth -= 1
    return "".join(out)


@pytest.fixture(scope="module")
def reports():
    return {}


def _report(reports, case):
    if case not in reports:
        reports[case] = compare(CORPUS / case / "run_a", CORPUS / case / "run_b")
    return reports[case]


def main_program(report, truth):
    """The verdict of the program the truth file is about (the main one among namesakes)."""
    named = [v for v in report.programs
             if v.program.split(" (")[0] == truth["main_program"]] or list(report.programs)
    return next((v for v in named if v.main), named[0])


def main_findings(report, truth):
    """The findings of the main program, and those of the whole run (a version, a flag)."""
    verdict = main_program(report, truth)
    return [f for f in report.findings if f.program in (verdict.program, "")]


@pytest.mark.parametrize("case", CASES)
def test_the_main_programs_verdict_matches_the_truth(case, reports):
    truth = _truth(case)
    report = _report(reports, case)
    verdict = main_program(report, truth)
    assert verdict.same_executable is truth["same_executable"], (
        verdict.reason, [(f.kind, f.old, f.new) for f in main_findings(report, truth)[:5]])


@pytest.mark.parametrize("case", [c for c in CASES if "observed" in _truth(c)])
def test_recompiles_exactly_when_the_frameworks_key_moved(case, reports):
    truth = _truth(case)
    observed = truth["observed"]["main_program_changed"]
    keys = [observed[k] for k in COMPILE_INPUT_KEYS[truth["framework"]] if k in observed]
    verdict = main_program(_report(reports, case), truth)
    if truth["same_executable"] is None:  # the dumps cannot decide what the key saw
        assert verdict.recompiles in (None, any(keys))
    else:
        assert verdict.recompiles is any(keys), verdict


def _control(case: str) -> bool:
    """The same program: the same executable, and no cause in the compile input
    (a case where the inputs differ but XLA optimizes both alike has causes)."""
    truth = _truth(case)
    return truth["same_executable"] is True and not truth.get("same_after_optimizations")


@pytest.mark.parametrize("case", [c for c in CASES if _control(c)])
def test_controls_report_nothing_that_changes_the_program(case, reports):
    truth = _truth(case)
    changing = [(f.kind, f.old, f.new) for f in main_findings(_report(reports, case), truth)
                if f.kind not in ("metadata", "program_name", "module_number")]
    assert changing == []


@pytest.mark.parametrize("case", CASES)
def test_one_finding_per_cause(case, reports):
    # controls too: what shifted in a run that built other programs first
    # (trace counters, module numbers) is one finding, not one per program
    truth = _truth(case)
    moving = [(f.kind, f.summary or f"{f.old} -> {f.new}")
              for f in main_findings(_report(reports, case), truth) if f.moves_a_hash]
    assert len(moving) <= len(truth["causes"]) + 1, moving


@pytest.mark.parametrize("case", [c for c in CASES if not _control(c)])
def test_top_finding_is_the_true_cause_with_its_origin(case, reports):
    truth = _truth(case)
    causes = truth["causes"]
    top = main_findings(_report(reports, case), truth)[0]
    matching = [c for c in causes if top.kind in KIND_OF.get(c["kind"], {c["kind"]})]
    assert matching, (top.kind, top.summary, [c["kind"] for c in causes])
    cause = matching[0]
    places = list(top.where) + [w for d in top.derived for w in d.where]
    text = " ".join(filter(None, [top.summary, top.old, top.new, top.detail]
                           + [x for w in places for x in (w.old, w.new)]))
    for side in ("old", "new"):
        theirs = cause.get(side)
        if theirs and cause["kind"] not in ("environment",):
            wanted = _without_layout(theirs).split("(")[0].split(" = ")[-1].strip()
            assert wanted in _without_layout(text), (side, wanted, text[:300])
    # the origin: the finding's own, or that of what it explains (a dtype change
    # made by an astype shows at the convert; the dot it feeds follows from it)
    origins = list(top.origins) + [o for d in top.derived for o in d.origins]
    if cause.get("op_name") in GENERIC_PARAMETER_NAMES:
        # the placeholder every argument carries names none: the origin is
        # where the argument is read, never the placeholder
        assert top.origin.op_name and top.origin.op_name not in GENERIC_PARAMETER_NAMES, top.origin
        for users in cause.get("users_op_name", ()):
            assert any(users in (o.op_name or "") for o in origins) or users in text, origins[:3]
    elif cause.get("op_name"):
        assert any(cause["op_name"] in (o.op_name or "") for o in origins), origins[:3]
    if cause.get("source_line"):
        assert any(o.source_line == cause["source_line"] for o in origins), origins[:3]


def test_a_finding_over_several_inputs_shows_one_inputs_values_with_its_own_origin(reports):
    # jax_batch_size: x, tokens and y all grow with the batch; the values shown
    # are x's (parameter 14), so the op_name shown must be x's, not tokens'
    report = _report(reports, "jax_batch_size")
    top = report.findings[0]
    shown = next(w for w in top.where if (w.old, w.new) == (top.old, top.new))
    assert "parameter(14)" in top.old
    assert top.origin.op_name == shown.a.split(".")[0] == "x"


@pytest.mark.parametrize("case", CASES)
def test_advice_points_at_a_line_only_where_it_shows_one(case, reports):
    # tf_concat_vs_stack and torch_layernorm_added record no user line: the
    # advice must not send the reader to "this line"
    for f in _report(reports, case).findings:
        assert "at this line" not in f.advice or f.origin.location, (f.kind, f.advice)


def test_a_chain_that_collapsed_into_one_op_is_one_replaced_finding(reports):
    # tf_concat_vs_stack: three binary concatenates (collect/concat..concat_2)
    # became one four-operand concatenate (collect/stack)
    top = _report(reports, "tf_concat_vs_stack").findings[0]
    assert top.kind == "replaced"
    assert top.summary.startswith("replaced: 3 ops (concatenate) in collect by one concatenate "
                                  "of 4 operands (collect/stack)")


@pytest.mark.parametrize("case", CASES)
def test_the_top_cause_belongs_to_the_program_the_headline_names_first(case, reports):
    # torch_extra_compilations: the headline named the side graph that changed,
    # and the top cause was another program's shifted module number
    report = _report(reports, case)
    if report.findings:
        top = report.findings[0]
        run_wide = top.program == "" and top.kind == "environment"  # a version, a flag
        assert run_wide or top.program == report.programs[0].program, (top.kind, top.program)


def test_a_reshape_the_framework_puts_on_an_argument_is_no_op_of_the_model(reports):
    # tf_variable_vs_constant: w captured as a tf.Variable, then as a
    # tf.constant; TF reshapes a tensor argument on entry (no op_name). The
    # top cause read "added: reshape f32[16,4]" with "The model code adds
    # operations here" (a helper session's raw tf.function runs).
    top = _report(reports, "tf_variable_vs_constant").findings[0]
    assert top.summary == ("argument passed another way: argument 2 f32[16,4] reshaped by the "
                           "framework (no op_name) in run b only")
    assert "model code adds" not in top.advice
    assert "as a tf.Variable in the other" in top.advice


@pytest.mark.parametrize("case, place", [
    ("tf_keras_mixed_precision",
     "cond_true_485_rearrange_0__.14 (a branch of the conditional at cond)"),
    ("jax_update_under_cond", "region_6.8 (a branch of the conditional at jit(train_step)/cond)")])
def test_ops_moved_into_a_branch_of_one_run_are_moved_not_removed(case, place, reports):
    # tf_keras_mixed_precision: Keras' LossScaleOptimizer runs the SGD update and
    # the step count (Add_2: iterations + 1) in the true branch of a conditional
    # that skips non-finite steps. A helper session's run read "op_removed 6 ops
    # (add, constant(1), broadcast)" at Add_2, with advice about a 1 folded away.
    report = _report(reports, case)
    moved = [f for f in report.findings if f.kind == "op_moved"]
    assert [f.summary.split(": ")[0] for f in moved] == [f"moved into {place}"]
    assert moved[0].new == f"inside {place}"
    assert "multiply" in moved[0].old and "subtract" in moved[0].old
    assert "run b runs them inside a branch" in moved[0].advice
    assert not [f for f in report.findings if f.kind in ("op_removed", "replaced")
                and "multiply" in (f.old or "")]
    assert not any("folded away" in f.advice for f in report.findings)
    # the other way round, they moved out of it
    mirror = compare(CORPUS / case / "run_b", CORPUS / case / "run_a")
    moved = [f for f in mirror.findings if f.kind == "op_moved"]
    assert [f.summary.split(": ")[0] for f in moved] == [f"moved out of {place}"]
    assert moved[0].old == f"inside {place}"
    assert "run a runs them inside a branch" in moved[0].advice


def test_the_step_count_moved_with_the_update_it_counts(reports):
    # Add_2 (the optimizer's iterations + 1) and its constant(1) are in the move
    top = next(f for f in _report(reports, "tf_keras_mixed_precision").findings
               if f.kind == "op_moved")
    assert {(w.a or "").split(".")[0] for w in top.where} >= {"Add_2", "Mul", "AssignSubVariableOp"}
    assert "constant(1)" in top.old


def test_64_bit_values_in_one_run_only_are_jax_enable_x64_not_a_scalar_at_a_line(reports):
    # jax_enable_x64: the same flax step, run_b with JAX_ENABLE_X64=1. A helper
    # session's NNX run read "dtype s32[] -> s64[]" at the loss's line, advice
    # "keep such values Python scalars", then PRNG internals as causes of
    # their own ("the PRNG settings or the JAX version differ")
    report = _report(reports, "jax_enable_x64")
    top = report.findings[0]
    assert top.program == "jit_train_step"
    assert top.summary == "64-bit types in run b only: f32, s32, u32 -> f64, s64, u64"
    assert "jax_enable_x64" in top.advice and "Python scalar" not in top.advice
    assert not [f for f in report.findings if "PRNG settings" in f.advice]
    # the side programs retyped so are the same finding, counted over them
    assert sum(f.summary.startswith("64-bit types in run") for f in report.findings) == 1
    assert top.detail == "(4 of 5 programs)"
    mirror = compare(CORPUS / "jax_enable_x64" / "run_b", CORPUS / "jax_enable_x64" / "run_a")
    assert mirror.findings[0].summary == "64-bit types in run a only: f64, s64, u64 -> f32, s32, u32"


def test_a_precision_on_every_matmul_is_jax_default_matmul_precision_not_the_code(reports):
    # jax_default_matmul_precision: the same flax step, run_b with
    # JAX_DEFAULT_MATMUL_PRECISION=highest. A helper session's NNX run read
    # "attribute (none) -> {highest,highest}" with "look at the code at this
    # line for a changed option"
    report = _report(reports, "jax_default_matmul_precision")
    [top] = [f for f in report.findings if f.moves_a_hash]
    assert top.summary == ("precision of every matmul and convolution: (none) -> "
                           "{highest,highest}")
    assert top.count == 5
    assert "jax_default_matmul_precision" in top.advice and "look at the code" not in top.advice


def test_a_block_wrapped_in_jax_checkpoint_is_one_finding_that_names_it(reports):
    # jax_remat_added: nn.remat around a flax block. It read "replaced: 8 ops
    # (select, divide, multiply) by 170 ops" above a dozen rows of renamed
    # scopes (Block_0 -> CheckpointBlock_0), none of which named the checkpoint
    report = _report(reports, "jax_remat_added")
    step = [f for f in report.findings if f.program == "jit_train_step"]
    assert [f.summary for f in step] == [
        "jax.checkpoint (remat) in run b only: the backward pass recomputes 110 ops "
        "(mul, add, sub, …)"]
    assert "jax.checkpoint" in step[0].advice and "Python branch" not in step[0].advice
    assert any(o.source_line == 315 for o in step[0].origins)
    assert {d.kind for d in step[0].derived} >= {"replaced", "metadata"}
    mirror = compare(CORPUS / "jax_remat_added" / "run_b", CORPUS / "jax_remat_added" / "run_a")
    assert mirror.findings[0].summary.startswith("jax.checkpoint (remat) in run a only:")


def test_another_checkpoint_policy_is_what_the_backward_pass_recomputes(reports):
    # jax_remat_policy: nn.remat's policy dots_saveable -> nothing_saveable. It
    # read "removed: 6 ops (reduce-precision, get-tuple-element)" with advice
    # about Python branches and static arguments
    report = _report(reports, "jax_remat_policy")
    [top] = [f for f in report.findings if f.moves_a_hash]
    assert top.summary == ("jax.checkpoint (remat) recomputes other ops (its policy?): run b "
                           "recomputes 2 ops (dot_general) more")
    assert "policy=" in top.advice


def test_equinox_filter_checkpoint_is_the_checkpoint_not_ops_added(reports):
    # jax_eqx_remat_added: eqx.filter_checkpoint around each block. equinox's
    # scope is inside JAX's transformations in the forward pass
    # (jvp(vmap(eqx.nn.Linear))/dot_general) and after them when recomputed:
    # it read "added: 46 ops (opt-barrier, dot, tanh, add, multiply, ...)"
    # with advice about Python branches
    report = _report(reports, "jax_eqx_remat_added")
    step = [f for f in report.findings if f.moves_a_hash]
    assert [f.summary for f in step] == [
        "jax.checkpoint (remat) in run b only: the backward pass recomputes 38 ops "
        "(add, mul, integer_pow, …)"]
    assert "Python branch" not in step[0].advice
    mirror = compare(CORPUS / "jax_eqx_remat_added" / "run_b",
                     CORPUS / "jax_eqx_remat_added" / "run_a")
    assert [f.summary for f in mirror.findings if f.moves_a_hash] == [
        "jax.checkpoint (remat) in run a only: the backward pass recomputes 38 ops "
        "(add, mul, integer_pow, …)"]


def test_remat_inside_a_scan_over_layers_takes_the_scans_residual_plumbing(reports):
    # jax_scan_remat_added: nn.scan(nn.remat(Block)). The scan's stacking of
    # saved values was the top cause, "removed: 91 ops (call, constant,
    # broadcast, get-tuple-element)", above the checkpoint and three rows of
    # removed get-tuple-elements
    for a, b, run in (("run_a", "run_b", "b"), ("run_b", "run_a", "a")):
        report = compare(CORPUS / "jax_scan_remat_added" / a, CORPUS / "jax_scan_remat_added" / b)
        step = [f for f in report.findings if f.program == "jit_train_step"]
        assert [f.summary for f in step] == [
            f"jax.checkpoint (remat) in run {run} only: the backward pass recomputes 61 ops "
            "(mul, add, sub, …)"]
        assert step[0].origin.source_line == 531


def test_a_relu_beside_a_scan_put_under_a_checkpoint_is_a_cause_of_its_own(reports):
    # jax_scan_remat_head_relu: nn.scan(nn.remat(Block)) and a relu on the
    # scan's output (line 596). It read "replaced: 91 ops (call, constant,
    # broadcast, get-tuple-element) by 2 ops (constant(0), broadcast)" at the
    # scan's while/body/closed_call: the relu's compare, select and call
    # followed from the loop's state losing its saved values, its constant
    # joined the scan's plumbing by the scope they share, and a LayerNorm's
    # ops the checkpoint moved stood apart, claimed by the relu's max
    report = _report(reports, "jax_scan_remat_head_relu")
    step = [f for f in report.findings if f.program == "jit_train_step" and f.moves_a_hash]
    assert [f.summary for f in step] == [
        "jax.checkpoint (remat) in run b only: the backward pass recomputes 61 ops "
        "(mul, add, sub, …)",
        "added: 5 ops (call, compare, select, constant(0), broadcast) in jit(train_step), "
        "corpus/gen/jax_library_cases.py:596"]
    assert (step[1].origin.op_name, step[1].origin.source_line) == (
        "jit(train_step)/jvp(Net)/jit(relu)", 596)


def test_a_relu_added_in_a_scans_step_put_under_a_checkpoint_is_a_cause_of_its_own(reports):
    # jax_scan_remat_body_relu: lax.scan over jax.checkpoint(step), and a relu
    # added in the step (line 632). It read "replaced: 2 ops (constant(1),
    # broadcast) by 4 ops (constant, broadcast)" at the relu's line: its
    # compare, select and call followed from the loop's "6 operands -> 4
    # operands", and the tanh's derivative the checkpoint moved stood apart
    report = _report(reports, "jax_scan_remat_body_relu")
    step = [f for f in report.findings if f.program == "jit_train_step" and f.moves_a_hash]
    assert [f.summary.split(":")[0] for f in step] == ["jax.checkpoint (remat) in run b only",
                                                     "added"]
    assert (step[1].kind, step[1].origin.op_name, step[1].origin.source_line) == (
        "op_added", "jit(relu)", 632)


def test_prevent_cse_switched_off_is_the_checkpoint_not_removed_ops(reports):
    # jax_scan_remat_prevent_cse: nn.remat(Block, prevent_cse=False). It read
    # "removed: 9 ops (opt-barrier, tuple, get-tuple-element) in remat2" with
    # advice about Python branches
    report = _report(reports, "jax_scan_remat_prevent_cse")
    [top] = [f for f in report.findings if f.moves_a_hash]
    assert top.summary == ("jax.checkpoint (remat) with another prevent_cse: run b recomputes "
                           "without the optimization barrier (prevent_cse=False)")
    assert "prevent_cse" in top.advice and "Python branch" not in top.advice
    mirror = compare(CORPUS / "jax_scan_remat_prevent_cse" / "run_b",
                     CORPUS / "jax_scan_remat_prevent_cse" / "run_a")
    assert mirror.findings[0].summary.startswith(
        "jax.checkpoint (remat) with another prevent_cse: run a recomputes without")


def test_one_multiply_more_in_a_checkpointed_block_is_the_op_not_a_policy(reports):
    # jax_scan_remat_scale_in_block: h = h * 1.5 inside nn.remat's block, in a
    # scope that had multiplies (gelu). It read "jax.checkpoint (remat)
    # recomputes other ops (its policy?): run b recomputes 1 op (mul) more"
    report = _report(reports, "jax_scan_remat_scale_in_block")
    top = report.findings[0]
    assert (top.kind, top.origin.source_line) == ("op_added", 533)
    assert "1.5" in top.summary
    assert not [f for f in report.findings if "jax.checkpoint" in f.summary]


def test_an_op_added_inside_a_checkpointed_block_is_the_op_not_the_checkpoint(reports):
    # jax_remat_layer_added: the same checkpoint in both runs, a gate added in
    # the block; what the checkpoint recomputes changes with it, as a
    # consequence, and the gate's line is the cause
    report = _report(reports, "jax_remat_layer_added")
    top = report.findings[0]
    assert (top.kind, top.origin.source_line) == ("op_added", 318)
    assert not [f for f in report.findings if "jax.checkpoint" in f.summary]


@pytest.mark.parametrize("case, there, back", [
    # lax.scan's unroll 1 -> 2 read "added: 43 ops (slice, call, concatenate,
    # reshape, get-tuple-element)" with advice about Python branches, then
    # "shape f32[4,8,16] -> f32[2,2,8,16]"
    ("jax_scan_unroll",
     "lax.scan unroll 1 -> 2: the loop runs 2 steps per iteration, 4 -> 2 iterations",
     "lax.scan unroll 2 -> 1: the loop runs 1 step per iteration, 2 -> 4 iterations"),
    # 5 layers: JAX runs the step unroll=2 leaves over outside the loop
    ("jax_scan_unroll_remainder",
     "lax.scan unroll 1 -> 2: the loop runs 2 steps per iteration, 5 -> 2 iterations, and "
     "1 step outside it",
     "lax.scan unroll 2 -> 1: the loop runs 1 step per iteration, 2 -> 5 iterations (run a "
     "ran 1 step outside it)"),
    ("jax_scan_unroll_more",
     "lax.scan unroll 2 -> 4: the loop runs 4 steps per iteration, 4 -> 2 iterations",
     "lax.scan unroll 4 -> 2: the loop runs 2 steps per iteration, 2 -> 4 iterations")])
def test_a_scan_unrolled_otherwise_is_one_finding_that_names_the_unroll(case, there, back,
                                                                         reports):
    for report, summary in ((_report(reports, case), there),
                            (compare(CORPUS / case / "run_b", CORPUS / case / "run_a"), back)):
        assert [f.summary for f in report.findings if f.moves_a_hash] == [summary]
        top = report.findings[0]
        assert (top.origin.op_name, top.origin.source_line) == ("jit(train_step)/jvp()/while", 402)
        assert "unroll=" in top.advice and "Python branch" not in top.advice
        # what it rewrote follows from it: the slices, calls and concatenates
        # in the loop, the stacked values reshaped
        assert {d.kind for d in top.derived} >= {"shape"}
        assert {d.kind for d in top.derived} & {"op_added", "op_removed"}


@pytest.mark.parametrize("case, there, back", [
    ("jax_scan_unroll_and_lr",
     "lax.scan unroll 1 -> 2: the loop runs 2 steps per iteration, 4 -> 2 iterations",
     "lax.scan unroll 2 -> 1: the loop runs 1 step per iteration, 2 -> 4 iterations"),
    ("jax_scan_unroll_more_and_lr",
     "lax.scan unroll 2 -> 4: the loop runs 4 steps per iteration, 4 -> 2 iterations",
     "lax.scan unroll 4 -> 2: the loop runs 2 steps per iteration, 2 -> 4 iterations")])
def test_a_learning_rate_changed_with_the_unroll_is_a_cause_of_its_own(case, there, back,
                                                                        reports):
    # lr 0.01 -> 0.02 together with the unroll: 0.01 -> 0.02 is 1/(25*4) ->
    # 1/(25*2), the way a mean's 1/B scales with a dimension 4 -> 2, and the
    # unroll moves one (the loop's trip count; with 8 layers, the reshape of
    # the stacked weights). The learning rate read as following from it, the
    # unroll finding took it along, and the report named it nowhere.
    for report, (old, new), summary in (
            (_report(reports, case), ("0.01", "0.02"), there),
            (compare(CORPUS / case / "run_b", CORPUS / case / "run_a"), ("0.02", "0.01"), back)):
        moving = [f for f in report.findings if f.moves_a_hash]
        assert [(f.kind, f.old, f.new, f.summary) for f in moving] == [
            ("constant", old, new, ""), ("replaced", None, None, summary)]
        rate, unrolled = moving
        assert (rate.origin.op_name, rate.origin.source_line) == ("jit(train_step)/mul", 408)
        assert "Python float" in rate.advice
        assert (unrolled.origin.op_name, unrolled.origin.source_line) == \
            ("jit(train_step)/jvp()/while", 402)
        assert "unroll=" in unrolled.advice
        assert not [d for d in unrolled.derived if d.kind == "constant"
                    and {d.old, d.new} == {"0.01", "0.02"}]
        # what XLA optimized otherwise is the unroll's (the weights' bitcast into
        # the unrolled layout): a learning rate alone makes it optimize nothing
        # otherwise (jax_learning_rate), and this one claimed 52 instructions
        assert rate.optimized == 0 and unrolled.optimized > 0


def test_what_a_scan_keeps_for_a_relu_added_in_its_step_follows_from_the_relu(reports):
    # A relu added to lax.scan's step: its gradient needs the relu's mask at
    # every step, so the forward loop stacks it and the backward loop reads a
    # slice a step. That stack read as three more causes beside the relu:
    # "added: 8 ops (call, constant(false), broadcast, get-tuple-element)" at
    # the scan's line 637, with advice about Python branches, and two lone
    # get-tuple-elements of a pred[4,8,16] stack. Removing the relu, the same.
    case = CORPUS / "jax_scan_body_relu"
    for report, kind in ((_report(reports, "jax_scan_body_relu"), "op_added"),
                         (compare(case / "run_b", case / "run_a"), "op_removed")):
        assert [(f.kind, f.origin.op_name, f.origin.source_line) for f in report.findings] == [
            (kind, "jit(relu)", 632)]
        under = [d for d in report.findings[0].derived if d.kind == kind]
        assert any(o.source_line == 637 for d in under for o in d.origins), under
        assert any("pred[4,8,16]" in (d.old or d.new or "") for d in under), under


def test_a_flax_scan_unrolled_otherwise_is_one_finding_per_program(reports):
    # nn.scan(..., unroll=1 -> 2) over flax blocks: the training step's loops
    # and those of the jitted model.init. It read "added: 51 ops (slice, call,
    # concatenate, ...)", two rows "added: get-tuple-element" and a shape row
    report = _report(reports, "jax_flax_scan_unroll")
    said = "lax.scan unroll 1 -> 2: the loop runs 2 steps per iteration, 4 -> 2 iterations"
    assert [(f.program, f.summary) for f in report.findings if f.moves_a_hash] == [
        ("jit_train_step", said), ("jit_init", said)]
    assert report.findings[0].origin.source_line == 439


def test_a_scan_that_runs_longer_is_not_an_unrolling(reports):
    # jax_scan_length: 4 -> 6 stacked layers, unroll=2 in both: the loops run
    # 2 -> 3 iterations of the same body, over more work
    report = _report(reports, "jax_scan_length")
    assert report.findings[0].summary == "model dimension 4 -> 6 in ws f32[4,16,16]"
    assert not [f for f in report.findings if "unroll" in f.summary]
