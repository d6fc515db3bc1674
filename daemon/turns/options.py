"""The options of `session.submit` that shape a turn: route, mode and skill.

`{route: "general"|"coding"|"hybrid"}` skips the classifier, `{mode:
"summary"}` runs the fixed `/summary` task with read-only tools, and
`{skill: NAME}` loads that skill's SKILL.md into the turn. Bad values are
refused at submit time, naming the option.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coding_harness.daemon.config.loader import home_dir
from coding_harness.daemon.turns.intent import route_named
from coding_harness.daemon.turns.routing import SUMMARY_MODE, TurnKind
from coding_harness.daemon.turns.skills import NAME, find_skill
from coding_harness.protocol import errors
from coding_harness.protocol.vocabulary import ROUTES

MODES = (SUMMARY_MODE,)


def turn_kind(options: Mapping[str, Any], cwd: Path) -> TurnKind:
    """The `TurnKind` the options ask for; `InvalidParams` for a bad one."""
    route, mode, skill = options.get("route"), options.get("mode"), options.get("skill")
    if route is not None and route not in ROUTES:
        raise errors.InvalidParams(f"options.route must be one of {', '.join(ROUTES)}")
    if mode is not None and mode not in MODES:
        raise errors.InvalidParams(f"options.mode must be one of {', '.join(MODES)}")
    if skill is not None:
        if not isinstance(skill, str) or not NAME.fullmatch(skill):
            raise errors.InvalidParams("options.skill must be a skill name")
        if find_skill(home_dir(), cwd, skill) is None:
            raise errors.InvalidParams(f"no skill named {skill!r}; /skills lists them")
    return TurnKind(route=route_named(route), mode=mode, skill=skill)
