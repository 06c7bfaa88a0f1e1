"""Kubernetes resource quantities: ``resource.ParseQuantity`` and ``Quantity.String()``, exactly.

A port of k8s.io/apimachinery/pkg/api/resource (quantity.go, suffix.go, amount.go) as kubectl and the
API server run it, quirks included, because a canonical form that differs from Kubernetes' would diff:

* a value that is already canonical keeps its spelling ("+1", "5.", "007", "1.Ki", "1e+3");
* precision below nano is rounded away from zero ("0.1n" is "1n"); only BinarySI is capped, at 2^63-1;
* a DecimalSI value above the "E" suffix loses its exponent in ``String()`` ("1000E" prints "1");
* the decimal exponent is an int32, so "1e4294967296" is 1 and "1e9223372036854775807" is 0.1;
* a lone suffix or sign is zero ("Ki", "m", "+", "."), while "Ei" has no digits to parse.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Final, Literal

from ..values.records import Record
from ..values.text import bounded

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

SPLIT_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_ERROR = f"quantities must match the regular expression '{SPLIT_PATTERN}'"
NUMERIC_ERROR = "unable to parse numeric part of quantity"
SUFFIX_ERROR = "unable to parse quantity's suffix"

_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {v: k for k, v in _BINARY_SUFFIXES.items()}
_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1
_NANO = -9
_MAX_INT64_FACTORS = 18
# Python refuses int<->str conversions past 4300 digits; longer values go through _to_int/_to_digits.
_STR_DIGITS = 4000
_SMALL = 10**_STR_DIGITS
_MAX_ALIGN = 100_000
# The longest quantity read: apimachinery has no limit of its own, but its arithmetic on a value of
# millions of digits costs seconds here; 10 KiB holds every value a cluster compares exactly (int64
# with nine decimal places) hundreds of times over and bounds one parse to a few milliseconds.
MAX_QUANTITY_CHARS = 10_240


class QuantityError(ValueError):
    """A value Kubernetes does not accept as a quantity; the message is Kubernetes' own where it has one."""


