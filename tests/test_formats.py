"""One renderer registry for every output format (issue 47): each command's ``--format`` or
``--output`` choices are exactly the formats ``cli/formats.py`` declares for it, and each declared
format names a function that exists. ``render --results`` takes the functionConfig's ``results``
values (``report/reporting.py``)."""

from __future__ import annotations

import argparse
import typing

import pytest
from trainjob_resources.cli import check, explain, formats, render
from trainjob_resources.options.config import FunctionConfig
from trainjob_resources.report.reporting import RESULTS_OPTIONS

PARSERS = {"render": render._parser, "explain": explain._parser, "check": check._parser}
# command -> (parser, option) whose choices select its renderer
SELECTED_BY = {
    "render": ("render", "--output"),
    "explain": ("explain", "--format"),
    "explain --against": ("explain", "--format"),
    "check": ("check", "--format"),
}


def choices_of(parser: argparse.ArgumentParser, option: str) -> tuple[str, ...]:
    (action,) = [a for a in parser._actions if option in a.option_strings]
    assert action.choices is not None, option
    return tuple(action.choices)


@pytest.mark.parametrize("command", sorted(SELECTED_BY))
def test_every_choice_has_a_renderer_and_every_renderer_a_choice(command: str) -> None:
    parser_name, option = SELECTED_BY[command]
    assert choices_of(PARSERS[parser_name](), option) == tuple(formats.RENDERERS[command])
    for name in formats.RENDERERS[command]:
        assert callable(formats.renderer(command, name)), (command, name)


def test_every_command_with_renderers_is_tied_to_an_option() -> None:
    assert set(formats.RENDERERS) == set(SELECTED_BY)


def test_every_format_option_of_a_parser_is_in_the_registry() -> None:
    """A new ``--format``-like option (one with choices naming formats) must come with renderers."""
    for name, parser in PARSERS.items():
        for action in parser()._actions:
            if {"--format", "--output"} & set(action.option_strings):
                assert (name, action.option_strings[0]) in SELECTED_BY.values(), (name, action.option_strings)


def test_render_results_choices_are_the_config_options_results() -> None:
    assert choices_of(render._parser(), "--results") == RESULTS_OPTIONS
    assert set(typing.get_args(FunctionConfig.model_fields["results"].annotation)) == set(RESULTS_OPTIONS)
