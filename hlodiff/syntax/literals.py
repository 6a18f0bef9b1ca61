"""The values of literal elements, as XLA's parser stores them.

XLA reads each element of ``constant(...)`` into the element type's own
encoding (``HloParserImpl::ParseDenseLiteral`` and ``SetValueInLiteral`` in
``xla/hlo/parser/hlo_parser.cc``), and two literals are the same when those
bits are (``LiteralBase::Equal`` compares the buffers with ``memcmp``). So
``0.5`` and ``5e-1`` are one value, ``-448.`` and ``-448`` too, and
``0.1`` in f8e4m3fn is 0.1015625; while ``-0.0`` and ``0.0`` differ, and a
NaN equals a NaN with the same sign and payload. What XLA does, checked
against jaxlib 0.10.2:

* An integer token is read as 64 bits first: ``18446744073709551615`` is -1
  in s64 and in f32, and ``-0`` is +0 in a float type (``-0.0`` is -0).
* Floats are rounded to nearest, ties to even; f16 and bf16 through f32
  first (Eigen's conversions), so a double can round twice. A value that
  rounds beyond the largest finite number is an error, also where the
  type has an infinity; ``inf`` itself is kept (or becomes NaN, or the
  largest value, where the type has no infinity, as ml_dtypes converts).
  In f4e2m1fn, which has neither infinity nor NaN, any value beyond the
  largest is the largest (``7`` and ``100`` are 6), as ml_dtypes converts.
* ``nan`` is the type's quiet NaN, ``nan(0x7f)`` a NaN with that payload
  (an error if it does not fit, or the type has one NaN only). f4 and f6
  have no NaN: ``nan`` is stored as -0, ``-nan`` as +0. f8e8m0fnu is a
  power of two, rounded half up, with no zero and no sign.
* For c64/c128, a NaN real part makes the imaginary part that NaN too.

``element_bits`` gives an element's bits (the value key), ``decoded`` its
exact value as a Python number; both raise ``LiteralError``.
"""

from __future__ import annotations

import math
import re
import struct
from fractions import Fraction
from typing import NamedTuple

_INT64 = 1 << 63
_UINT64 = 1 << 64
_INT_TOKEN = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"-?(?:[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
                      r"|[0-9]+[eE][+-]?[0-9]+)")
_NAN = re.compile(r"(-?)nan(?:\(0x([0-9a-fA-F]+)\))?")


class LiteralError(ValueError):
    """An element XLA would reject for its type."""


class FloatFormat(NamedTuple):
    exponent: int  # bits
    mantissa: int  # bits
    bias: int
    nan: str  # "ieee": all-ones exponent; "one": only S.1111.111; "zero": 0x80; "none"


FLOATS = {
    "f64": FloatFormat(11, 52, 1023, "ieee"), "f32": FloatFormat(8, 23, 127, "ieee"),
    "bf16": FloatFormat(8, 7, 127, "ieee"), "f16": FloatFormat(5, 10, 15, "ieee"),
    "f8e5m2": FloatFormat(5, 2, 15, "ieee"), "f8e4m3": FloatFormat(4, 3, 7, "ieee"),
    "f8e3m4": FloatFormat(3, 4, 3, "ieee"), "f8e4m3fn": FloatFormat(4, 3, 7, "one"),
    "f8e4m3fnuz": FloatFormat(4, 3, 8, "zero"), "f8e5m2fnuz": FloatFormat(5, 2, 16, "zero"),
    "f8e4m3b11fnuz": FloatFormat(4, 3, 11, "zero"), "f6e3m2fn": FloatFormat(3, 2, 3, "none"),
    "f6e2m3fn": FloatFormat(2, 3, 1, "none"), "f4e2m1fn": FloatFormat(2, 1, 1, "none"),
}
_E8M0 = "f8e8m0fnu"
INTEGERS = {f"{kind}{bits}": (kind == "s", bits) for kind in "su" for bits in (1, 2, 4, 8, 16, 32, 64)}
COMPLEX_PARTS = {"c64": "f32", "c128": "f64"}


# --- tokens -------------------------------------------------------------------------------

def _int64(text: str) -> int:
    """An integer token as XLA's lexer keeps it: 64 bits, two's complement."""
    value = int(text)
    if not -_INT64 <= value < _UINT64:
        raise LiteralError(f"{text} does not fit in 64 bits")
    return value - _UINT64 if value >= _INT64 else value


def _number(text: str) -> float | tuple[bool, int | None]:
    """A float element token: a double, or (negative, payload) for a NaN
    (payload None for the default quiet NaN)."""
    if _INT_TOKEN.fullmatch(text):
        return float(_int64(text))
    if _DECIMAL.fullmatch(text):
        return float(text)
    if text in ("inf", "-inf"):
        return float(text)
    nan = _NAN.fullmatch(text)
    if nan is None:
        raise LiteralError(f"{text!r} is not a number")
    payload = None if nan.group(2) is None else int(nan.group(2), 16)
    if payload == 0:
        raise LiteralError("a NaN payload must not be 0")
    return bool(nan.group(1)), payload


