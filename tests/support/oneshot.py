"""`harness -p` runs in a sandbox: the calc-fix task and the model's script for it.

`script_fix` makes the fake model read calc.py, propose the fix (BUGGY to
FIXED, tests/integration/conftest.py) and answer `final`; `harness` runs the
real command in the sandbox's workspace with its environment.
"""

from __future__ import annotations

import subprocess

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import run_harness

PROMPT = "fix the bug in calc.py"


def script_fix(model: FakeModelServer, final: str = "Fixed: add now adds.") -> None:
    model.add(
        Reply(content="Let me look.", tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content=final),
    )


def harness(
    sandbox: Sandbox, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=sandbox.workspace, input=input)
