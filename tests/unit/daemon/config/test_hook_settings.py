"""The `hooks` section: both forms, matchers, time limits, bad entries, files and trust."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coding_harness.daemon.config.hook_settings import (
    DEFAULT_TIMEOUT,
    HookSettings,
    HookSpec,
    parse_hooks,
)
from coding_harness.daemon.config.loader import load_config
from coding_harness.protocol import trust
from coding_harness.protocol.config_files import GLOBAL_CONFIG_NAME, PROJECT_CONFIG_NAME

USER_FILE = "~/.coding_harness.json"


@dataclass
class FakeLayer:
    data: dict[str, Any]
    origin: str = USER_FILE
    raw: bytes = field(default=b"")


def parse(hooks: Any) -> tuple[HookSettings, list[str]]:
    problems: list[str] = []
    return parse_hooks([FakeLayer({"hooks": hooks})], problems), problems


def test_the_short_form_is_read() -> None:
    settings, problems = parse(
        {
            "PreToolUse": [{"matcher": "run_shell|propose_edit", "command": "check.sh"}],
            "UserPromptSubmit": [{"command": "prompt.sh", "timeout": 5}],
        }
    )
    assert problems == []
    assert settings.around_tools
    assert not parse({"Stop": [{"command": "stop.sh"}]})[0].around_tools
    assert settings.hooks == (
        HookSpec(event="PreToolUse", command="check.sh", matcher="run_shell|propose_edit",
                 origin=USER_FILE),
        HookSpec(event="UserPromptSubmit", command="prompt.sh", timeout=5.0, origin=USER_FILE),
    )  # fmt: skip


def test_claude_codes_nested_form_is_read() -> None:
    nested = {
        "PostToolUse": [
            {
                "matcher": "write_file",
                "hooks": [
                    {"type": "command", "command": "fmt.sh", "timeout": 30},
                    {"type": "command", "command": "lint.sh"},
                ],
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}],
    }
    settings, problems = parse(nested)
    assert problems == []
    assert [(h.event, h.matcher, h.command, h.timeout) for h in settings.hooks] == [
        ("PostToolUse", "write_file", "fmt.sh", 30.0),
        ("PostToolUse", "write_file", "lint.sh", DEFAULT_TIMEOUT),
        ("Stop", "", "stop.sh", DEFAULT_TIMEOUT),
    ]


def test_a_matcher_must_match_the_whole_tool_name() -> None:
    settings, _ = parse(
        {
            "PreToolUse": [
                {"matcher": "run_shell|propose_edit", "command": "a"},
                {"matcher": "*", "command": "b"},
                {"matcher": "", "command": "c"},
                {"command": "d"},
                {"matcher": "mcp__.*", "command": "e"},
            ]
        }
    )

    def commands(tool: str) -> list[str]:
        return [h.command for h in settings.for_event("PreToolUse", tool)]

    assert commands("run_shell") == ["a", "b", "c", "d"]
    assert commands("propose_edit") == ["a", "b", "c", "d"]
    assert commands("run_shell_x") == ["b", "c", "d"]  # not a prefix match
    assert commands("mcp__git__commit") == ["b", "c", "d", "e"]
    assert settings.for_event("PostToolUse", "run_shell") == []


def test_claude_codes_tool_names_match_the_tools_that_do_the_same_job() -> None:
    settings, _ = parse(
        {
            "PreToolUse": [
                {"matcher": "Bash", "command": "a"},
                {"matcher": "Edit|Write", "command": "b"},
            ]
        }
    )

    def commands(tool: str) -> list[str]:
        return [h.command for h in settings.for_event("PreToolUse", tool)]

    assert commands("run_shell") == ["a"]
    assert commands("propose_edit") == commands("replace_text") == commands("write_file") == ["b"]
    assert commands("read_file") == [] and commands("Bash") == ["a"]


def test_bad_entries_are_named_and_left_out() -> None:
    settings, problems = parse(
        {
            "PreToolUse": [
                {"matcher": "(", "command": "x"},
                {"command": ""},
                {"command": "slow", "timeout": 0},
                {"command": "nan", "timeout": float("nan")},
                "just a string",
                {"matcher": "run_shell", "hooks": [{"type": "prompt", "prompt": "?"}]},
                {"command": "good"},
            ],
            "OnSave": [{"command": "x"}],
            "Stop": {"command": "x"},
        }
    )
    assert [h.command for h in settings.hooks] == ["good"]
    assert len(problems) == 8
    assert problems[0].startswith(f"{USER_FILE}: hooks.PreToolUse[0] has a matcher that is not")
    assert "hooks.PreToolUse[1] needs a command" in problems[1]
    assert "hooks.PreToolUse[2] has a timeout" in problems[2]
    assert "hooks.PreToolUse[3] has a timeout" in problems[3]
    assert "hooks.PreToolUse[5].hooks[0] has type 'prompt'" in problems[5]
    assert "hooks.OnSave is not a hook event" in problems[6]
    assert "hooks.Stop must be a list" in problems[7]
    _, problems = parse(["PreToolUse"])
    assert problems == [f"{USER_FILE}: hooks must be an object of event names; it was ignored"]


def _files(tmp_path: Path, user: dict[str, Any], project: dict[str, Any]) -> tuple[Path, Path]:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    (home / GLOBAL_CONFIG_NAME).write_text(json.dumps(user))
    (cwd / PROJECT_CONFIG_NAME).write_text(json.dumps(project))
    return home, cwd


def test_an_untrusted_projects_hooks_are_held_back_and_trusted_ones_added(tmp_path: Path) -> None:
    user = {"hooks": {"PreToolUse": [{"command": "mine.sh"}]}}
    project = {"hooks": {"PreToolUse": [{"command": "theirs.sh"}]}}
    home, cwd = _files(tmp_path, user, project)
    store = tmp_path / "trusted.json"
    config = load_config(home, cwd, trust_store=store)
    assert [h.command for h in config.hooks.hooks] == ["mine.sh"]
    assert "hooks.PreToolUse" in config.untrusted
    project_file = cwd / PROJECT_CONFIG_NAME
    trust.record(store, project_file, project_file.read_bytes())
    config = load_config(home, cwd, trust_store=store)
    assert [h.command for h in config.hooks.hooks] == ["mine.sh", "theirs.sh"]
    assert config.hooks.hooks[1].origin == str(project_file)
