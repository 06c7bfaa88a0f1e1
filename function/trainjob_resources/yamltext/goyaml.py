"""What go-yaml makes of a plain scalar, and where that is not what PyYAML makes of it.

kubectl, Argo CD and kustomize's kustomization reader read YAML with go-yaml v2 (sigs.k8s.io/yaml's
YAMLToJSON); kustomize reads objects with go-yaml v3 (kyaml), keeping each scalar's text and the tag
v3 resolves for it. This function reads with PyYAML, whose resolver is YAML 1.1's: ``1:30`` is 90
there and the string "1:30" in go-yaml, ``0o17`` a string there and 15 in go-yaml, ``yes`` true in
PyYAML and v2 but the string "yes" in v3. A plain scalar on which the three readings differ is
*disputed*: ``compose`` refuses it (yamlnodes). tests/test_yaml_oracle.py checks these rules against
the real go-yaml (tests/yamloracle), on generated documents.
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any

# go.yaml.in/yaml/v2 resolve.go (init's resolveMapList) and go.yaml.in/yaml/v3 resolve.go (the same
# list less the YAML 1.1 booleans): the words looked up before any number is tried.
_NULL_WORDS = ("", "~", "null", "Null", "NULL")
_V3_WORDS: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(_NULL_WORDS, None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_V2_WORDS: dict[str, Any] = {
    **_V3_WORDS,
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "off", "Off", "OFF"), False),
}
MERGE = "<<"  # a merge key in both (resolve.go's resolveMapList); refused where it matters (merge_key_path)

# resolve.go's resolveTable: only a text starting with one of these is looked up or tried as a number.
_WORD_START = frozenset("yYnNtTfFoO~")
_NUMBER_START = frozenset("+-0123456789")
# A text starting otherwise is a string to go-yaml v2 and v3 (and, unless PyYAML's resolver says
# otherwise, to this function): no reading to compare.
MAY_RESOLVE = _WORD_START | _NUMBER_START | {"."}

# resolve.go's yamlStyleFloat, tried (with strconv.ParseFloat) on the text less its underscores.
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# strconv.ParseFloat's decimal syntax, for a text starting with ``.`` (tried as written): its
# underscoreOK (atoi.go) lets an underscore stand between two digits, in the exponent too.
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+(?:_[0-9]+)*)?")
# resolve.go's parseTimestamp: four digits and a dash, then one of its layouts (time.Parse's
# "2006-1-2", "2006-1-2 15:4:5.999999999", "2006-1-2T15:4:5.999999999Z07:00" and its lower-case t).
_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"(?:(?:[Tt]|[ ])[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2})?)?"
)
_INT64 = (-(1 << 63), (1 << 63) - 1)
_UINT64_MAX = (1 << 64) - 1
_DIGITS = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01", 10: "0123456789"}


def _go_parse_int(text: str, signed: bool) -> int | None:
    """strconv.ParseInt(text, 0, 64) (signed) or strconv.ParseUint(text, 0, 64): a sign (ParseInt
    only), then 0x, 0o, 0b or a leading 0 (octal) picks the base; None where Go returns an error."""
    body, negative = text, False
    if signed and body[:1] in ("+", "-"):
        negative, body = body[0] == "-", body[1:]
    base = 10
    if len(body) > 1 and body[0] == "0":
        prefix = body[1].lower()
        base, body = {"x": (16, body[2:]), "o": (8, body[2:]), "b": (2, body[2:])}.get(prefix, (8, body[1:]))
    if not body or any(c not in _DIGITS[base] for c in body):
        return None
    if len(body.lstrip("0")) > 64:
        return None  # out of range in any base (and past what int() converts unasked)
    value = -int(body, base) if negative else int(body, base)
    low, high = _INT64 if signed else (0, _UINT64_MAX)
    return value if low <= value <= high else None


def _go_float(text: str) -> float | None:
    value = float(text)
    return None if math.isinf(value) else value  # strconv.ParseFloat: out of range is an error


def _v2_or_v3(text: str, words: dict[str, Any]) -> Any:
    """What go-yaml's resolve("", text) gives for a plain scalar, as a plain value; a timestamp
    stays its text (v2 decodes it into interface{} as the string; v3, and kyaml, keep the text)."""
    if text in words:
        return words[text]
    if not text or text[0] not in _NUMBER_START:
        if text[:1] == ".":
            return _go_float(text.replace("_", "")) if _DOT_FLOAT.fullmatch(text) else text
        return text
    if _TIMESTAMP.fullmatch(text):
        return text
    plain = text.replace("_", "")
    for signed in (True, False):
        number = _go_parse_int(plain, signed)
        if number is not None:
            return number
    if _YAML_STYLE_FLOAT.fullmatch(plain):
        value = _go_float(plain)
        if value is not None:
            return value
    return text  # the 0b and 0o branches after this read nothing ParseInt's base 0 did not


def v2_value(text: str) -> Any:
    """go-yaml v2's reading of a plain scalar (resolve.go): kubectl's, Argo CD's, kustomize's for a
    kustomization file."""
    return _v2_or_v3(text, _V2_WORDS)


def v3_value(text: str) -> Any:
    """go-yaml v3's reading of a plain scalar (resolve.go): kustomize's kyaml's."""
    return _v2_or_v3(text, _V3_WORDS)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string"


