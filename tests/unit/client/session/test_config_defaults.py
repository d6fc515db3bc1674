"""The config keys `quiet`, `plain` and `debug` are defaults for -q, --plain and
--debug (issue 11, item 7): read from the same files as the daemon, the last file
that sets a key wins, a bad value or file is skipped, and a flag is never undone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coding_harness.client.args import parse_oneshot
from coding_harness.client.session import config_defaults, setup
from coding_harness.client.session.config_defaults import apply_defaults, output_defaults


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_each_key_sets_its_flag(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    _write(home / ".coding_harness.json", {"quiet": True, "plain": True, "debug": True})
    options = parse_oneshot(["-p", "hi"])
    apply_defaults(options, home, cwd)
    assert (options.quiet, options.plain, options.debug) == (True, True, True)


def test_the_project_file_and_then_the_legacy_file_win(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    _write(home / ".coding_harness.json", {"quiet": True, "plain": True, "debug": True})
    _write(cwd / ".local_coding_harness.json", {"quiet": False, "plain": False})
    _write(home / ".config" / "coding-agent" / "config.json", {"plain": True})
    assert output_defaults(home, cwd) == {"quiet": False, "plain": True, "debug": True}


def test_a_false_key_leaves_the_flag_given(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _write(home / ".coding_harness.json", {"quiet": False, "plain": False})
    options = parse_oneshot(["-q", "--plain", "-p", "hi"])
    apply_defaults(options, home, tmp_path)
    assert (options.quiet, options.plain, options.debug) == (True, True, False)


def test_bad_values_and_bad_files_are_skipped(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    _write(home / ".coding_harness.json", {"quiet": "yes", "debug": 1, "plain": True})
    cwd.mkdir()
    (cwd / ".local_coding_harness.json").write_bytes(b"\xff{not json")
    _write(home / ".config" / "coding-agent" / "config.json", [1, 2])
    assert output_defaults(home, cwd) == {"plain": True}
    assert output_defaults(tmp_path / "nobody", cwd) == {}


def test_a_one_shot_reads_each_config_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The output defaults and the key variables sent with the session come from one read."""
    home, cwd = tmp_path / "home", tmp_path / "proj"
    profile = {"type": "openai", "model": "m", "api_key_env": "MY_KEY"}
    _write(home / ".coding_harness.json", {"quiet": True, "providers": {"p": profile}})
    reads: list[Path] = []
    real_read = config_defaults._read

    def counted(path: Path) -> dict[str, object]:
        reads.append(path)
        return real_read(path)

    monkeypatch.setattr(config_defaults, "_read", counted)
    monkeypatch.setenv("HOME", str(home))  # where the session's key names are read
    options = parse_oneshot(["-p", "hi", "--cwd", str(cwd)])
    apply_defaults(options, home, cwd)
    names = setup._own_keys(options)
    assert options.quiet and "MY_KEY" in names
    assert len(reads) == len(set(reads)) == 3  # global, project, legacy: once each


def test_a_projects_debug_never_turns_the_debug_log_on(tmp_path: Path) -> None:
    """The debug log is the user's switch: a repository's file, trusted or not, cannot
    set it (issue 25, item 6); its quiet and plain still apply."""
    home, cwd = tmp_path / "home", tmp_path / "proj"
    _write(cwd / ".local_coding_harness.json", {"debug": True, "quiet": True})
    options = parse_oneshot(["-p", "hi"])
    apply_defaults(options, home, cwd)
    assert (options.quiet, options.debug) == (True, False)
    other = tmp_path / "other"  # a new folder: the one-shot's scan is kept per folder
    _write(home / ".coding_harness.json", {"debug": True})
    _write(other / ".local_coding_harness.json", {"debug": False})
    assert output_defaults(home, other)["debug"] is True  # nor can it turn the user's off


def test_a_symlinked_project_file_is_not_read(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    _write(tmp_path / "elsewhere.json", {"quiet": True, "plain": True})
    cwd.mkdir()
    (cwd / ".local_coding_harness.json").symlink_to(tmp_path / "elsewhere.json")
    assert output_defaults(home, cwd) == {}