# --- floats -----------------------------------------------------------------------------------

def _float_bits(element_type: str, text: str) -> int:
    number = _number(text)
    if element_type == _E8M0:
        return _e8m0_bits(number)
    form = FLOATS[element_type]
    width = 1 + form.exponent + form.mantissa
    sign_bit = 1 << (width - 1)
    if isinstance(number, tuple):
        return _nan_bits(element_type, form, sign_bit, *number)
    if math.isinf(number):
        return _infinity_bits(form, sign_bit, number < 0)
    if element_type == "f64":
        return struct.unpack(">Q", struct.pack(">d", number))[0]
    if element_type in ("f32", "f16", "bf16"):
        try:
            single = struct.unpack(">f", struct.pack(">f", number))[0]
        except OverflowError:
            raise LiteralError(f"{text} is out of range for {element_type}") from None
        if element_type == "f32":
            return struct.unpack(">I", struct.pack(">f", single))[0]
        number = single  # Eigen converts to half and bfloat16 through float
    return _rounded_bits(number, form, sign_bit, element_type, text)


def _rounded_bits(number: float, form: FloatFormat, sign_bit: int, element_type: str,
                  text: str) -> int:
    """Round to nearest, ties to even, into ``form``."""
    negative = math.copysign(1.0, number) < 0
    sign = sign_bit if negative else 0
    magnitude = abs(number)
    lowest_exponent = 1 - form.bias
    if magnitude == 0:
        return 0 if form.nan == "zero" else sign
    exponent = max(math.frexp(magnitude)[1] - 1, lowest_exponent)
    quantum = Fraction(2) ** (exponent - form.mantissa)
    steps = round(Fraction(magnitude) / quantum)  # Fraction rounds half to even
    if steps == 0:
        return 0 if form.nan == "zero" else sign
    if steps >> form.mantissa == 0:  # subnormal
        field, mantissa = 0, steps
    else:
        if steps >> (form.mantissa + 1):  # rounded up into the next binade
            steps >>= 1
            exponent += 1
        field, mantissa = exponent + form.bias, steps - (1 << form.mantissa)
    all_ones = (1 << form.exponent) - 1
    if form.nan == "none" and field > all_ones:  # no infinity, no NaN: ml_dtypes saturates
        return sign | all_ones << form.mantissa | ((1 << form.mantissa) - 1)
    if field > all_ones or form.nan == "ieee" and field == all_ones \
            or form.nan == "one" and field == all_ones and mantissa == (1 << form.mantissa) - 1:
        raise LiteralError(f"{text} is out of range for {element_type}")
    return sign | field << form.mantissa | mantissa


def _nan_bits(element_type: str, form: FloatFormat, sign_bit: int, negative: bool,
              payload: int | None) -> int:
    all_ones = (1 << form.exponent) - 1
    if form.nan == "ieee":
        mask = (1 << form.mantissa) - 1
        if payload is None or payload == 1 << 51:  # the double's quiet NaN: the type's
            payload = 1 << (form.mantissa - 1)
        if payload > mask:
            raise LiteralError(f"NaN payload 0x{payload:x} does not fit in {element_type}")
        return (sign_bit if negative else 0) | all_ones << form.mantissa | payload
    if payload is not None and payload != 1 << 51:
        raise LiteralError(f"{element_type} has no NaN payloads")
    if form.nan == "one":
        return (sign_bit if negative else 0) | (all_ones << form.mantissa) | ((1 << form.mantissa) - 1)
    if form.nan == "zero":
        return sign_bit
    return 0 if negative else sign_bit  # no NaN: ml_dtypes stores a zero of the other sign


def _infinity_bits(form: FloatFormat, sign_bit: int, negative: bool) -> int:
    sign = sign_bit if negative else 0
    all_ones = (1 << form.exponent) - 1
    if form.nan == "ieee":
        return sign | all_ones << form.mantissa
    if form.nan == "one":
        return sign | all_ones << form.mantissa | ((1 << form.mantissa) - 1)
    if form.nan == "zero":
        return sign_bit
    return sign | all_ones << form.mantissa | ((1 << form.mantissa) - 1)  # the largest value


def _e8m0_bits(number) -> int:
    """f8e8m0fnu: 2**(bits - 127); 0xFF is NaN; no zero, no sign."""
    if isinstance(number, tuple) or math.isinf(number):
        if isinstance(number, tuple) and number[1] not in (None, 1 << 51):
            raise LiteralError("f8e8m0fnu has no NaN payloads")
        return 0xFF
    if number <= 0:
        raise LiteralError(f"{number} is out of range for f8e8m0fnu (positive powers of two)")
    mantissa, exponent = math.frexp(number)  # number = mantissa * 2**exponent, mantissa in [0.5, 1)
    exponent -= 1
    if mantissa >= 0.75:  # rounded half up
        exponent += 1
    field = max(exponent + 127, 0)
    if field > 254:
        raise LiteralError(f"{number} is out of range for f8e8m0fnu")
    return field


