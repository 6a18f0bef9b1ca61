"""Literals compare by the value XLA stores, never by their spelling.

The facts below were each checked with XLA's own parser (jaxlib 0.10.2,
hlo_module_from_text then to_string); the last test checks them again
against XLA whenever jaxlib is installed.
"""

from __future__ import annotations

import math

import pytest

import hlodiff
from xla_agreement import reprint_difference, xla_views_or_skip


def _literal(element_type: str, text: str, dims: str = "") -> hlodiff.Literal:
    module = hlodiff.parse(f"ENTRY e {{\n  ROOT c = {element_type}[{dims}] constant({text})\n}}\n")
    return module.entry.root.literal


@pytest.mark.parametrize("element_type, a, b, dims", [
    ("s32", "{1,2}", "{1, 2}", "2"),
    ("f32", "0.5", "5e-1", ""),
    ("f32", "0.0", "0", ""),
    ("f32", "-0", "0", ""),  # an integer token: -0 is +0 to XLA
    ("f8e4m3fn", "-448.", "-448", ""),
    ("f8e4m3fn", "-449", "-448", ""),  # rounds to the largest value
    ("f8e4m3fn", "0.1", "0.1015625", ""),
    ("bf16", "1.003906250931322574615478515625", "1", ""),  # through f32: rounded twice
    ("f32", "{ /*i0=0*/ {1, 2}, /*i0=1*/ {3, 4} }", "{ {1,2}, {3,4} }", "2,2"),
    ("f32", "nan", "nan(0x400000)", ""),  # the quiet NaN's payload
    ("u64", "-1", "18446744073709551615", ""),
    ("s4", "{-8, 7}", "{-8,7}", "2"),
    ("pred", "{2, 0}", "{true, false}", "2"),
    ("f8e8m0fnu", "3", "4", ""),  # a power of two, rounded half up
    ("c64", "(nan, 1)", "(nan, nan)", ""),  # XLA gives the imaginary part the real NaN
    ("f32", "1", "{1, 0, 0}", "3"),  # one value for an array: the rest are zero
    ("f4e2m1fn", "7", "6", ""),  # no infinity, no NaN: beyond the largest is the largest
    ("f4e2m1fn", "-1e300", "-6", ""),
])
def test_spellings_of_one_value_are_equal(element_type, a, b, dims):
    assert _literal(element_type, a, dims) == _literal(element_type, b, dims)


@pytest.mark.parametrize("element_type, a, b", [
    ("f32", "-0.0", "0.0"),
    ("f32", "nan", "-nan"),
    ("f32", "nan", "nan(0x1)"),
    ("f16", "1", "1.001"),
    ("f32", "0.1", "0.1000001"),
])
def test_different_values_are_different(element_type, a, b):
    assert _literal(element_type, a) != _literal(element_type, b)


def test_the_same_text_in_another_type_is_another_value():
    assert _literal("f32", "0.1") != _literal("f64", "0.1")


def test_values_are_exact_in_the_element_type():
    assert _literal("f8e4m3fn", "0.1").values == (0.1015625,)
    assert _literal("f16", "65519").values == (65504.0,)
    assert _literal("u4", "{15, 0}", "2").values == (15, 0)
    assert _literal("s64", "18446744073709551615").values == (-1,)  # read as 64 bits
    assert _literal("pred", "2").values == (True,)
    assert math.copysign(1, _literal("f32", "-0.0").values[0]) == -1
    assert _literal("f4e2m1fn", "5").values == (4.0,)
    assert _literal("f6e3m2fn", "0.3").values == (0.3125,)  # XLA prints 0.31
    assert _literal("f8e4m3fnuz", "nan").bits == (0x80,)
    real, imaginary = _literal("c64", "(1, -2.5)").values[0].real, _literal("c64", "(1, -2.5)").values[0].imag
    assert (real, imaginary) == (1.0, -2.5)