class Quantity(Record):
    """The exact value ``coefficient * 10**exponent`` and the format Kubernetes prints it in.

    ``_text`` is the spelling Kubernetes keeps for an input already in canonical form; ``_int64`` says
    whether Kubernetes holds the value as an int64 (its exponent arithmetic then wraps differently).
    """

    __slots__ = ("_int64", "_text", "coefficient", "exponent", "format")

    def __init__(
        self,
        coefficient: int,
        exponent: int = 0,
        format: Format = "DecimalSI",
        _text: str | None = None,
        _int64: bool = True,
    ) -> None:
        self.coefficient: Final = coefficient
        self.exponent: Final = exponent
        self.format: Final = format
        self._text: Final = _text
        self._int64: Final = _int64

    def canonical(self) -> str:
        """Kubernetes' ``Quantity.String()``."""
        if self._text is not None:
            return self._text
        if self.coefficient == 0:
            return "0"
        fmt = self.format
        if fmt == "BinarySI":
            small = _compare(_MINUS_K, self) < 0 and _compare(self, _K) < 0
            if small or not self.is_integer():
                fmt = "DecimalSI"
        if fmt == "BinarySI":
            c, e = self.coefficient, self.exponent
            amount, times = _strip_factors(c * _pow10(e) if e >= 0 else c // _pow10(-e), 1024)
            return _signed_digits(amount) + _BINARY_BY_EXPONENT.get(times * 10, "")
        number, exponent = _base10(self.coefficient, self.exponent, self._int64)
        if fmt == "DecimalExponent":
            suffix = f"e{exponent}" if exponent else ""
        else:
            suffix = _DECIMAL_BY_EXPONENT.get(exponent, "")
        return _signed_digits(number) + suffix

    def is_integer(self) -> bool:
        if self.coefficient == 0 or self.exponent >= 0:
            return True
        return self.coefficient % _pow10(-self.exponent) == 0

    def is_negative(self) -> bool:
        return self.coefficient < 0

    def is_zero(self) -> bool:
        return self.coefficient == 0

    def scaled_value(self, scale: int) -> int | None:
        """Kubernetes' ``ScaledValue``: the value in units of 10**scale, rounded away from zero;
        ``None`` where Kubernetes' int64 overflows (its result is then undefined)."""
        c = abs(self.coefficient)
        if c == 0:
            return 0
        e = self.exponent - scale
        if _num_digits(c) + e > 19:
            return None
        if e >= 0:
            v = c * _pow10(e)
        elif -e > _num_digits(c):
            v = 1
        else:
            q, r = divmod(c, _pow10(-e))
            v = q + (1 if r else 0)
        v = v if self.coefficient > 0 else -v
        return v if _INT64_MIN <= v <= _INT64_MAX else None

    def __str__(self) -> str:
        return self.canonical()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return _compare(self, other) == 0

    def __hash__(self) -> int:
        return hash(_normalized(self.coefficient, self.exponent))

    def __lt__(self, other: Quantity) -> bool:
        return _compare(self, other) < 0

    def __le__(self, other: Quantity) -> bool:
        return _compare(self, other) <= 0

    def __gt__(self, other: Quantity) -> bool:
        return _compare(self, other) > 0

    def __ge__(self, other: Quantity) -> bool:
        return _compare(self, other) >= 0

    def __add__(self, other: object) -> Quantity:
        """Kubernetes' ``Add``: a zero left operand takes the right one's format."""
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.coefficient == 0 else self.format
        if other.coefficient == 0:
            coefficient, exponent = self.coefficient, self.exponent
        elif self.coefficient == 0:
            coefficient, exponent = other.coefficient, other.exponent
        else:
            exponent = min(self.exponent, other.exponent)
            if max(self.exponent, other.exponent) - exponent > _MAX_ALIGN:
                raise QuantityError("quantities are too far apart in magnitude to add exactly")
            coefficient = self.coefficient * _pow10(self.exponent - exponent)
            coefficient += other.coefficient * _pow10(other.exponent - exponent)
        int64 = self._int64 and other._int64 and _INT64_MIN <= coefficient <= _INT64_MAX
        return Quantity(coefficient, exponent, fmt, None, int64)

    def __mul__(self, factor: object) -> Quantity:
        """Kubernetes' ``Mul`` by an integer; the format is kept."""
        if isinstance(factor, bool) or not isinstance(factor, int):
            return NotImplemented
        coefficient = self.coefficient * factor
        exponent = self.exponent if coefficient else 0
        int64 = self._int64 and _INT64_MIN <= coefficient <= _INT64_MAX
        return Quantity(coefficient, exponent, self.format, None, int64)

    __rmul__ = __mul__


_K = Quantity(1024)
_MINUS_K = Quantity(-1024)


def zero() -> Quantity:
    return Quantity(0)


def parse_quantity(raw: object) -> Quantity:
    """A quantity as written in YAML: a string per Kubernetes' grammar, or a number.

    A number reaches Kubernetes as JSON, so a float is spelt as Go's ``encoding/json`` spells it
    (0.5 -> "0.5", 1000.0 -> "1000", 1e-7 -> "1e-7", 1e21 -> "1e+21"), and an integer beyond int64
    and uint64 is, as Go's YAML decoder makes it, a float.
    """
    if isinstance(raw, bool) or raw is None:
        raise QuantityError("must be a string or number")
    if isinstance(raw, str):
        if len(raw) > MAX_QUANTITY_CHARS:
            raise QuantityError(f"{len(raw)} characters long: render reads quantities of at most {MAX_QUANTITY_CHARS}")
        return _parse(raw)
    if isinstance(raw, int) and _INT64_MIN <= raw <= _UINT64_MAX:
        return _parse(str(raw))
    if isinstance(raw, int | float):
        try:
            number = float(raw)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise QuantityError("must be a finite number")
        return _parse(_go_json_float(number))
    raise QuantityError("must be a string or number")


def _go_json_float(value: float) -> str:
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        text = repr(value)
        if len(text) >= 4 and text[-4] == "e" and text[-3] == "-" and text[-2] == "0":
            text = text[:-2] + text[-1]
        return text
    return format(Decimal(repr(value)).normalize(), "f")


def _parse(text: str) -> Quantity:
    if text == "":
        raise QuantityError(FORMAT_ERROR)
    if text == "0":
        return Quantity(0, 0, "DecimalSI", "0")
    positive, value, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)

    precision = -1
    scale = 0
    mantissa = 1
    if fmt != "BinarySI":
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    elif exponent >= 0 and not denom:
        mantissa = 1 << exponent
        precision = 15 - len(num) - exponent * 3 // 10 - 1

    if precision >= 0:
        scale = _wrap32(scale - len(denom))
        if scale >= _NANO:
            shifted = num + denom
            result = int(shifted) * mantissa
            if result <= _INT64_MAX:
                if fmt == "BinarySI":
                    keep = exponent % 10 == 0 and int(shifted) & 0x07 != 0
                else:
                    keep = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                return Quantity(result if positive else -result, scale, fmt, text if keep else None)

    return _parse_slow(value, base, exponent, fmt)


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """Go's ``parseQuantityString``: sign, the number as written, its integer and fraction digits, suffix."""
    positive = True
    pos, end = 0, len(text)
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return positive, text, num, "", ""
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_ERROR)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        sign, body = (suffix[1], suffix[2:]) if suffix[1] in "+-" else ("+", suffix[1:])
        body = body.lstrip("0") or ("0" if body else "")
        if body and len(body) <= 19 and all(c in _DIGITS for c in body):
            parsed = int(sign + body)
            if _INT64_MIN <= parsed <= _INT64_MAX:
                return 10, _wrap32(parsed), "DecimalExponent"
    raise QuantityError(SUFFIX_ERROR)


