"""Where each session's plan is kept, and what a turn does with it.

`PlanBook` holds the plan in force per session. A plan is published as a
`plan` event, which the store keeps, so after a restart the book finds it
again in the session's event log. A plan belongs to one conversation: when
the history no longer starts with the message it was committed under (a
reset, a load), it is no longer in force.

`PlanKeeper` is one turn's view of the book, handed to the tools: it commits
plans (from commit_plan, or from a checklist written to a Markdown file) and
looks at every applied write, flagging one outside the files the plan names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from coding_harness.daemon.agent.seams import EventSink, JSONObject
from coding_harness.daemon.context.plans import (
    Plan,
    PlanStep,
    checklist_steps,
    conversation_anchor,
    looks_like_plan,
    parse_steps,
    plan_lines,
    take_baseline,
)
from coding_harness.daemon.sessions.session import Session
from coding_harness.protocol.methods import EventKind

Conversation = Callable[[], list[JSONObject]]

NO_STEPS = (
    "no plan recorded: no steps were found. Send `steps` as text with one step per line, "
    "each optionally ending in 'files: a.py, b.py', e.g.\n"
    "1. Read calc.py to find the bug files: calc.py\n2. Fix add() files: calc.py"
)


class PlanBook:
    """The plan in force for each session."""

    def __init__(self) -> None:
        self._plans: dict[str, Plan] = {}

    def current(self, session: Session, conversation: list[JSONObject]) -> Plan | None:
        """The session's plan, if it still belongs to this conversation.

        While a turn runs, the conversation cannot be reset, so the check is skipped.
        """
        plan = self._plans.get(session.id) or self._from_events(session)
        if plan is None:
            return None
        if session.state != "running" and plan.anchor != conversation_anchor(conversation):
            return None
        return plan

    def put(self, session_id: str, plan: Plan) -> None:
        self._plans[session_id] = plan

    def forget(self, session_id: str) -> None:
        self._plans.pop(session_id, None)

    def _from_events(self, session: Session) -> Plan | None:
        for event in reversed(session.events):
            if event.kind == EventKind.PLAN:
                plan = Plan.from_event(event.data)
                self._plans[session.id] = plan
                return plan
        return None


class PlanKeeper:
    """One turn's plan hooks: commit, look at writes, re-anchor after compaction."""

    def __init__(
        self, book: PlanBook, session: Session, events: EventSink, conversation: Conversation
    ) -> None:
        self._book = book
        self._session = session
        self._events = events
        self._conversation = conversation
        self.root = session.cwd

    def current(self) -> Plan | None:
        return self._book.current(self._session, self._conversation())

    def commit(self, raw_steps: str) -> str:
        """commit_plan's result: the plan as recorded, or how to send one."""
        steps = parse_steps(raw_steps)
        if not steps:
            return NO_STEPS
        plan = self._record(steps, "commit_plan")
        listed = "\n".join(plan_lines(plan, self.root))
        return (
            f"plan recorded ({len(steps)} steps):\n{listed}\n"
            "Work through it, adapting when you learn more. Call commit_plan again with the "
            "whole updated plan (mark finished steps with [x]) when it changes."
        )

    def after_write(self, rel: str, text: str) -> str:
        """A note for the write's tool result: a recorded checklist, drift, or nothing."""
        if looks_like_plan(rel, text):
            steps = checklist_steps(text)
            self._record(steps, f"file:{rel}")
            recorded = f"the checklist in {rel} was recorded as the plan ({len(steps)} steps)"
            self._events.emit(EventKind.NOTICE, {"message": recorded})
            return (
                f"\nNote: the checklist in '{rel}' was also recorded as this session's plan "
                f"({len(steps)} steps). Next time, call commit_plan directly."
            )
        plan = self.current()
        declared = plan.files() if plan else []
        if not declared or rel in declared or (plan and plan.source == f"file:{rel}"):
            return ""
        self._events.emit(
            EventKind.NOTICE,
            {"message": f"{rel} was written, but the plan does not name it", "drift": rel},
        )
        return (
            f"\nNote: '{rel}' is not among the files the plan names "
            f"({', '.join(declared)}). If the plan has changed, call commit_plan again."
        )

    def reanchor(self, plan: Plan) -> None:
        """Tie `plan` to the conversation as it is now (after compaction replaced it)."""
        plan.anchor = conversation_anchor(self._conversation())
        self._publish(plan, carried_over=True)

    def _record(self, steps: list[PlanStep], source: str) -> Plan:
        files = list(dict.fromkeys(f for step in steps for f in step.files))
        plan = Plan(
            steps=steps,
            source=source,
            anchor=conversation_anchor(self._conversation()),
            baseline=take_baseline(Path(self.root), files),
        )
        self._publish(plan)
        return plan

    def _publish(self, plan: Plan, *, carried_over: bool = False) -> None:
        self._book.put(self._session.id, plan)
        data = plan.to_event()
        if carried_over:
            data["carried_over"] = True
        self._events.emit(EventKind.PLAN, data)
