"""Plans: steps the model means to take, the files each touches, and how far it got.

A plan comes from the `commit_plan` tool or from a checklist the model wrote
to a Markdown file. It records a fingerprint of every file it names when it
is committed, so its status can be reconciled with the disk: a step marked
done is done; a step whose files appeared or changed since is "touched", even
when nobody ticked it off (a turn stopped by a guard leaves real work behind);
anything else is pending.

Parsing is forgiving, since weak models send steps in many shapes: a JSON
array (of strings or of objects), or lines with bullets, numbers or checkboxes,
each optionally ending in `files: a.py, b.py`.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.tools.workspace import is_hidden_name

MAX_STEPS = 30
STEP_CHARS = 300
MAX_HASHED_BYTES = 8_000_000
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])?\s*(?:\[(?P<mark>[ xX])\])?\s*")
_CHECKLIST_ITEM = re.compile(r"^\s*[-*+]\s+\[[ xX]\]\s+\S", re.MULTILINE)
_FILES_TAIL = re.compile(
    r"[\s(\u2014\u2013-]*\bfiles?\s*:\s*(?P<files>[^)]*)\)?\s*$", re.IGNORECASE
)
_BACKTICKED = re.compile(r"`([^`\s]+)`")
_PATHLIKE = re.compile(r"(?<![\w/.:-])((?:[\w-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5})(?![\w/])")


@dataclass(kw_only=True, slots=True)
class PlanStep:
    text: str
    files: list[str] = field(default_factory=list)
    done: bool = False


@dataclass(kw_only=True, slots=True)
class Plan:
    steps: list[PlanStep]
    source: str  # "commit_plan" or "file:<path>"
    anchor: str  # digest of the conversation's first message when it was committed
    committed_at: float = field(default_factory=time.time)
    baseline: dict[str, str | None] = field(default_factory=dict)  # path -> digest (None: absent)

    def files(self) -> list[str]:
        return list(dict.fromkeys(f for step in self.steps for f in step.files))

    def to_event(self) -> JSONObject:
        return {
            "steps": [
                {"index": i + 1, "text": s.text, "files": s.files, "done": s.done}
                for i, s in enumerate(self.steps)
            ],
            "source": self.source,
            "anchor": self.anchor,
            "committed_at": self.committed_at,
            "baseline": self.baseline,
        }

    @classmethod
    def from_event(cls, data: JSONObject) -> Plan:
        steps = [
            PlanStep(text=str(s["text"]), files=list(s.get("files") or []), done=bool(s["done"]))
            for s in data.get("steps") or []
        ]
        return cls(
            steps=steps,
            source=str(data.get("source", "commit_plan")),
            anchor=str(data.get("anchor", "")),
            committed_at=float(data.get("committed_at", 0.0)),
            baseline=dict(data.get("baseline") or {}),
        )


def conversation_anchor(conversation: list[JSONObject]) -> str:
    """What ties a plan to one conversation: a digest of its first message."""
    if not conversation:
        return ""
    first = json.dumps(conversation[0], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(first.encode()).hexdigest()[:16]


# -- parsing -------------------------------------------------------------------


def parse_steps(raw: str) -> list[PlanStep]:
    """Steps from what the model sent; empty when nothing usable was found."""
    try:
        loaded: Any = json.loads(raw)
    except ValueError:
        loaded = None
    if isinstance(loaded, dict):
        loaded = loaded.get("steps")
    if isinstance(loaded, list):
        steps = [s for s in (_from_json(item) for item in loaded) if s is not None]
    else:
        steps = [s for s in (_from_line(line) for line in raw.splitlines()) if s is not None]
    return steps[:MAX_STEPS]


def _from_json(item: Any) -> PlanStep | None:
    if isinstance(item, str):
        return _from_line(item)
    if not isinstance(item, dict):
        return None
    text = next((item[k] for k in ("step", "title", "text", "description") if k in item), "")
    files = item.get("files") or []
    if isinstance(files, str):
        files = _split_files(files)
    step = _from_line(str(text))
    if step is None:
        return None
    if isinstance(files, list):
        step.files = list(dict.fromkeys([*(str(f) for f in files), *step.files]))
    step.done = step.done or bool(item.get("done"))
    return step


def _from_line(line: str) -> PlanStep | None:
    bullet = _BULLET.match(line)
    mark = bullet.group("mark") if bullet else None
    text = line[bullet.end() :] if bullet else line
    files: list[str] = []
    tail = _FILES_TAIL.search(text)
    if tail is not None:
        files = _split_files(tail.group("files"))
        text = text[: tail.start()]
    text = text.strip()
    if not text:
        return None
    if not files:
        files = _mentioned_files(text)
    return PlanStep(text=text[:STEP_CHARS], files=files, done=mark in ("x", "X"))


def _split_files(text: str) -> list[str]:
    names = (part.strip().strip("`'\"") for part in re.split(r"[,;]|\s+and\s+", text))
    return [name.removeprefix("./") for name in names if name and " " not in name]


def _mentioned_files(text: str) -> list[str]:
    quoted = _BACKTICKED.findall(text)
    found = [q for q in quoted if _PATHLIKE.fullmatch(q)] or _PATHLIKE.findall(text)
    return list(dict.fromkeys(f.removeprefix("./") for f in found))


def looks_like_plan(path: str, text: str) -> bool:
    """A Markdown file holding a checklist of at least two items."""
    return path.lower().endswith((".md", ".markdown")) and len(_CHECKLIST_ITEM.findall(text)) >= 2


def checklist_steps(text: str) -> list[PlanStep]:
    """The checklist items of a Markdown plan, with their ticks."""
    items = (line for line in text.splitlines() if _CHECKLIST_ITEM.match(line))
    return [s for s in (_from_line(line) for line in items) if s is not None][:MAX_STEPS]


# -- the disk ------------------------------------------------------------------


def digest(root: Path, rel: str) -> str | None:
    """A digest of the file's bytes; None when it is absent or not a regular file."""
    path = root / rel
    try:
        if not path.is_file():
            return None
        info = path.stat()
        if info.st_size > MAX_HASHED_BYTES:  # too big to read each time: size and time will do
            return f"stat:{info.st_size}:{info.st_mtime_ns}"
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return None


