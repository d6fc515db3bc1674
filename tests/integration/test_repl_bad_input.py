"""Every slash command that takes a path or a value, given a bad one, in the REPL against
a real daemon: one line naming the problem, and the REPL stays open for the next task.

Each bad line is followed by `/plan`, whose answer is known, so the output of the
bad line is exactly what was printed between them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.repl_run import ReplRun, wait_until

SENTINEL, SENTINEL_SAYS = "/plan", "no plan yet"
AS_ROOT = os.geteuid() == 0


def prepare(root: Path) -> None:
    """The bad files: a loop of symbolic links (unreadable and unwritable even for root),
    a file where a folder should be, text that is not JSON, JSON without messages."""
    (root / "loop").symlink_to(root / "loop")
    (root / "plain.txt").write_text("just text\n")
    (root / "latin1.json").write_bytes(b'{"messages": "\xff"}')
    (root / "empty.json").write_text("{}")
    (root / "null.json").write_text("null")
    (root / "wizard.json").write_text(json.dumps({"messages": [{"role": "wizard"}]}))
    locked = root / "locked.json"
    locked.write_text('{"messages": []}')
    locked.chmod(0)
    (root / "ro").mkdir()
    (root / "ro").chmod(0o500)


SAVE = [
    ("/save {root}/missing/x.json", "the folder {root}/missing does not exist"),
    ("/save {root}", "cannot save to {root}: it is a folder"),
    ("/save {root}/loop", "cannot save to {root}/loop: Too many levels of symbolic links"),
    ("/save {root}/plain.txt/x.json", "cannot save to {root}/plain.txt/x.json: Not a directory"),
    ("/save ~no_such_user_here/x.json", "~no_such_user_here/x.json: no such user's home folder"),
    ("/save", "usage: /save FILE"),
]
LOAD = [
    ("/load {root}/missing/x.json", "the folder {root}/missing does not exist"),
    ("/load {root}/nothing.json", "cannot load {root}/nothing.json: No such file or directory"),
    ("/load {root}", "cannot load {root}: it is a folder"),
    ("/load {root}/loop", "cannot load {root}/loop: Too many levels of symbolic links"),
    ("/load /dev/zero", "cannot load /dev/zero: not a regular file"),
    ("/load {root}/plain.txt", "cannot load {root}/plain.txt: not JSON"),
    ("/load {root}/latin1.json", "cannot load {root}/latin1.json: not JSON"),
    ("/load {root}/empty.json", 'cannot load {root}/empty.json: no "messages" list'),
    ("/load {root}/null.json", 'cannot load {root}/null.json: no "messages" list'),
    ("/load {root}/wizard.json", "history not loaded: message 0"),
    ("/load ~no_such_user_here/x.json", "~no_such_user_here/x.json: no such user's home folder"),
    ("/load", "usage: /load FILE"),
]
PERMISSIONS = [  # root reads and writes through any mode bits
    ("/load {root}/locked.json", "cannot load {root}/locked.json: Permission denied"),
    ("/save {root}/ro/x.json", "cannot save to {root}/ro/x.json: Permission denied"),
]
INDEX_LINES = ("indexing", "code index ready")
VALUES = [
    ("/provider nope", "unknown provider 'nope' (configured: fake)"),
    ("/model two words", "usage: /model [ID|N]"),
    ("/allow-cmd /bin/rm", "allow_command: allow a program name without a path"),
    ("/allow-cmd git push --force", "allow_command: allow a program name without a path"),
    ("/search bogus", "search must be true, false or one of"),
    ("/budget lots", "/budget lots: not a whole number of tokens"),
    ("/budget -5", "/budget -5: not a whole number of tokens"),
    ("/budget ²", "/budget ²: not a whole number of tokens"),
    ("/budget " + "9" * 5000, "/budget 999"),
    ("/intent bogus do it", "/intent: no route 'bogus'"),
    ("/intent coding", "usage: /intent general|coding|hybrid TEXT"),
    ("/nope do it", "unknown command /nope"),
]


@pytest.mark.parametrize(
    "cases",
    [
        pytest.param(SAVE, id="save"),
        pytest.param(LOAD, id="load"),
        pytest.param(
            PERMISSIONS,
            id="permissions",
            marks=pytest.mark.skipif(AS_ROOT, reason="root ignores file modes"),
        ),
        pytest.param(VALUES, id="values"),
    ],
)
def test_a_bad_argument_is_one_line_and_the_repl_stays(
    sandbox: Sandbox,
    model: FakeModelServer,
    repl: Callable[..., ReplRun],
    cases: list[tuple[str, str]],
) -> None:
    root = sandbox.root
    prepare(root)
    model.add(Reply(content="The word is kumquat."), Reply(content="Still here."))
    run = repl()
    run.type("remember kumquat\n")
    run.wait_for("The word is kumquat.")
    for line, says in cases:
        what = line[:60]
        err_at, out_at = len(run.err.text()), len(run.out.text())
        run.type(line.format(root=root) + "\n" + SENTINEL + "\n")
        wait_until(
            lambda at=err_at: SENTINEL_SAYS in run.err.text()[at:], f"{SENTINEL} after {what}"
        )
        printed = run.err.text()[err_at:] + run.out.text()[out_at:]
        shown = [  # less the code index's progress, which a slow build prints any time
            text
            for text in printed.splitlines()
            if text.strip() and SENTINEL_SAYS not in text and not text.startswith(INDEX_LINES)
        ]
        assert len(shown) == 1, f"{what}: not one line: {printed[:300]!r}"
        assert says.format(root=root) in shown[0], f"{what}: {printed[:300]!r}"
    run.type("what was it?\n")  # the REPL is still open, the conversation unchanged
    run.wait_for("Still here.")
    assert run.finish() == 0
    asked = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
    assert asked == ["remember kumquat", "what was it?"]
