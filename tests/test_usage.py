"""The top-level help is generated from its declarations (issue 47): ``main.USAGE`` is the text
``cli/usage.py`` makes of the parsers, ``cli/formats.py``, ``FunctionConfig`` and ``ROLES``, so a new
option, format, functionConfig option or role that is not in it fails here; ``--update-goldens``
(``make goldens``) rewrites it in main.py. docs/config.md's option table and role list are checked
against the same declarations (tests/options_doc.py writes the table), and the roles table of
docs/explain-and-policy.md."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from trainjob_resources.cli import main
from trainjob_resources.cli.usage import OPTION_EXAMPLES, usage
from trainjob_resources.options import config as config_module
from trainjob_resources.options.config import FunctionConfig, parse_config
from trainjob_resources.options.options import CONFIG_API_VERSION, CONFIG_KIND, ROLES
from trainjob_resources.rules.max_per_role import ROLE_MEANING

from tests.kit.golden import rewritten, updating

ROOT = Path(__file__).parents[1]
MAIN = Path(main.__file__)
BLOCK = re.compile(r'(# BEGIN USAGE\nUSAGE = """\\\n)(.*?)("""\n# END USAGE\n)', re.DOTALL)


def test_usage_is_generated_from_the_declarations() -> None:
    generated = usage(main.DOCS_URL)
    if updating():
        text = MAIN.read_text()
        new = BLOCK.sub(lambda m: m.group(1) + generated.replace("\\", "\\\\") + m.group(3), text)
        if new != text:
            MAIN.write_text(new)
            rewritten.append(MAIN)
        return
    assert generated == main.USAGE, "cli/main.py's USAGE drifted from its declarations: `make goldens` rewrites it"


def test_the_usage_examples_of_options_are_accepted() -> None:
    document = {"apiVersion": CONFIG_API_VERSION, "kind": CONFIG_KIND, "metadata": {"name": "x"}}
    config = parse_config({**document, "spec": dict(OPTION_EXAMPLES)})
    assert config.max_per_role == {"sidecar": {"memory": "64Gi"}}
    assert set(OPTION_EXAMPLES) <= {f.alias for f in FunctionConfig.model_fields.values()}


def test_every_option_has_a_description() -> None:
    assert list(config_module._DESCRIPTIONS) == [f.alias for f in FunctionConfig.model_fields.values()]


def _config_table() -> dict[str, list[str]]:
    """docs/config.md's option table: option -> its rows' value cells."""
    text = (ROOT / "docs" / "config.md").read_text()
    rows: dict[str, list[str]] = {}
    option = ""
    for line in text.split("| option | values | meaning |", 1)[1].split("\n<!--", 1)[0].splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        option = cells[0].strip("`") or option
        rows.setdefault(option, []).append(cells[1])
    return rows


def test_the_docs_option_table_lists_every_option_its_values_and_default() -> None:
    rows = _config_table()
    assert list(rows) == [f.alias for f in FunctionConfig.model_fields.values()]
    for name, field in FunctionConfig.model_fields.items():
        values = [True, False] if field.annotation is bool else list(typing.get_args(field.annotation))
        cells = " ".join(rows[field.alias or name])
        if values and all(isinstance(v, str | bool) for v in values):
            shown = [str(v).lower() if isinstance(v, bool) else v for v in values]
            for value in shown:
                assert f"`{value}`" in cells, (field.alias, value)
            default = str(field.default).lower() if isinstance(field.default, bool) else field.default
            assert f"`{default}` (default)" in cells, (field.alias, default)


def test_the_roles_are_named_alike_everywhere() -> None:
    assert tuple(ROLE_MEANING) == ROLES
    assert f"per role ({', '.join(ROLES)})" in config_module._DESCRIPTIONS["maxPerRole"]
    text = (ROOT / "docs" / "explain-and-policy.md").read_text()
    table = text.split("| role | the containers |\n| --- | --- |\n", 1)[1].split("\n\n", 1)[0]
    assert tuple(re.findall(r"^\| `(\w+)` \|", table, re.MULTILINE)) == ROLES, "docs/explain-and-policy.md's roles"
