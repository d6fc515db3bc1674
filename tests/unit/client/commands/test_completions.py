"""`harness completions SHELL`: scripts for bash, zsh and fish that complete subcommands,
every flag and `--provider` values; run in the real shells where they are installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coding_harness.client.commands.completions import flags, main, values

HARNESS = f'harness() {{ "{sys.executable}" -m coding_harness.client "$@"; }}'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME with two providers configured and no daemon to ask."""
    config = {"providers": {"alpha": {"model": "a-1"}, "beta": {"model": "b:7b"}}}
    (tmp_path / ".coding_harness.json").write_text(json.dumps(config))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CODING_HARNESS_SOCKET", str(tmp_path / "no-daemon.sock"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def script(shell: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main([shell]) == 0
    return capsys.readouterr().out


def test_an_unknown_shell_or_no_shell_exits_5(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tcsh"]) == 5
    assert "unknown shell 'tcsh'" in capsys.readouterr().err
    assert main([]) == 5
    assert main(["bash", "zsh"]) == 5


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_flag_and_subcommand_is_in_the_script(
    shell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = script(shell, capsys)
    for flag in flags():
        for name in flag.names:
            spelled = name if shell != "fish" else name.lstrip("-")
            assert spelled in text, name
    for word in ("sessions", "attach", "approve", "trust", "doctor", "completions", "uninstall"):
        assert word in text
    assert "completions --values" in text and "_harness_values provider" in text


def test_values_come_from_the_config_without_a_daemon(home: Path) -> None:
    assert values("provider") == ["alpha", "beta", "local"]
    assert values("model") == ["a-1", "b:7b"]
    assert values("session") == []


def complete_in_bash(line: str, text: str) -> list[str]:
    words = line.split(" ")
    program = (
        f"{HARNESS}\n{text}\nCOMP_WORDS=({' '.join(repr(w) for w in words)}); "
        f"COMP_CWORD={len(words) - 1}; _harness; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_bash_completes_subcommands_flags_and_providers(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = script("bash", capsys)
    assert complete_in_bash("harness da", text) == ["daemon"]
    assert "uninstall" in complete_in_bash("harness daemon ", text)
    assert complete_in_bash("harness daemon logs -", text) == ["-n", "-f"]
    assert complete_in_bash("harness --output-f", text) == ["--output-format"]
    assert complete_in_bash("harness --output-format s", text) == ["stream-json"]
    assert complete_in_bash("harness --provider ", text) == ["alpha", "beta", "local"]
    assert complete_in_bash("harness completions z", text) == ["zsh"]


def test_bash_completes_the_mcp_actions(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = script("bash", capsys)
    assert complete_in_bash("harness mc", text) == ["mcp"]
    assert complete_in_bash("harness mcp ", text) == ["list", "restart"]
    assert complete_in_bash("harness mcp r", text) == ["restart"]
    assert complete_in_bash("harness mcp restart ", text) == []


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_script_parses(capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["zsh", "-n"], input=script("zsh", capsys), text=True, check=True)


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_subcommands_flags_and_providers(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / "harness.fish"
    path.write_text(script("fish", capsys))
    define = f"function harness; {sys.executable} -m coding_harness.client $argv; end"

    def complete(line: str) -> list[str]:
        command = f"{define}; source {path}; complete -C '{line}'"
        done = subprocess.run(["fish", "-c", command], capture_output=True, text=True, check=True)
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert complete("harness da") == ["daemon"]
    assert complete("harness --provider ") == ["alpha", "beta", "local"]
    assert "stream-json" in complete("harness --output-format ")
    assert complete("harness mcp ") == ["list", "restart"]


def test_a_project_file_is_read_only_when_it_is_no_link(
    home: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / ".local_coding_harness.json"
    elsewhere.write_text(json.dumps({"providers": {"gamma": {"model": "g-1"}}}))
    (home / ".local_coding_harness.json").symlink_to(elsewhere)
    assert values("provider") == ["alpha", "beta", "local"]
    (home / ".local_coding_harness.json").unlink()
    (home / ".local_coding_harness.json").write_bytes(elsewhere.read_bytes())
    assert values("provider") == ["alpha", "beta", "gamma", "local"]