def same(a: Any, b: Any) -> bool:
    """Whether two plain scalar values are the same JSON value (1 and 1.0 are; true and 1 are not)."""
    if _kind(a) != _kind(b):
        return False
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, float) != isinstance(b, float) and isinstance(a, int | float):
        # An integer and a float64 are one number only where the float64 writes as that integer.
        number = a if isinstance(a, float) else b
        return number.is_integer() and abs(number) < 2**53 and bool(a == b)
    return bool(a == b)


def shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'the string "{value}"' if len(value) <= 40 else f"a string of {len(value)} characters"
    if isinstance(value, int) and value.bit_length() > 128:
        return f"a number of {value.bit_length()} bits"
    return f"the number {value!r}" if isinstance(value, float) and not value.is_integer() else f"the number {value:g}"


def value_dispute(text: str, ours: Any) -> str | None:
    """Why the plain scalar ``text``, which this function reads as ``ours``, is read otherwise by
    go-yaml, or None when every reader agrees."""
    if text == MERGE:
        return None
    v2, v3 = v2_value(text), v3_value(text)
    if same(ours, v2) and same(v2, v3):
        return None
    if same(ours, v2):
        return (
            f"go-yaml v2 (kubectl, Argo CD) reads it as {shown(v2)} and go-yaml v3 (kustomize's kyaml) as {shown(v3)}"
        )
    theirs = (
        f"go-yaml (kubectl, kustomize, Argo CD) as {shown(v2)}"
        if same(v2, v3)
        else f"go-yaml v2 (kubectl, Argo CD) as {shown(v2)} and go-yaml v3 (kustomize) as {shown(v3)}"
    )
    return f"PyYAML (YAML 1.1) reads it as {shown(ours)}, {theirs}"


def json_key(value: Any) -> str | None:
    """The name sigs.k8s.io/yaml gives a key go-yaml v2 read as ``value`` (yaml.go's
    convertToJSONableObject), or None where it refuses the key (null, an unsigned 64-bit integer)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if _INT64[0] <= value <= _INT64[1] else None
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return _format_float32_g(value)
    return value if isinstance(value, str) else None


def python_key(value: Any) -> str:
    """The name json.dumps gives the key this function read as ``value``."""
    if isinstance(value, bool) or value is None:
        return "true" if value else "false" if value is not None else "null"
    return str(value)


def _format_float32_g(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 32): the shortest digits that read back as the same
    float32, in %e form when the exponent is below -4 or at least 6 (ftoa.go's %g, shortest)."""
    single = struct.unpack("f", struct.pack("f", value))[0]
    if math.isinf(single):
        return "+Inf" if single > 0 else "-Inf"
    if single == 0:
        return "-0" if math.copysign(1, single) < 0 else "0"
    for precision in range(1, 10):
        digits = f"{abs(single):.{precision - 1}e}"
        if struct.unpack("f", struct.pack("f", float(digits)))[0] == abs(single):
            break
    mantissa, exponent = digits.split("e")
    sign = "-" if single < 0 else ""
    figures = mantissa.replace(".", "").rstrip("0") or "0"
    power = int(exponent)
    if power < -4 or power >= 6:
        body = figures[0] + ("." + figures[1:] if len(figures) > 1 else "")
        return f"{sign}{body}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if power < 0:
        return f"{sign}0.{'0' * (-power - 1)}{figures}"
    whole, fraction = figures[: power + 1], figures[power + 1 :]
    return f"{sign}{whole.ljust(power + 1, '0')}{'.' + fraction if fraction else ''}"


def key_dispute(text: str, ours: Any) -> str | None:
    """Why the plain mapping key ``text`` is not the same name to every reader: sigs.k8s.io/yaml
    writes a key go-yaml v2 reads as a number or boolean in its JSON form (``0x1F`` becomes "31",
    ``yes`` "true"), kyaml keeps the text, this function looks keys up by their text."""
    if text == MERGE:
        return None
    dispute = value_dispute(text, ours)
    if dispute is not None:
        return dispute
    v2 = v2_value(text)
    if isinstance(v2, str) or (text == json_key(v2) and text == python_key(ours)):
        return None
    written = json_key(v2) or "no name (it refuses the key)"
    return (
        f"as a key, sigs.k8s.io/yaml (kubectl, Argo CD) names it {written!r} (its JSON form), kustomize and "
        f"this function {text!r}"
    )
