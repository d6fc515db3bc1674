"""The client offers the words protocol/vocabulary.py holds, and no copies of its own."""

from __future__ import annotations

import io
from typing import Any

from coding_harness.client.render.style import INTENT_COLORS, Style
from coding_harness.client.repl.completer import SEARCH_CHOICES
from coding_harness.client.repl.slash_commands import SlashCommands
from coding_harness.protocol.vocabulary import ROUTES, SEARCH_ENGINES, SEARCH_OFF


def test_every_route_has_its_colour() -> None:
    assert set(INTENT_COLORS) == set(ROUTES)


def test_search_offers_each_engine_and_off() -> None:
    assert (*SEARCH_ENGINES, SEARCH_OFF) == SEARCH_CHOICES


def test_help_names_the_routes_and_the_engines(capsys: Any) -> None:
    conn: Any = object()  # /help asks the daemon nothing
    SlashCommands(conn, "s-1", Style(io.StringIO())).handle("/help")
    shown = capsys.readouterr().out
    assert f"/intent {'|'.join(ROUTES)} TEXT" in shown
    assert f"/search [{'|'.join(SEARCH_ENGINES)}|{SEARCH_OFF}]" in shown
