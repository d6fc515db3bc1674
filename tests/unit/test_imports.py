"""The one-shot path stays lean; imports point client -> protocol <- daemon."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "prompt_toolkit",
    "rich",
    "httpx",
    "jsonrpcserver",
    "acp",
    "mcp",
    "pydantic",
    "coding_harness.daemon",
    "coding_harness.client.acp",
    "aiohttp",
    "segno",
    "coding_harness.client.web",
)
LEAN = (
    "coding_harness.client.cli",
    "coding_harness.client.commands.oneshot",
    "coding_harness.client.render.views",
    "coding_harness.client.render.plain_view",
    "coding_harness.client.render.printer",
    "coding_harness.client.render.diff_lines",
    "coding_harness.client.render.tool_line",
    "coding_harness.client.session.approval_prompt",
    "coding_harness.client.service.daemon_control",
    "coding_harness.client.commands.sessions_list",
    "coding_harness.client.commands.completions",
    "coding_harness.client.commands.completion_scripts",
)


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return list(ast.literal_eval(out.stdout.strip()))


def test_oneshot_path_imports_nothing_heavy() -> None:
    assert loaded_after("\n".join(f"import {module}" for module in LEAN)) == []


def test_the_daemon_loads_the_mcp_sdk_only_when_a_server_starts() -> None:
    """A daemon with no MCP server configured never pays for the SDK's imports (~1 s)."""
    probe = (
        "import sys\n"
        "import coding_harness.daemon.app, coding_harness.daemon.methods.mcp_methods\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ast.literal_eval(out.stdout.strip()) == []


def test_the_daemon_leaves_httpx_command_line_tool_alone() -> None:
    """httpx's CLI pulls in click, rich and pygments: a sixth of every daemon start."""
    probe = (
        "import sys\n"
        "import coding_harness.daemon.cli, httpx\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'rich', 'pygments')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ast.literal_eval(out.stdout.strip()) == []


# Modules a one-shot run does without (issue 11 item 16): `socket` (its enum set-up;
# `_socket` serves), argparse (`_fast_parse`), subprocess and the launcher (only to
# start a daemon), `json` (its three modules compile six patterns; `json_text` uses
# `_json` itself), `select` (reads wait with a socket timeout) and `typing`.
AVOIDED = (
    "socket",
    "selectors",
    "select",
    "argparse",
    "subprocess",
    "dataclasses",
    "inspect",
    "json",
    "typing",
    "collections.abc",
    "coding_harness.client.session.launcher",
)


def test_the_oneshot_path_does_without_slow_standard_modules() -> None:
    probe = (
        "import sys\n"
        "from coding_harness.client import cli\n"
        "from coding_harness.client.commands import oneshot\n"
        "from coding_harness.client.session import setup, config_defaults, turn_driver\n"
        "from coding_harness.client.render import printer, views, plain_view, sanitize\n"
        "from coding_harness.client.args import parse_oneshot\n"
        "parse_oneshot(['-q', '-p', 'hi'])\n"
        "sanitize.visible('ok')\n"
        f"print(sorted(m for m in sys.modules if m in {AVOIDED!r}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ast.literal_eval(out.stdout.strip()) == []


def test_the_session_request_goes_out_before_the_output_modules_load() -> None:
    """They load while the daemon opens the session (client/commands/oneshot.py)."""
    probe = (
        "import sys\n"
        "from coding_harness.client import cli\n"
        "from coding_harness.client.commands import oneshot\n"
        "print(sorted(m for m in sys.modules if m.startswith('coding_harness.client.')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = {m.rsplit(".", 1)[1] for m in ast.literal_eval(out.stdout.strip())}
    assert not loaded & {"style", "sanitize", "version_skew", "printer", "turn_driver", "views"}


# One-shot modules that import typing for the type checker only (`TYPE_CHECKING =
# False`): typing costs a run ~3 ms, saved once every module on the path does this.
TYPING_FREE = (
    "client/args.py",
    "client/failures.py",
    "client/commands/oneshot.py",
    "client/render/plain_view.py",
    "client/render/printer.py",
    "client/render/sanitize.py",
    "client/session/setup.py",
    "client/render/style.py",
    "client/session/turn_driver.py",
    "client/session/version_skew.py",
    "client/render/views.py",
    "protocol/methods.py",
    "protocol/client.py",
    "protocol/config_files.py",
    "protocol/errors.py",
    "protocol/events.py",
    "protocol/framing.py",
    "protocol/history_pages.py",
    "protocol/paths.py",
    "protocol/vocabulary.py",
)


@pytest.mark.parametrize("name", TYPING_FREE)
def test_oneshot_modules_import_typing_for_the_type_checker_only(name: str) -> None:
    tree = ast.parse((ROOT / name).read_text())
    runtime = [
        node
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        and "typing"
        in ([node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names])
    ]
    assert runtime == [], f"{name} imports typing at run time, line {runtime[0].lineno}"


def test_a_whole_oneshot_run_never_loads_typing() -> None:
    code = (
        "from coding_harness.client import cli\n"
        "from coding_harness.client.commands import oneshot\n"
        "from coding_harness.client.render import printer, views, plain_view\n"
        "from coding_harness.client.session import setup, turn_driver\n"
        "from coding_harness.client.args import parse_oneshot\n"
        "parse_oneshot(['-q', '-p', 'hi'])\n"
        "print('typing' in sys.modules)\n"
    )
    probe = f"import sys\n{code}"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_plain_rendering_and_argument_parsing_import_nothing_heavy() -> None:
    code = (
        "import io\n"
        "from coding_harness.client.args import parse_oneshot, OneShotOptions\n"
        "from coding_harness.client.render.style import Style\n"
        "from coding_harness.client.render.views import oneshot_view\n"
        "from coding_harness.client.render.printer import PrintOptions, TurnPrinter\n"
        "options = parse_oneshot(['-q', '-p', 'hi'])\n"
        "out = io.StringIO()\n"
        "view = oneshot_view(options, Style(out), out)\n"
        "printer = TurnPrinter(view, PrintOptions(), out)\n"
        "printer.event('tool.call', {'name': 'x', 'arguments': '{}'}, {})\n"
        "printer.event('diff', {'path': 'a', 'diff': '@@ -1 +1 @@\\n-a\\n+b\\n'}, {})\n"
        "printer.final({'reply': 'ok', 'exit_code': 0})\n"
    )
    assert loaded_after(code) == []


def test_the_rich_view_is_chosen_only_for_a_terminal() -> None:
    code = (
        "import io\n"
        "from coding_harness.client.args import OneShotOptions\n"
        "from coding_harness.client.render.style import Style\n"
        "from coding_harness.client.render.views import oneshot_view\n"
        "class Tty(io.StringIO):\n"
        "    def isatty(self): return True\n"
        "view = oneshot_view(OneShotOptions(), Style(io.StringIO()), Tty())\n"
        "assert type(view).__name__ == 'RichView', view\n"
    )
    assert "rich" in loaded_after(code)


def _imports(folder: str) -> set[str]:
    found: set[str] = set()
    for path in (ROOT / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return found


def test_dependencies_point_one_way() -> None:
    assert not any(m.startswith("coding_harness.daemon") for m in _imports("client"))
    assert not any(m.startswith(("coding_harness.client",)) for m in _imports("daemon"))
    protocol = _imports("protocol")
    assert not any(
        m.startswith(("coding_harness.daemon", "coding_harness.client")) for m in protocol
    )
    third_party = {"httpx", "rich", "prompt_toolkit", "jsonrpcserver", "psutil", "acp", "pydantic"}
    assert not {m.split(".")[0] for m in protocol} & third_party


def test_every_package_folder_is_listed_in_pyproject() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    for init in ROOT.glob("*/**/__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if rel.parts[0] not in ("protocol", "daemon", "client"):
            continue
        package = "coding_harness." + ".".join(rel.parts)
        assert f'"{package}"' in text, f"{package} missing from [tool.setuptools] packages"


def test_version_matches_pyproject() -> None:
    from coding_harness.protocol.version import __version__

    assert f'version = "{__version__}"' in (ROOT / "pyproject.toml").read_text()


def test_every_subcommand_has_a_module_with_main() -> None:
    import importlib

    from coding_harness.client import cli
    from coding_harness.client.args import SUBCOMMANDS

    assert set(cli._SUBCOMMAND_MODULES) == set(SUBCOMMANDS)
    for module in cli._SUBCOMMAND_MODULES.values():
        assert callable(importlib.import_module(f"coding_harness.client.{module}").main)