def _parse_slow(value: str, base: int, exponent: int, fmt: Format) -> Quantity:
    """The inf.Dec path: exact, rounded up to nano, BinarySI capped at 2^63-1."""
    sign = -1 if value.startswith("-") else 1
    whole, _, fraction = value.lstrip("+-").partition(".")
    if not whole + fraction:
        raise QuantityError(NUMERIC_ERROR)
    magnitude = _to_int(whole + fraction)
    if base == 10:
        exp = -_wrap32(len(fraction) + _wrap32(-exponent))
    else:
        magnitude <<= exponent
        exp = -len(fraction)
    if magnitude and exp < _NANO:
        drop = _NANO - exp
        if drop > _num_digits(magnitude):
            magnitude = 1
        else:
            q, r = divmod(magnitude, _pow10(drop))
            magnitude = q + (1 if r else 0)
        exp = _NANO
    if fmt == "BinarySI":
        if _compare(Quantity(magnitude, exp), Quantity(_INT64_MAX)) > 0:
            magnitude, exp = _INT64_MAX, 0
        if magnitude and _compare(Quantity(magnitude, exp), Quantity(1)) < 0:
            fmt = "DecimalSI"
    return Quantity(sign * magnitude, exp, fmt, None, False)


def _base10(coefficient: int, exponent: int, int64: bool) -> tuple[int, int]:
    """``AsCanonicalBytes``: the mantissa and an exponent that is a multiple of 3, in int32 arithmetic."""
    amount, times = _strip_factors(coefficient, 10)
    exp = _wrap32(exponent + times)
    if int64:
        step = {1: 1, -2: 1, 2: 2, -1: 2}.get(_go_rem3(exp), 0)
        if _INT64_MIN <= amount * _pow10(step) <= _INT64_MAX:
            return amount * _pow10(step), _wrap32(exp - step)
    while _go_rem3(exp) != 0:
        amount *= 10
        exp = _wrap32(exp - 1)
    return amount, exp


def _compare(a: Quantity, b: Quantity) -> int:
    sa = (a.coefficient > 0) - (a.coefficient < 0)
    sb = (b.coefficient > 0) - (b.coefficient < 0)
    if sa != sb or sa == 0:
        return (sa > sb) - (sa < sb)
    ma = _num_digits(abs(a.coefficient)) + a.exponent
    mb = _num_digits(abs(b.coefficient)) + b.exponent
    if ma != mb:
        return sa if ma > mb else -sa
    e = min(a.exponent, b.exponent)
    x = a.coefficient * _pow10(a.exponent - e)
    y = b.coefficient * _pow10(b.exponent - e)
    return (x > y) - (x < y)


def _normalized(coefficient: int, exponent: int) -> tuple[int, int]:
    if coefficient == 0:
        return 0, 0
    amount, times = _strip_factors(coefficient, 10)
    return amount, exponent + times


def _strip_factors(value: int, base: int) -> tuple[int, int]:
    magnitude, times = abs(value), 0
    if base == 10 and magnitude >= _SMALL:
        digits = _to_digits(magnitude)
        significant = digits.rstrip("0")
        magnitude, times = _to_int(significant), len(digits) - len(significant)
    while magnitude >= base and magnitude % base == 0:
        magnitude //= base
        times += 1
    return (magnitude if value >= 0 else -magnitude), times


def _pow10(k: int) -> int:
    return int(10**k)


def _wrap32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def _go_rem3(value: int) -> int:
    r = abs(value) % 3
    return -r if value < 0 else r


def _num_digits(n: int) -> int:
    if n < _SMALL:
        return len(str(n))
    d = max(0, int((n.bit_length() - 1) * math.log10(2)) - 1)
    while _pow10(d) <= n:
        d += 1
    return d


