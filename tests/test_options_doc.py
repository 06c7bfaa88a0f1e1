"""The option tables of docs/config.md and docs/hardening.md, and the synopses of the commands in docs, are
written from their declarations (tests/options_doc.py): a page whose block differs is stale, and every
declaration the tables read covers every option and value."""

from __future__ import annotations

import pytest
from trainjob_resources.options import config, config_layers

from tests.options_doc import RUN, TABLES, choices, options, rewritten


@pytest.mark.parametrize("name", TABLES)
def test_the_block_is_written_from_its_declaration(name: str) -> None:
    path, text = rewritten(name)
    assert path.read_text() == text, f"{path.name}'s {name} is stale: run `{RUN}` (or make goldens)"


def test_each_value_meaning_names_exactly_its_option_s_values() -> None:
    fields = options()
    for option, meanings in config.VALUE_MEANINGS.items():
        assert sorted(meanings) == sorted(choices(fields[option])), option


def test_every_option_a_tenant_may_set_says_what_its_other_value_does() -> None:
    decided = [*config_layers.POLICY_OPTIONS, *config_layers.TENANT_OPTIONS]
    assert sorted(config_layers.TENANT_VALUE) == sorted(decided)
    assert sorted(config_layers._PLATFORM_WHY) == sorted(config_layers.PLATFORM_OPTIONS)