@pytest.mark.parametrize("element_type, text", [
    ("f16", "65520"), ("u4", "16"), ("s4", "-9"), ("f8e5m2", "61440"), ("f8e8m0fnu", "0"),
    ("f16", "nan(0x400)"), ("f8e4m3fn", "nan(0x1)"), ("s32", "1.5"), ("u8", "-1"),
])
def test_values_xla_rejects_are_errors_in_strict_mode(element_type, text):
    module = hlodiff.parse(f"ENTRY e {{\n  ROOT c = {element_type}[] constant({text})\n}}\n")
    with pytest.raises(hlodiff.HloSyntaxError):
        hlodiff.check(module)


def test_a_literal_nested_deeper_than_its_rank_is_rejected_at_once():
    deep = "{" * 100_000 + "1" + "}" * 100_000
    for shape in ("f32[]", "f32[1]"):
        with pytest.raises(hlodiff.HloSyntaxError) as caught:
            hlodiff.parse(f"ENTRY e {{\n  ROOT c = {shape} constant({deep})\n}}\n")
        assert caught.value.line == 2


# Every element type, with values that round, overflow to the edge, carry
# NaN payloads or signs: hlodiff must read each as XLA prints it back. (Not
# -0.0: XLA prints it "-0", an integer token, which it reads back as +0.)
_CASES = [
    ("pred", "{true, false, 1}", "3"), ("s1", "{-1, 0}", "2"), ("u1", "{1, 0}", "2"),
    ("s2", "{-2, 1}", "2"), ("u2", "{3, 0}", "2"), ("s4", "{-8, 7}", "2"), ("u4", "{15, 0}", "2"),
    ("s8", "-128", ""), ("u8", "255", ""), ("s16", "-32768", ""), ("u16", "65535", ""),
    ("s32", "-2147483648", ""), ("u32", "4294967295", ""), ("s64", "-9223372036854775808", ""),
    ("u64", "-1", ""), ("f16", "{65519, 1.000488281250000111, nan(0x1ff), -inf}", "4"),
    ("bf16", "{1.003906250931322574615478515625, 0.1, -nan, 3e38}", "4"),
    ("f32", "{1e-46, 0.1, nan(0x1), 3.4e38, 1E2, 5.}", "6"),
    ("f64", "{0.1, nan(0x8000000000001), 1e308}", "3"),
    ("f8e5m2", "{57344, 0.1, nan(0x1), -inf}", "4"), ("f8e4m3", "{240, 0.1}", "2"),
    ("f8e3m4", "{15.5, 0.1}", "2"), ("f8e4m3fn", "{-449, 464, 0.1, 0.001, 0.0009765625, -nan}", "6"),
    ("f8e4m3fnuz", "{0.1, -0.0, nan}", "3"), ("f8e5m2fnuz", "{-0.0, 0.1, inf}", "3"),
    ("f8e4m3b11fnuz", "{0.5, -nan}", "2"), ("f8e8m0fnu", "{3, 6, 0.375, 1.4999, 1e-39, 2.5e38, nan}", "7"),
    ("f4e2m1fn", "{5, 2.5, 6.5, 7, -100}", "5"),
    ("c64", "{(1, nan), (nan, 1), (2, 0.1)}", "3"), ("c128", "{(3, 0), (0.1, -nan)}", "2"),
]


def test_every_element_type_reads_as_xla_prints_it_back():
    # One module each. (No f6 types: jaxlib aborts when it serializes them.)
    entries = [(f"{t}[{d}] {v}", f"HloModule literals\n\nENTRY e {{\n  c = {t}[{d}] constant({v})\n"
                                 "  ROOT t = tuple(c)\n}\n") for t, v, d in _CASES]
    views = xla_views_or_skip(entries)
    for key, text in entries:
        assert views[key]["ok"], views[key].get("error")
        module = hlodiff.parse(text, strict=True)
        assert reprint_difference(module, text, views[key]["reprint"]) is None, key
