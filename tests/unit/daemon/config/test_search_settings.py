"""The `search` section: naming an engine turns search on for the general route."""

from __future__ import annotations

import json
from pathlib import Path

from coding_harness.daemon.config.loader import load_config

Dirs = tuple[Path, Path]


def write_global(home: Path, data: object) -> None:
    (home / ".coding_harness.json").write_text(json.dumps(data))


def test_without_a_search_section_search_is_off(dirs: Dirs) -> None:
    write_global(dirs[0], {"providers": {"p": {"type": "openai", "model": "m"}}})
    assert load_config(*dirs).search.enabled is False


def test_a_search_section_naming_an_engine_turns_search_on(dirs: Dirs) -> None:
    write_global(dirs[0], {"search": {"engine": "brave"}})
    search = load_config(*dirs).search
    assert (search.engine, search.enabled) == ("brave", True)


def test_an_explicit_enabled_false_keeps_it_off(dirs: Dirs) -> None:
    write_global(dirs[0], {"search": {"engine": "exa", "enabled": False}})
    search = load_config(*dirs).search
    assert (search.engine, search.enabled) == ("exa", False)


def test_a_bad_enabled_value_is_reported_and_off(dirs: Dirs) -> None:
    write_global(dirs[0], {"search": {"engine": "brave", "enabled": "yes"}})
    config = load_config(*dirs)
    assert config.search.enabled is False
    assert any("search.enabled" in problem for problem in config.problems)


def test_an_untrusted_project_cannot_turn_search_on(dirs: Dirs, tmp_path: Path) -> None:
    home, cwd = dirs
    (cwd / ".local_coding_harness.json").write_text(json.dumps({"search": {"engine": "brave"}}))
    config = load_config(home, cwd, trust_store=tmp_path / "trust.json")
    assert config.search.enabled is False
    assert any("search" in problem and "harness trust" in problem for problem in config.problems)
