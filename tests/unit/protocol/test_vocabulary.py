"""protocol/vocabulary.py and protocol/events.py: the words, and a lean import."""

from __future__ import annotations

import subprocess
import sys

from coding_harness.protocol.vocabulary import SEARCH_ENGINES, search_engine_named


def test_engine_names_are_read_in_any_case_and_ddg_is_duckduckgo() -> None:
    assert search_engine_named("DDG") == "duckduckgo"
    assert search_engine_named("Brave") == "brave"
    assert [search_engine_named(name) for name in SEARCH_ENGINES] == list(SEARCH_ENGINES)
    assert search_engine_named("bing") is None
    assert search_engine_named(" exa") is None  # the caller strips, as the config does not


def test_the_wire_records_load_without_typing_or_dataclasses() -> None:
    """Both are on the one-shot path (tests/unit/test_imports.py says why that matters)."""
    probe = (
        "import sys\n"
        "from coding_harness.protocol import events, vocabulary\n"
        "print(sorted(m for m in ('typing', 'dataclasses') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
