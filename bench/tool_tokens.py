"""What a one-line fix in a 1,000-line file costs the model in output tokens.

The model writes a tool call's arguments as output tokens. propose_edit needs
the whole file twice (`old`, the current text, and `new`); replace_text needs
only the snippet and its replacement. Tokens are estimated as characters / 4
of the JSON arguments, a common rule of thumb for English and code with
OpenAI-style tokenizers; no tokenizer is run. Both calls are also applied
through the real tools in a temporary workspace (auto-approve, no Makefile)
to check that they produce the same file.

    .venv/bin/python bench/tool_tokens.py [--lines 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coding_harness.daemon.agent.seams import ApprovalDecision, ApprovalRequest, ToolCall
from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.workspace import Workspace

CHARS_PER_TOKEN = 4
PATH = "src/big_module.py"


class _NoSink:
    def emit(self, kind: str, data: dict[str, object]) -> None:
        pass


class _NeverAsked:
    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        raise AssertionError("auto-approve should not ask")


def make_source(lines: int) -> str:
    """A plausible Python module of `lines` lines: small functions, one with a bug."""
    out: list[str] = []
    index = 0
    while len(out) + 3 <= lines - 2:
        out += [f"def helper_{index}(value):", f"    return value * {index} + 1", ""]
        index += 1
    out += ["# padding"] * (lines - 2 - len(out))
    out += ["def average(values):", "    return sum(values) / len(values) + 1"]
    return "\n".join(out) + "\n"


def arguments(source: str) -> dict[str, str]:
    fixed = source.replace("len(values) + 1", "len(values)")
    snippet_old = "    return sum(values) / len(values) + 1"
    snippet_new = "    return sum(values) / len(values)"
    return {
        "propose_edit": json.dumps({"path": PATH, "old": source, "new": fixed}),
        "replace_text": json.dumps(
            {"path": PATH, "old_text": snippet_old, "new_text": snippet_new}
        ),
        "expected": fixed,
    }


async def apply(tool: str, args: str, source: str) -> str:
    """Run the call through the real tools; returns the file's text afterwards."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "src").mkdir()
        (root / PATH).write_text(source)
        ctx = ToolContext(
            workspace=Workspace(root), approver=_NeverAsked(), events=_NoSink(), auto_approve=True
        )
        result = await build_tools(ctx).execute(ToolCall(id="1", name=tool, arguments=args))
        assert result.startswith("applied"), result
        return (root / PATH).read_text()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1000)
    lines = parser.parse_args().lines
    source = make_source(lines)
    calls = arguments(source)
    print(f"one-line fix in a {source.count(chr(10)):,}-line file ({len(source):,} characters)")
    print("output tokens estimated as characters of the JSON arguments / 4")
    sizes = {}
    for tool in ("propose_edit", "replace_text"):
        text = asyncio.run(apply(tool, calls[tool], source))
        assert text == calls["expected"], f"{tool} produced a different file"
        sizes[tool] = len(calls[tool])
        tokens = sizes[tool] / CHARS_PER_TOKEN
        print(f"  {tool:13} {sizes[tool]:>8,} characters  ~{tokens:>8,.0f} tokens")
    ratio = sizes["propose_edit"] / sizes["replace_text"]
    print(f"  replace_text needs {ratio:,.0f}x fewer output tokens; both give the same file")


if __name__ == "__main__":
    main()
