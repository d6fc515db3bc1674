"""The slash commands that work on the model's context or start a turn of their own:
`/context`, `/compact`, `/plan`, `/skills`, `/<skill>`, `/summary`, `/intent` and
`/init` (mixed into `SlashCommands`).

`/init` asks the agent to write AGENTS.md for the project: a coding turn, so the
model has the code index's repo map; the task names the build files found in the
session's folder, and the file is proposed with `write_file` (or, when one exists,
edited), so it is shown as a diff to approve like any edit.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from coding_harness.client.render.sanitize import field, one_line, visible
from coding_harness.client.render.style import Style
from coding_harness.protocol import methods
from coding_harness.protocol.client import Connection
from coding_harness.protocol.events import parse_event
from coding_harness.protocol.methods import EventKind
from coding_harness.protocol.vocabulary import ROUTES

# Submit a turn with these options and follow it: (text, options).
RunTurn = Callable[[str, dict[str, Any]], None]
# The files that say how a project builds, tests and lints, as /init names them.
BUILD_FILES = (
    "Makefile",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "CMakeLists.txt",
    "build.gradle",
    "pom.xml",
    "justfile",
    ".github/workflows",
)
INIT_TASK = (
    "Write AGENTS.md at the root of this project: a short guide for coding agents "
    "working here. Say what the project is, how to build, test and lint it (the exact "
    "commands), how the code is laid out (from the repo map you are shown), and the "
    "conventions the code follows. Read the build files first{files}. {how} Keep it "
    "under 80 lines of Markdown, facts only."
)


def init_task(cwd: Path) -> str:
    """The task `/init` submits for the project in `cwd`."""
    found = [name for name in BUILD_FILES if (cwd / name).exists()]
    files = f" ({', '.join(found)})" if found else ""
    how = (
        "AGENTS.md exists: improve it with replace_text or propose_edit."
        if (cwd / "AGENTS.md").is_file()
        else "Create it with write_file."
    )
    return INIT_TASK.format(files=files, how=how)


class AgentCommands:
    """Context, compaction, plans, skills, routes and /init (mixed into `SlashCommands`)."""

    conn: Connection
    session: str
    cwd: str
    style: Style
    run_turn: RunTurn

    def _context(self, _: str) -> None:
        from coding_harness.client.render.tables import render_context_table

        data = self.conn.request(methods.SESSION_CONTEXT, {"session": self.session})
        render_context_table(data)
        self.style.line(str(data.get("estimate", "")), "dim")

    def _compact(self, _: str) -> None:
        self.style.line("compacting: the model is summarising the conversation ...", "dim")
        try:
            done = self.conn.request(
                methods.SESSION_COMPACT, {"session": self.session}, timeout=None
            )
        except KeyboardInterrupt:
            self.style.line("the daemon carries on compacting; /context shows the result", "dim")
            return
        if not done.get("compacted"):
            self.style.line(f"nothing to compact yet ({done.get('messages', 0)} messages)", "dim")
            return
        # The `context.compacted` event has said what became of it, in every terminal.
        if not done.get("summarised"):
            self.style.line("the model gave no summary; the brief keeps the goal and files", "dim")

    def _plan(self, _: str) -> None:
        plan = self.conn.request(methods.PLAN_GET, {"session": self.session}).get("plan")
        if not plan:
            self.style.line("no plan yet: the agent commits one for work with several steps", "dim")
            return
        colors = {"done": "green", "touched": "yellow", "pending": ""}
        for step in plan["steps"]:
            files = f"  ({', '.join(step['files'])})" if step["files"] else ""
            line = f"{step['index']:>2}. [{step['status']}] {step['text']}{files}"
            self.style.line(line, colors.get(step["status"], ""))
        self.style.line(
            f"{plan['done']} done, {plan['touched']} touched, {plan['pending']} pending "
            f"(from {plan['source']})",
            "dim",
        )

    def _skills(self, _: str) -> None:
        listing = self.conn.request(methods.SKILLS_LIST, {"session": self.session})
        found = listing["skills"]
        if not found:
            self.style.line("no skills: add one as ~/.agents/skills/NAME/SKILL.md", "dim")
        width = max((len(skill["name"]) for skill in found), default=0) + 1
        for skill in found:
            name, scope = field(str(skill["name"])), field(str(skill["scope"]))
            print(f"/{name:<{width}} {field(str(skill['description']))}  [{scope}]")
        self._say_hidden(listing.get("hidden") or [])

    def _say_hidden(self, hidden: list[dict[str, Any]], name: str | None = None) -> None:
        """One line per hidden skill folder (of `name` only, when given), with why."""
        for skill in hidden:
            if name is None or skill.get("name") == name:
                said = f"{skill.get('scope')} skill {field(str(skill.get('path')))} hidden"
                self.style.line(f"{said}: {field(str(skill.get('reason')))}", "yellow")

    def _skill(self, name: str, task: str) -> str | None:
        listing = self.conn.request(methods.SKILLS_LIST, {"session": self.session})
        self._say_hidden(listing.get("hidden") or [], name[1:])
        if name[1:] not in {skill["name"] for skill in listing["skills"]}:
            self.style.line(f"unknown command {name}; /help lists them", "yellow")
            return None
        self.run_turn(task or name, {"skill": name[1:]})
        return None

    def _summary(self, _: str) -> None:
        self.run_turn("/summary", {"mode": "summary"})

    def _intent(self, argument: str) -> None:
        route, _, text = argument.partition(" ")
        if route and route not in ROUTES:
            self.style.line(
                f"/intent: no route {one_line(route, 40)!r}; "
                f"usage: /intent {'|'.join(ROUTES)} TEXT",
                "yellow",
            )
            return
        if not text.strip():
            self.style.line(f"usage: /intent {'|'.join(ROUTES)} TEXT", "yellow")
            return
        self.run_turn(text.strip(), {"route": route})

    def _follow_plainly(self, text: str, options: dict[str, Any]) -> None:
        """Submit and print the reply; approvals are left to `harness approve`."""
        params = {"session": self.session, "text": text, "options": options}
        turn = self.conn.request(methods.SESSION_SUBMIT, params)["turn"]
        try:
            while True:
                event = parse_event(self.conn.next_notification(timeout=None))
                if event is None or event.session != self.session:
                    continue
                if event.kind == EventKind.APPROVAL_REQUESTED:
                    self.style.line(f"approval needed: harness approve {self.session}", "yellow")
                elif event.kind in (EventKind.NOTICE, EventKind.ERROR):
                    self.style.line(event.text("message"), "yellow")
                elif event.kind == EventKind.TURN_FINISHED and event.turn == turn:
                    print(visible(event.text("reply")))
                    return
        except KeyboardInterrupt:
            self.conn.request(methods.SESSION_CANCEL, {"session": self.session})

    def _init(self, argument: str) -> None:
        if argument:
            self.style.line("usage: /init (it takes no argument)", "yellow")
            return
        self.run_turn(init_task(Path(self.cwd)), {"route": "coding"})
