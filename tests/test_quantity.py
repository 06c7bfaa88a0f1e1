"""``parse_quantity`` and ``Quantity.canonical`` against a table, and against kubectl's own ParseQuantity."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from trainjob_resources.kube.quantity import (
    FORMAT_ERROR,
    NUMERIC_ERROR,
    SUFFIX_ERROR,
    Quantity,
    QuantityError,
    parse_quantity,
    zero,
)

VALID = [
    ("1000m", "1"),
    ("1.5Gi", "1536Mi"),
    ("0.5", "500m"),
    (".5", "500m"),
    ("1e3", "1e3"),
    ("1E3", "1E3"),
    ("1e-3", "1e-3"),
    ("1e-2", "10e-3"),
    ("1e+3", "1e+3"),
    ("100M", "100M"),
    ("1000", "1k"),
    ("1024Ki", "1Mi"),
    ("1Ki", "1Ki"),
    ("8Ki", "8Ki"),
    ("1.5Ki", "1536"),
    ("0.1Ki", "102400m"),
    ("-0.5Ki", "-512"),
    ("1024Pi", "1Ei"),
    ("8Ei", "9223372036854775807"),
    ("-8Ei", "-9223372036854775807"),
    ("0.1m", "100u"),
    ("1n", "1n"),
    ("0.9n", "1n"),
    ("0.0000000001", "1n"),
    ("-1e-10", "-1e-9"),
    ("-0", "0"),
    ("0.0", "0"),
    ("0Ki", "0"),
    ("+1", "+1"),
    ("5.", "5."),
    ("1.G", "1.G"),
    ("007", "007"),
    ("1.500", "1.500"),
    ("1.Ki", "1.Ki"),
    ("+", "0"),
    (".", "0"),
    ("Ki", "0"),
    ("m", "0"),
    ("99999999999999999999999", "99999999999999999999999"),
    ("1000E", "1"),
    ("1e4294967296", "1e4294967296"),
    ("1e9223372036854775807", "100e-3"),
    ("10e2147483647", "10e2147483647"),
    ("1.5e-2147483648", "150e2147483646"),
    ("1" * 5000, "1" * 5000),
]

INVALID = [
    ("", FORMAT_ERROR),
    (" 1", FORMAT_ERROR),
    ("1 ", FORMAT_ERROR),
    ("\u0661\u0662", FORMAT_ERROR),
    ("1.0e+3Ki", FORMAT_ERROR),
    ("1KiB", FORMAT_ERROR),
    ("1.2.3", FORMAT_ERROR),
    ("1ki", SUFFIX_ERROR),
    ("1K", SUFFIX_ERROR),
    ("1e", SUFFIX_ERROR),
    ("1e+", SUFFIX_ERROR),
    ("1ee3", SUFFIX_ERROR),
    ("1e9223372036854775808", SUFFIX_ERROR),
    ("Ei", NUMERIC_ERROR),
    ("-.Ei", NUMERIC_ERROR),
]


@pytest.mark.parametrize(("raw", "canonical"), VALID)
def test_canonical(raw: str, canonical: str) -> None:
    assert parse_quantity(raw).canonical() == canonical


@pytest.mark.parametrize(("raw", "message"), INVALID)
def test_invalid(raw: str, message: str) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(raw)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        (1, "1"),
        (1000, "1k"),
        (-2, "-2"),
        (2**64 - 1, "18446744073709551615"),
        (10**20, "100E"),
        (0.5, "500m"),
        (1e3, "1k"),
        (1e-7, "100e-9"),
        (1e21, "1e+21"),
        (1.5e300, "1500e297"),
        (123456789.123, "123456789.123"),
        (-0.0, "0"),
    ],
)
def test_yaml_numbers(raw: float, canonical: str) -> None:
    assert parse_quantity(raw).canonical() == canonical


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (True, "must be a string or number"),
        (None, "must be a string or number"),
        ([1], "must be a string or number"),
        (float("nan"), "must be a finite number"),
        (float("inf"), "must be a finite number"),
        (10**400, "must be a finite number"),
    ],
)
def test_not_a_quantity(raw: object, message: str) -> None:
    with pytest.raises(QuantityError, match=message):
        parse_quantity(raw)


@pytest.mark.parametrize(
    ("smaller", "larger"),
    [("1", "2"), ("999m", "1"), ("1Gi", "1.1G"), ("-1", "0"), ("-2Ki", "-2k"), ("1n", "1e-8"), ("1e9", "1e2147483647")],
)
def test_ordering(smaller: str, larger: str) -> None:
    a, b = parse_quantity(smaller), parse_quantity(larger)
    assert a < b and a <= b and b > a and b >= a and a != b


@pytest.mark.parametrize(
    ("a", "b"), [("1", "1000m"), ("1Ki", "1024"), ("1e3", "1k"), ("0", "-0.0Mi"), ("1.5Gi", "1536Mi")]
)
def test_equality_and_hash(a: str, b: str) -> None:
    qa, qb = parse_quantity(a), parse_quantity(b)
    assert qa == qb and hash(qa) == hash(qb) and qa <= qb and qa >= qb


@pytest.mark.parametrize(
    ("terms", "total"),
    [
        (["1Gi", "512Mi"], "1536Mi"),
        (["100m", "900m"], "1"),
        (["1", "-1"], "0"),
        (["1e3", "1"], "1001"),
        (["500m", "1Gi"], "1073741824500m"),
    ],
)
def test_sum(terms: list[str], total: str) -> None:
    assert sum((parse_quantity(t) for t in terms), zero()).canonical() == total


@pytest.mark.parametrize(
    ("raw", "factor", "product"), [("1Gi", 3, "3Gi"), ("250m", 4, "1"), ("1", 0, "0"), ("2", -1, "-2")]
)
def test_multiply(raw: str, factor: int, product: str) -> None:
    assert (parse_quantity(raw) * factor).canonical() == product
    assert (factor * parse_quantity(raw)).canonical() == product


@pytest.mark.parametrize(
    ("raw", "integer", "negative"),
    [("1", True, False), ("1.5", False, False), ("1000m", True, False), ("-1Ki", True, True), ("1n", False, False)],
)
def test_predicates(raw: str, integer: bool, negative: bool) -> None:
    q = parse_quantity(raw)
    assert (q.is_integer(), q.is_negative()) == (integer, negative)


@pytest.mark.parametrize(
    ("raw", "scale", "value"),
    [
        ("1.5", 0, 2),
        ("-1.5", 0, -2),
        ("1", -3, 1000),
        ("1n", -3, 1),
        ("1n", 0, 1),
        ("9223372036854775807", 0, 2**63 - 1),
    ],
)
def test_scaled_value(raw: str, scale: int, value: int) -> None:
    assert parse_quantity(raw).scaled_value(scale) == value


@pytest.mark.parametrize("raw", ["9223372036854775808", "1e19", "1e2147483647"])
def test_scaled_value_overflow(raw: str) -> None:
    assert parse_quantity(raw).scaled_value(0) is None


def test_quantity_is_hashable_in_sets() -> None:
    assert len({parse_quantity(v) for v in ("1", "1000m", "1e0", "2")}) == 2
    assert Quantity(0) == zero()


def test_sum_of_magnitudes_too_far_apart_is_refused() -> None:
    with pytest.raises(QuantityError, match="too far apart"):
        _ = parse_quantity("1e2147483647") + parse_quantity("1")


# --- differential test against kubectl ----------------------------------------------------------------

SIGNS = ["", "+", "-"]
NUMBERS = [
    "0", "1", "5", "10", "100", "1000", "1024", "0.5", ".5", "5.", "1.5", "1.500", "007", "0.001", "123456789",
    "1234567890123456789", "999999999999999999", "1.23456789012", "0.0000000001", "12345678901234567890123456789",
]  # fmt: skip
SUFFIXES = [
    "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    "e3", "E3", "e-3", "e+3", "e0", "e-9", "e-10", "e18", "e19", "e21", "e-30",
]  # fmt: skip
HAND_PICKED = [
    # oddities that Kubernetes accepts
    "+", "-", ".", "+.", "-.", ".e3", ".Ki", "Ki", "Ti", "m", "k", "E", "e3", "0Ei", "0.Ei", "-0", "+0", "00",
    "0000000000000000000001", "1.", "1.G", "1.Ki", "003Ki", "-007", "1e-0", "1e00", "1e+3", "1e0003", "1000000E",
    # long and huge
    "1" + "0" * 100, "9" * 50, "1" * 5000, "1" * 5000 + "e-5000", "0." + "0" * 30 + "1", "1." + "1" * 40,
    "9" * 19 + "Ki", "9" * 30 + "Ei", "8Ei", "7Ei", "8191Pi", "9223372036854775807", "9223372036854775808",
    "18446744073709551616", "-9223372036854775808", "1e2147483647", "10e2147483647", "1.5e-2147483648",
    "1e4294967296", "1e9223372036854775807", "2147483647e2147483647", "5e2147483646", "1e-2147483", "1e-40",
    # tiny
    "1n", "0.5n", "0.1n", "0.0000000001", "0.9n", "1u", "10u", "0.1m", "-1e-10", "1e-9", "1e-10", "0.000001m",
    # invalid
    "", " 1", "1 ", " ", "1 Gi", "\t1", "1\n", "\u0661\u0662", "1\u0662", "\uff11", "\uff11Gi", "\u0663Mi",
    "1e\u0661", "\u22121", "1\u00a0", "\u00a01", "1ki", "1KI", "1K",
    "1mi", "1gi", "1GB", "1Gb", "1iB", "1b", "e", "1e", "1e+", "1e-", "1ee3", "1Ee3", "1e3e3", "1e3Ki", "1Ki3",
    "1.0e+3Ki", "1..2", "1.2.3", "..", "--1", "+-1", "1-", "1+", "Ei", "Pi", "+Ei", "-.Ei", ".Ei",
    "1e9223372036854775808", "1e99999999999999999999", "abc", "0x10", "1_000", "inf", "NaN", "1/2", "½",
    "1µ", "1μ", "1Mi ", "1E+", "1ti", "1pi", "1Kii", "1i", "1ie", "1KiKi", "1mm", "1kM", "1n1", "1e1.5", "1.5.Ki",
]  # fmt: skip


def corpus() -> list[str]:
    rng = random.Random(20240611)
    combos = ["".join(p) for p in itertools.product(SIGNS, NUMBERS, SUFFIXES)]
    values = HAND_PICKED + rng.sample(combos, 300)
    return list(dict.fromkeys(values))


def ours(value: str) -> tuple[bool, str]:
    try:
        return True, parse_quantity(value).canonical()
    except QuantityError as error:
        return False, str(error)


def kubectl_batch(kubectl: str, values: list[str]) -> dict[str, tuple[bool, str]]:
    """kubectl's verdict on each value; a batch that fails is split until each failure stands alone."""
    if not values:
        return {}
    hard = ",".join(f"q{i}={v}" for i, v in enumerate(values))
    done = subprocess.run(
        [kubectl, "create", "quota", "q", "--dry-run=client", "-o", "json", f"--hard={hard}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode == 0:
        got = json.loads(done.stdout)["spec"]["hard"]
        return {v: (True, got[f"q{i}"]) for i, v in enumerate(values)}
    if len(values) == 1:
        return {values[0]: (False, done.stderr.strip().removeprefix("error: "))}
    half = len(values) // 2
    return kubectl_batch(kubectl, values[:half]) | kubectl_batch(kubectl, values[half:])


@pytest.mark.kubectl
def test_quantity_matches_kubectl(kubectl: str) -> None:
    values = corpus()
    assert len(values) >= 300
    assert not any("," in v or "=" in v for v in values), "kubectl's --hard cannot carry these"
    predicted = {v: ours(v) for v in values}
    accepted = [v for v in values if predicted[v][0]]
    rejected = [v for v in values if not predicted[v][0]]
    assert len(rejected) > 50 and len(accepted) > 250
    with ThreadPoolExecutor(max_workers=4) as pool:
        verdicts = dict(kubectl_batch(kubectl, accepted))
        for result in pool.map(lambda v: kubectl_batch(kubectl, [v]), rejected):
            verdicts |= result
    mismatches = [(v, predicted[v], verdicts[v]) for v in values if predicted[v] != verdicts[v]]
    assert mismatches == []


@pytest.mark.kubectl
def test_yaml_numbers_match_kubectl(kubectl: str, tmp_path: Path) -> None:
    rng = random.Random(7)
    numbers: list[int | float] = [0, 1, -1, 1000, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**20, -(2**63) - 1]
    numbers += [0.5, 1e3, 1e-7, 1e-6, 1e21, 1e20, 1.5e300, 123456789.123, -0.0, 0.1e-10, 2.5e-5, 1 / 3]
    numbers += [rng.uniform(-1, 1) * 10 ** rng.randint(-15, 25) for _ in range(40)]
    limits = {f"example.com/r{i}": n for i, n in enumerate(numbers)}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": limits}}]},
    }
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod))
    out = subprocess.run(
        [kubectl, "set", "resources", "--local", "-f", str(path), "--requests=cpu=1", "-o", "json"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    got = json.loads(out)["spec"]["containers"][0]["resources"]["limits"]
    predicted = {k: parse_quantity(n).canonical() for k, n in limits.items()}
    mismatches = [(limits[k], predicted[k], got[k]) for k in limits if predicted[k] != got[k]]
    assert mismatches == []