def _to_int(digits: str) -> int:
    if len(digits) <= _STR_DIGITS:
        return int(digits)
    half = len(digits) // 2
    return _to_int(digits[:half]) * _pow10(len(digits) - half) + _to_int(digits[half:])


def _to_digits(n: int) -> str:
    if n < _SMALL:
        return str(n)
    k = _num_digits(n) // 2
    high, low = divmod(n, _pow10(k))
    return _to_digits(high) + _to_digits(low).rjust(k, "0")


def _signed_digits(n: int) -> str:
    return ("-" if n < 0 else "") + _to_digits(abs(n))


# What users write instead of a quantity, and what they mean: a fix to propose (see ``invalid``).
_SPELLING = re.compile(r"\s*([+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+))\s*([A-Za-z]*)\s*")
_CPU_WORDS = frozenset({"core", "cores", "cpu", "cpus", "vcpu", "vcpus"})
_BYTE_WORDS = frozenset({"b", "byte", "bytes"})
_TIMES = "\N{MULTIPLICATION SIGN}"
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
GRAMMAR = (
    "a quantity is a number with an optional suffix: m, k, M, G, T, P, E (powers of 10) "
    "or Ki, Mi, Gi, Ti, Pi, Ei (powers of 2), e.g. 500m, 2, 512Mi, 64Gi"
)


def suggestions(raw: object) -> list[str]:
    """The valid quantities a string that is not one most likely means, nearest first:
    ``64GB`` -> 64G, 64Gi; ``2 cores`` -> 2, 2000m; ``1gi`` -> 1Gi; ``1,5`` -> 1.5; `` 1`` -> 1."""
    if not isinstance(raw, str):
        return []
    match = _SPELLING.fullmatch(raw)
    if match is None:
        return []
    number, unit = match.group(1).replace(",", "."), match.group(2)
    lower = unit.lower()
    candidates: list[str] = []
    if lower in _CPU_WORDS:
        candidates.append(number)
        milli = Decimal(number) * 1000
        if milli == milli.to_integral_value():
            candidates.append(f"{int(milli)}m")
    elif lower in _BYTE_WORDS:
        candidates.append(number)
    else:
        bytes_unit = lower.endswith("b") and len(unit) > 1
        stem = unit[:-1] if bytes_unit else unit
        letter, binary = stem[:1], stem[1:].lower() == "i"
        if stem == "m" and not bytes_unit:  # "100 m": milli; "512mb" is mega, below
            candidates.append(number + "m")
        elif len(stem) <= 2 and (len(stem) == 1 or binary) and letter.lower() in "kmgtpe":
            if not binary:
                candidates.append(number + ("k" if letter.lower() == "k" else letter.upper()))
            candidates.append(number + letter.upper() + "i")
        else:
            candidates.append(number + unit)
    out: list[str] = []
    for candidate in candidates:
        if candidate != raw and candidate not in out:
            try:
                parse_quantity(candidate)
            except QuantityError:
                continue
            out.append(candidate)
    return out


def meaning(text: str) -> str:
    """``64Gi`` -> 64 times 2 to the 30th, written with a multiplication sign and superscripts;
    ``2000m`` -> 2000 times 10 to the -3rd; a plain number is itself."""
    for suffix, power in _BINARY_SUFFIXES.items():
        if text.endswith(suffix):
            return f"{text[: -len(suffix)]}{_TIMES}2{str(power).translate(_SUPERSCRIPT)}"
    suffix = text[-1:]
    if suffix in _DECIMAL_SUFFIXES and suffix:
        return f"{text[:-1]}{_TIMES}10{str(_DECIMAL_SUFFIXES[suffix]).translate(_SUPERSCRIPT)}"
    return text


def invalid(raw: object, error: QuantityError) -> tuple[str, str | None]:
    """The message for a value that is not a quantity (the value, and the fix where one is likely),
    and the fix to propose."""
    if not isinstance(raw, str):
        return str(error), None
    if len(raw) > MAX_QUANTITY_CHARS:
        return f"{bounded(repr(raw))} is not a quantity render reads: {error}", None
    fixes = suggestions(raw)
    if not fixes:
        return f"{bounded(repr(raw))} is not a quantity: {GRAMMAR}", None
    spelled = " or ".join(f + (f" (= {meaning(f)})" if meaning(f) != f else "") for f in fixes)
    return f"{raw!r} is not a quantity: did you mean {spelled}?", fixes[0]