def _float_value(element_type: str, bits: int) -> float:
    if element_type == _E8M0:
        return math.nan if bits == 0xFF else math.ldexp(1.0, bits - 127)
    if element_type == "f64":
        return struct.unpack(">d", struct.pack(">Q", bits))[0]
    if element_type == "f32":
        return struct.unpack(">f", struct.pack(">I", bits))[0]
    form = FLOATS[element_type]
    sign_bit = 1 << (form.exponent + form.mantissa)
    sign = -1.0 if bits & sign_bit else 1.0
    field = (bits >> form.mantissa) & ((1 << form.exponent) - 1)
    mantissa = bits & ((1 << form.mantissa) - 1)
    all_ones = (1 << form.exponent) - 1
    if form.nan == "zero" and bits == sign_bit:
        return math.nan
    if form.nan == "ieee" and field == all_ones:
        return math.copysign(math.inf if mantissa == 0 else math.nan, sign)
    if form.nan == "one" and field == all_ones and mantissa == (1 << form.mantissa) - 1:
        return math.copysign(math.nan, sign)
    if field == 0:
        return sign * math.ldexp(mantissa, 1 - form.bias - form.mantissa)
    return sign * math.ldexp(mantissa + (1 << form.mantissa), field - form.bias - form.mantissa)


# --- any element ----------------------------------------------------------------------------

def element_bits(element_type: str, text: str):
    """The bits XLA stores for element ``text`` of ``element_type``: an int
    (a pair of them for complex types). Raises LiteralError."""
    if element_type in FLOATS or element_type == _E8M0:
        return _float_bits(element_type, text)
    if element_type == "pred":
        if text in ("true", "false"):
            return int(text == "true")
        if not _INT_TOKEN.fullmatch(text):
            raise LiteralError(f"{text!r} is not true, false or an integer")
        return int(_int64(text) != 0)
    if element_type in INTEGERS:
        if not _INT_TOKEN.fullmatch(text):
            raise LiteralError(f"{text!r} is not an integer ({element_type})")
        signed, width = INTEGERS[element_type]
        value = _int64(text)
        if signed:
            if not -(1 << (width - 1)) <= value < 1 << (width - 1):
                raise LiteralError(f"{text} is out of range for {element_type}")
            return value & ((1 << width) - 1)
        value %= _UINT64
        if value >= 1 << width:
            raise LiteralError(f"{text} is out of range for {element_type}")
        return value
    if element_type in COMPLEX_PARTS:
        part = COMPLEX_PARTS[element_type]
        real, imaginary = _complex_parts(text)
        real_bits = _float_bits(part, real)
        if isinstance(_number(real), tuple):  # XLA gives the imaginary part the real NaN
            return real_bits, real_bits
        return real_bits, _float_bits(part, imaginary)
    raise LiteralError(f"{element_type} has no literal values")


def _complex_parts(text: str) -> tuple[str, str]:
    inner = text.strip()
    if not (inner.startswith("(") and inner.endswith(")")) or inner.count(",") != 1:
        raise LiteralError(f"{text!r} is not (real, imaginary)")
    real, imaginary = (part.strip() for part in inner[1:-1].split(","))
    return real, imaginary


def decoded(element_type: str, bits):
    """The exact value of an element with these bits: bool, int, float or complex."""
    if element_type == "pred":
        return bool(bits)
    if element_type in INTEGERS:
        signed, width = INTEGERS[element_type]
        return bits - (1 << width) if signed and bits >> (width - 1) else bits
    if element_type in COMPLEX_PARTS:
        part = COMPLEX_PARTS[element_type]
        return complex(_float_value(part, bits[0]), _float_value(part, bits[1]))
    return _float_value(element_type, bits)


def element_bits_of(literal) -> tuple:
    """``element_bits`` of every element of ``literal`` (a model Literal).

    One element for an array shape (``f32[3] constant(1)``, as XLA prints
    constants for fingerprints) is XLA's first element, the others zero:
    its parser sets the element and ignores the rank error it reports."""
    element_type = literal.element_type
    if element_type is None:
        raise LiteralError("the literal's element type is not known")
    bits = tuple(element_bits(element_type, element) for element in literal.elements)
    count = math.prod(literal.dimensions) if None not in literal.dimensions else 1
    if len(bits) == 1 and count > 1:
        zero = (0, 0) if element_type in COMPLEX_PARTS else 0
        bits += (zero,) * (count - 1)
    return bits
