"""The help texts stand alone: the commands, their options, every functionConfig option, an example
and where the docs are; bare `trainjob-resources` on a terminal says what it expects."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest
from trainjob_resources.cli.main import DOCS_URL, USAGE, main
from trainjob_resources.options.config import FunctionConfig


def test_the_top_level_help_lists_commands_options_config_example_and_docs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out == USAGE
    for option in ("--config FILE", "--config-from-env", "--namespace NS", "-v", "--format table|json|markdown"):
        assert option in out, option
    for name, field in FunctionConfig.model_fields.items():
        assert f"    {field.alias or name}:" in out, f"functionConfig option {field.alias or name} is not in --help"
    assert "Examples:" in out and "trainjob-resources render " in out
    assert DOCS_URL in out and "See README.md" not in out


def test_the_docs_url_is_the_projects() -> None:
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["urls"]["Source"] == DOCS_URL


def test_bare_command_on_a_terminal_prints_usage_instead_of_waiting() -> None:
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "trainjob_resources"],
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 2
    assert done.stderr.startswith("trainjob-resources: expected a ResourceList on stdin (not a terminal)")
    assert done.stdout == ""


def test_metadata_yaml_has_the_kpt_function_catalogs_fields_and_points_at_what_exists() -> None:
    """The catalog's schema (metadata-schema.json of kptdev/krm-functions-catalog): image without a tag,
    a description, allowed tags, sourceURL, examplePackageURLs into the repository, license; nothing else."""
    import tomllib
    from pathlib import Path

    import yaml

    from tests.examples import IMAGE

    root = Path(__file__).parents[1]
    metadata = yaml.safe_load((root / "metadata.yaml").read_text())
    assert set(metadata) <= {"image", "description", "tags", "sourceURL", "examplePackageURLs", "license", "hidden"}
    assert {"image", "description", "tags"} <= set(metadata)
    assert metadata["image"] == IMAGE.rsplit(":", 1)[0]
    allowed = {"mutator", "validator", "generator", "viewer", "test", "testing", "timing", "name prefix", "name suffix"}
    assert metadata["tags"] and set(metadata["tags"]) <= allowed
    assert metadata["sourceURL"] == DOCS_URL
    for url in metadata["examplePackageURLs"]:
        prefix = f"{DOCS_URL}/tree/main/"
        assert url.startswith(prefix)
        assert (root / url.removeprefix(prefix) / "Kptfile").is_file(), url
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    assert metadata["license"] == pyproject["project"]["license"]["text"]
