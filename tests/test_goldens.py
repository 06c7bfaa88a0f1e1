"""Every golden case: exact output for successes; exact results, exit 1 and no lost item for errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.goldens import cases, results_text, run_function
from tests.kit.golden import assert_golden


@pytest.mark.parametrize("case", cases("success"), ids=lambda p: p.name)
def test_success_case(case: Path) -> None:
    code, out, err = run_function((case / "input.yaml").read_bytes())
    assert code == 0, err
    assert_golden(case / "expected.yaml", out.decode())


@pytest.mark.parametrize("case", cases("success"), ids=lambda p: p.name)
def test_success_case_is_a_fixed_point(case: Path) -> None:
    code, once, _ = run_function((case / "input.yaml").read_bytes())
    again = yaml.safe_load(once)
    again.pop("results", None)
    code, twice, err = run_function(yaml.safe_dump(again, sort_keys=False).encode())
    assert code == 0, err
    assert yaml.safe_load(twice)["items"] == yaml.safe_load(once)["items"]


@pytest.mark.parametrize("case", cases("error"), ids=lambda p: p.name)
def test_error_case(case: Path) -> None:
    data = (case / "input.yaml").read_bytes()
    code, out, err = run_function(data)
    assert code == 1
    assert "Traceback" not in err
    assert_golden(case / "results.yaml", results_text(out))
    assert_golden(case / "stderr.txt", err)
    expected = yaml.safe_load((case / "results.yaml").read_text())
    assert any(r["severity"] == "error" for r in expected)
    items_in = yaml.safe_load(data).get("items") or []
    items_out = yaml.safe_load(out).get("items") or []
    failing = {r["resourceRef"]["name"] for r in expected if r["severity"] == "error" and "resourceRef" in r}
    for item in items_in:
        if item.get("kind") == "TrainJob" and item["metadata"]["name"] in failing:
            assert item in items_out, f"TrainJob {item['metadata']['name']} was not returned as written"
    assert len(items_out) >= len(items_in), "no input item may be dropped"
