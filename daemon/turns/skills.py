"""Skills: reusable instructions in `<root>/<name>/SKILL.md`, loaded into a turn on request.

Two roots: `~/.agents/skills` (the user's) and the project's `.agents/skills`.
A skill file must resolve inside its own folder (a project's inside the
workspace too) and be a regular file: a SKILL.md that is a link to
`~/.ssh/id_rsa` is refused, listed as hidden and never read. A project skill
never replaces a user skill of the same name: the user's wins, and the
project's is listed as hidden with the reason, so `/skills` can say so. A SKILL.md may open
with YAML-style front matter between `---` lines; its `description:` is what
`/skills` shows. Loading a skill puts its text into the turn's request,
framed as instructions to follow for that task.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from coding_harness.daemon.agent.frames import escape_tags
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
    workspace: Path | None = None  # a project skill's, which its file must stay inside

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


@dataclass(kw_only=True, slots=True, frozen=True)
class HiddenSkill:
    """A skill folder that is not offered, and why (refused, or shadowing the user's)."""

    name: str
    path: Path
    scope: str
    reason: str

    def to_wire(self) -> JSONObject:
        return {
            "name": self.name,
            "path": str(self.path),
            "scope": self.scope,
            "reason": self.reason,
        }


@dataclass(kw_only=True, slots=True)
class SkillListing:
    skills: list[Skill] = field(default_factory=list)
    hidden: list[HiddenSkill] = field(default_factory=list)


def list_skills(home: Path, cwd: Path | None) -> SkillListing:
    """Every usable skill by name, sorted, and the skill folders hidden with the reason:
    a file that leads out of its folder (or the workspace), and a project skill named
    like one of the user's, which wins."""
    found: dict[str, Skill] = {}
    listing = SkillListing()
    for scope, root in skill_roots(home, cwd):
        try:
            folders = sorted(root.iterdir())
        except OSError:
            continue
        for folder in folders:
            path = folder / SKILL_FILE
            if not NAME.fullmatch(folder.name) or not (path.exists() or path.is_symlink()):
                continue
            name = folder.name
            within = cwd if scope == "project" else None
            reason = refusal(path, within)
            if reason is None and name in found:
                reason = f"your own skill of that name ({found[name].path}) is used instead"
            if reason is not None:
                listing.hidden.append(HiddenSkill(name=name, path=path, scope=scope, reason=reason))
                continue
            described = _description(path, within)
            found[name] = Skill(
                name=name, description=described, path=path, scope=scope, workspace=within
            )
    listing.skills = [found[name] for name in sorted(found)]
    return listing


def find_skills(home: Path, cwd: Path | None) -> list[Skill]:
    """Every usable skill by name, sorted (`list_skills` without the hidden ones)."""
    return list_skills(home, cwd).skills


def find_skill(home: Path, cwd: Path | None, name: str) -> Skill | None:
    return next((s for s in find_skills(home, cwd) if s.name == name), None)


def refusal(path: Path, workspace: Path | None) -> str | None:
    """Why the skill file `path` may not be read (None: it may): its real path is not in
    its own folder, or not in `workspace` (a project's skill), or it is not a file."""
    real = Path(os.path.realpath(path))
    if real.parent != Path(os.path.realpath(path.parent)):
        return f"it leads out of its folder (to {real}); a skill file must live in its folder"
    if workspace is not None and not real.is_relative_to(os.path.realpath(workspace)):
        return f"it leads out of the workspace (to {real})"
    try:
        regular = stat.S_ISREG(real.stat().st_mode)
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    return None if regular else "it is not a regular file"


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


def _read(path: Path, workspace: Path | None = None) -> str:
    """The file's text, capped; `OSError` when `refusal` says no (checked again here: the
    file may have changed since it was listed)."""
    reason = refusal(path, workspace)
    if reason is not None:
        raise PermissionError(f"{path}: {reason}")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        return handle.read(SKILL_CAP_CHARS + 1)


def _description(path: Path, workspace: Path | None) -> str:
    try:
        text = _read(path, workspace)
    except OSError:
        return "(unreadable)"
    described = front_matter(text).get("description", "")
    if not described:
        lines = (line.strip().lstrip("#").strip() for line in body_of(text).splitlines())
        described = next((line for line in lines if line), "")
    return described[:DESCRIPTION_CHARS]


def skill_request(skill: Skill, task: str) -> str:
    """The turn's request: the skill's instructions, then the task they apply to."""
    text = _read(skill.path, skill.workspace)
    cut = len(text) > SKILL_CAP_CHARS
    # A skill's body may not close its frame: the task after it is the user's.
    body = escape_tags(body_of(text[:SKILL_CAP_CHARS]).strip(), "skill")
    note = "\n[the skill file was cut off here]" if cut else ""
    task = task.strip() or "No task was given: do what the skill itself describes."
    return (
        f'Use the skill "{skill.name}" for this request. Its instructions come from '
        f"{skill.path} and take precedence over your usual habits for this task:\n"
        f'<skill name="{skill.name}">\n{body}{note}\n</skill>\n\nTask: {task}'
    )
