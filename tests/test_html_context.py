"""Each finding's lines and neighbourhood (hlodiff/analysis/context.py), which the
HTML report draws: what is marked as changed, what the graph holds, how a big
literal is told, and that the cache keeps it."""

from __future__ import annotations

from conftest import CORPUS
from hlodiff.analysis.compare import compare

LR = CORPUS / "jax_learning_rate"


def changed(line) -> list[str]:
    return [p.text for p in line.pieces if p.changed]


def test_renumbered_names_are_not_changes_only_the_value_is():
    report = compare(CORPUS / "jax_dropout_rate" / "run_a", CORPUS / "jax_dropout_rate" / "run_b",
                     context=True)
    finding, context = report.findings[0], report.context[0]
    place = context.places[0]
    assert finding.where[0].a != finding.where[0].b  # constant.184 in run a is constant.185 in b
    assert finding.where[0].a in place.a.text and finding.where[0].b in place.b.text
    assert (changed(place.a), changed(place.b)) == (["0.9"], ["0.8"])


def test_a_constant_that_became_a_parameter_marks_what_it_became_not_its_name():
    case = CORPUS / "jax_constant_to_parameter"
    place = compare(case / "run_a", case / "run_b", context=True).context[0].places[0]
    assert "constant.162" in place.a.text and "lr.1" in place.b.text
    assert changed(place.a) == ["constant", "0.01"]
    assert changed(place.b) == ["parameter", "18"]


def test_the_graph_of_an_added_op_shows_it_and_where_it_sits_in_run_a():
    case = CORPUS / "jax_op_added"
    graph = compare(case / "run_a", case / "run_b", context=True).context[0].graph
    added = [n for n in graph.b.nodes if n.status == "added"]
    assert [(n.opcode, n.focus) for n in added] == [("tanh", True)]
    tanh = added[0]
    operand = next(o for o, user in graph.b.edges if user == tanh.name)
    partner = next(n.partner for n in graph.b.nodes if n.name == operand)
    assert partner in {n.name for n in graph.a.nodes}  # what tanh reads, in run a too
    assert "tanh" not in {n.opcode for n in graph.a.nodes}
    assert "tanh(" in tanh.line and tanh.location == "corpus/gen/jax_cases.py:130"


def test_an_elided_constant_shows_the_elements_module_mlir_holds():
    case = CORPUS / "jax_int4_elided"
    context = compare(case / "run_a", case / "run_b", context=True).context[0]
    place = context.places[0]
    assert changed(place.a) == ["{...}"] and changed(place.b) == ["{...}"]
    literal = place.literal
    assert (literal.source, literal.differing, literal.total) == ("module.mlir", 480, 512)
    assert [(e.index, e.old, e.new) for e in literal.elements[:3]] == [
        (0, "-3", "0"), (1, "3", "7"), (2, "4", "5")]


def test_the_cache_keeps_a_report_with_context_apart_from_one_without():
    plain = compare(LR / "run_a", LR / "run_b", cache=True)
    with_context = compare(LR / "run_a", LR / "run_b", cache=True, context=True)
    again = compare(LR / "run_a", LR / "run_b", cache=True, context=True)
    assert plain.context == ()
    assert len(with_context.context) == len(with_context.findings) == 1
    assert again == with_context  # read back from the cache, context and all


def test_a_replacement_shows_a_line_that_went_and_a_line_that_came():
    # The page showed three of the schedule's new lines, "not in run a", and
    # none of the four constant(-0.001) lines it replaced (a new user's
    # session, corpus/jax_optax_constant_to_schedule).
    case = CORPUS / "jax_optax_constant_to_schedule"
    report = compare(case / "run_a", case / "run_b", context=True)
    index = next(i for i, f in enumerate(report.findings) if f.kind == "replaced")
    places = report.context[index].places
    assert any(p.a is not None and p.b is None and "constant(-0.001)" in "".join(
        piece.text for piece in p.a.pieces) for p in places)
    assert any(p.a is None and p.b is not None for p in places)
