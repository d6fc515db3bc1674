"""The client's MCP modules load neither the MCP SDK nor pydantic nor rich, and the
one-shot path does not load `harness mcp` at all (tests/unit/test_imports.py guards
the rest of that path)."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.unit.test_imports import LEAN

MCP_MODULES = (
    "coding_harness.client.commands.mcp",
    "coding_harness.client.commands.doctor_mcp",
    "coding_harness.client.render.mcp_servers",
)
UNWANTED = ("mcp", "pydantic", "rich", "httpx", "coding_harness.daemon", "prompt_toolkit")


def loaded(imports: tuple[str, ...], wanted: tuple[str, ...]) -> list[str]:
    """The modules named by (or under) `wanted` that importing `imports` loads."""
    probe = "\n".join(
        [
            "import sys",
            *(f"import {module}" for module in imports),
            f"wanted = {wanted!r}",
            "print(sorted(m for m in sys.modules if any(m == w or m.startswith(w + '.')"
            " for w in wanted)))",
        ]
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return list(ast.literal_eval(out.stdout.strip()))


def test_harness_mcp_loads_no_sdk() -> None:
    assert loaded(MCP_MODULES, UNWANTED) == []


def test_the_oneshot_path_loads_no_mcp_module() -> None:
    assert loaded(LEAN, (*MCP_MODULES, "mcp")) == []
