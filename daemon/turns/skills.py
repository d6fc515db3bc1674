"""Skills: reusable instructions in `<root>/<name>/SKILL.md`, loaded into a turn on request.

Two roots: `~/.agents/skills` (the user's) and the project's `.agents/skills`;
a project skill wins over a user skill of the same name. A SKILL.md may open
with YAML-style front matter between `---` lines; its `description:` is what
`/skills` shows. Loading a skill puts its text into the turn's request,
framed as instructions to follow for that task.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.agent.seams import JSONObject

SKILL_FILE = "SKILL.md"
SKILL_CAP_CHARS = 32_000
DESCRIPTION_CHARS = 200
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(?P<body>.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


@dataclass(kw_only=True, slots=True, frozen=True)
class Skill:
    name: str
    description: str
    path: Path
    scope: str  # "project" or "user"

    def to_wire(self) -> JSONObject:
        return {
            "name": self.name,
            "description": self.description,
            "path": str(self.path),
            "scope": self.scope,
        }


def skill_roots(home: Path, cwd: Path | None) -> list[tuple[str, Path]]:
    """The folders skills live in, lowest precedence first."""
    roots = [("user", home / ".agents" / "skills")]
    if cwd is not None:
        roots.append(("project", cwd / ".agents" / "skills"))
    return roots


def find_skills(home: Path, cwd: Path | None) -> list[Skill]:
    """Every skill by name, sorted; a project skill replaces a user skill of its name."""
    found: dict[str, Skill] = {}
    for scope, root in skill_roots(home, cwd):
        try:
            folders = sorted(root.iterdir())
        except OSError:
            continue
        for folder in folders:
            path = folder / SKILL_FILE
            if NAME.fullmatch(folder.name) and path.is_file():
                found[folder.name] = Skill(
                    name=folder.name, description=_description(path), path=path, scope=scope
                )
    return [found[name] for name in sorted(found)]


def find_skill(home: Path, cwd: Path | None, name: str) -> Skill | None:
    return next((s for s in find_skills(home, cwd) if s.name == name), None)


def front_matter(text: str) -> dict[str, str]:
    """The `key: value` lines of a leading front matter block (quotes removed)."""
    match = _FRONT.match(text)
    if match is None:
        return {}
    fields: dict[str, str] = {}
    for line in match.group("body").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line.startswith((" ", "\t")):
            fields[key.strip().lower()] = value.strip().strip("'\"")
    return fields


def body_of(text: str) -> str:
    """The text after the front matter."""
    match = _FRONT.match(text)
    return text[match.end() :] if match else text


def _read(path: Path) -> str:
    with path.open(encoding="utf-8", errors="replace") as handle:
        return handle.read(SKILL_CAP_CHARS + 1)


def _description(path: Path) -> str:
    try:
        text = _read(path)
    except OSError:
        return "(unreadable)"
    described = front_matter(text).get("description", "")
    if not described:
        lines = (line.strip().lstrip("#").strip() for line in body_of(text).splitlines())
        described = next((line for line in lines if line), "")
    return described[:DESCRIPTION_CHARS]


def skill_request(skill: Skill, task: str) -> str:
    """The turn's request: the skill's instructions, then the task they apply to."""
    text = _read(skill.path)
    cut = len(text) > SKILL_CAP_CHARS
    body = body_of(text[:SKILL_CAP_CHARS]).strip()
    note = "\n[the skill file was cut off here]" if cut else ""
    task = task.strip() or "No task was given: do what the skill itself describes."
    return (
        f'Use the skill "{skill.name}" for this request. Its instructions come from '
        f"{skill.path} and take precedence over your usual habits for this task:\n"
        f'<skill name="{skill.name}">\n{body}{note}\n</skill>\n\nTask: {task}'
    )