def take_baseline(root: Path, files: list[str]) -> dict[str, str | None]:
    return {rel: digest(root, rel) for rel in files if _inside(root, rel)}


def _inside(root: Path, rel: str) -> bool:
    """A visible path inside the workspace: hidden files are never read, not even to hash."""
    if Path(rel).is_absolute() or any(is_hidden_name(part) for part in Path(rel).parts):
        return False
    return (root / rel).resolve().is_relative_to(root.resolve())


def step_status(plan: Plan, step: PlanStep, root: Path) -> str:
    """done, touched (a file of the step appeared or changed since the commit) or pending."""
    if step.done:
        return "done"
    for rel in step.files:
        if rel in plan.baseline and digest(root, rel) != plan.baseline[rel]:
            return "touched"
    return "pending"


def plan_status(plan: Plan, root: Path) -> JSONObject:
    """The plan as `plan.get` answers it, each step reconciled with the files on disk."""
    steps = [
        {"index": i + 1, "text": s.text, "files": s.files, "status": step_status(plan, s, root)}
        for i, s in enumerate(plan.steps)
    ]
    counts = {name: sum(s["status"] == name for s in steps) for name in ("done", "touched")}
    return {
        "source": plan.source,
        "committed_at": plan.committed_at,
        "steps": steps,
        "done": counts["done"],
        "touched": counts["touched"],
        "pending": len(steps) - counts["done"] - counts["touched"],
    }


def plan_lines(plan: Plan, root: Path) -> list[str]:
    """One line per step, `[status] text (files: ...)`."""
    lines = []
    for index, step in enumerate(plan.steps, 1):
        files = f" (files: {', '.join(step.files)})" if step.files else ""
        lines.append(f"{index}. [{step_status(plan, step, root)}] {step.text}{files}")
    return lines


def guidance(plan: Plan, root: Path) -> str:
    """The system prompt's paragraph on the plan in force."""
    return "\n".join(
        [
            "The plan committed for this work (guidance, not a script: follow its intent, "
            "adapt it when you learn more, and call commit_plan again when it changes; "
            "'touched' means its files changed since the plan was made):",
            *plan_lines(plan, root),
        ]
    )
