"""Compaction: the model summarises the conversation, and a resume brief replaces it.

It runs on request (`session.compact`, `/compact`), before a model call
whose estimated prompt passes `agent.compact_at` of the context limit, and
once after a provider answers that the conversation does not fit. The brief
(see `window.py`) keeps the goal, the plan, the files changed and what
is left; when the summary call itself fails, the brief goes without the
summary rather than inventing one. A request it quotes (the goal, the latest
request) is cut to `QUOTE_CHARS`, so a huge prompt (a pasted file, one the
model refused) is never carried whole into every later request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coding_harness.daemon.agent.model_errors import ModelError
from coding_harness.daemon.agent.prompts import COMPACT_PROMPT
from coding_harness.daemon.agent.seams import EventSink, JSONObject, Model, QuietSink, Usage
from coding_harness.daemon.config.generation import request_payload
from coding_harness.daemon.config.loader import Config
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.context.plan_book import PlanKeeper
from coding_harness.daemon.context.plans import Plan, plan_lines, step_status
from coding_harness.daemon.context.window import (
    files_changed,
    goal_of,
    latest_request,
    message_chars,
    resume_brief,
    tokens,
    transcript,
)
from coding_harness.protocol.methods import EventKind

MIN_TRANSCRIPT_CHARS = 8_000
QUOTE_CHARS = 4_000  # of a request the brief quotes
CONTINUE = "Carry on with the latest request from where the brief leaves off."
ACKNOWLEDGED = "Understood: I will continue from this brief."


def context_limit(profile: ProviderProfile, config: Config) -> int:
    """The profile's own limit when it has one, else `agent.context_limits`, else the default."""
    own = getattr(profile, "context_limit", None)
    if isinstance(own, int) and own > 0:
        return own
    return config.agent.context_limits.get(profile.name, config.agent.context_limit)


@dataclass(kw_only=True, slots=True)
class CompactionResult:
    reason: str
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    summarised: bool

    def to_wire(self) -> JSONObject:
        return {
            "reason": self.reason,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "summarised": self.summarised,
        }


class Compactor:
    """Keeps one conversation (`[system, *conversation]`) inside the context limit."""

    def __init__(
        self,
        *,
        model: Model,
        model_id: str,
        generation: Mapping[str, Any],
        limit: int,
        threshold: float,
        events: EventSink,
        on_usage: Callable[[Usage], None],
        plans: PlanKeeper | None = None,
        on_replaced: Callable[[], None] | None = None,
        extra_files: Callable[[], list[str]] | None = None,
    ) -> None:
        self._model = model
        self._model_id = model_id
        self._generation = dict(generation)
        self.limit = limit
        self._threshold = threshold
        self._events = events
        self._on_usage = on_usage
        self._plans = plans
        self._on_replaced = on_replaced
        self._extra_files = extra_files
        self.extra_chars = 0  # what every request adds: the tool schemas
        self.last: CompactionResult | None = None

    def estimate(self, messages: list[JSONObject]) -> int:
        return tokens(sum(message_chars(m) for m in messages) + self.extra_chars)

    def over_limit(self, messages: list[JSONObject]) -> bool:
        return len(messages) > 2 and self.estimate(messages) > self._threshold * self.limit

    async def compact(
        self, messages: list[JSONObject], reason: str, *, mid_turn: bool = True
    ) -> bool:
        """Replace `messages[1:]` with a brief; False when there is nothing to drop."""
        conversation = messages[1:]
        if len(conversation) < 2:
            return False
        before = self.estimate(messages)
        plan = self._plans.current() if self._plans else None
        summary = await self._summary(conversation)
        brief = self._brief(conversation, summary, plan)
        tail = (
            [{"role": "user", "content": f"{brief}\n\n{CONTINUE}"}]
            if mid_turn
            else [
                {"role": "user", "content": brief},
                {"role": "assistant", "content": ACKNOWLEDGED},
            ]
        )
        messages[1:] = tail
        self.last = CompactionResult(
            reason=reason,
            messages_before=len(conversation),
            messages_after=len(tail),
            tokens_before=before,
            tokens_after=self.estimate(messages),
            summarised=summary is not None,
        )
        self._after(reason, plan)
        return True

    def _after(self, reason: str, plan: Plan | None) -> None:
        if self._plans is not None and plan is not None:
            self._plans.reanchor(plan)
        if self._on_replaced is not None:
            self._on_replaced()
        assert self.last is not None
        self._events.emit(EventKind.COMPACTED, self.last.to_wire())
        if reason != "manual":
            self._events.emit(
                EventKind.NOTICE,
                {
                    "message": f"context compacted ({reason}): about {self.last.tokens_before:,} "
                    f"-> {self.last.tokens_after:,} tokens (estimated)"
                },
            )

    async def _summary(self, conversation: list[JSONObject]) -> str | None:
        cap = max(MIN_TRANSCRIPT_CHARS, self.limit * 2)  # about half the context
        own: JSONObject = {
            "model": self._model_id,
            "messages": [
                {"role": "system", "content": COMPACT_PROMPT},
                {"role": "user", "content": transcript(conversation, cap)},
            ],
        }
        payload = request_payload(own, self._generation)
        try:
            reply = await self._model.complete(payload, QuietSink())
        except ModelError as exc:
            self._events.emit(
                EventKind.NOTICE,
                {"message": f"no summary for the compacted context ({exc}); the brief keeps "
                 "the goal, the plan and the files changed"},
            )  # fmt: skip
            return None
        if reply.usage is not None:
            self._on_usage(reply.usage)
        return reply.content.strip() or None

    def _brief(self, conversation: list[JSONObject], summary: str | None, plan: Plan | None) -> str:
        files = files_changed(conversation) + (self._extra_files() if self._extra_files else [])
        lines, left = [], []
        if plan is not None and self._plans is not None:
            root = self._plans.root
            lines = plan_lines(plan, root)
            left = [s.text for s in plan.steps if step_status(plan, s, root) != "done"]
        return resume_brief(
            goal=quoted(goal_of(conversation)),
            latest=quoted(latest_request(conversation)),
            plan=lines,
            files=list(dict.fromkeys(files)),
            left=left,
            summary=summary,
        )


def quoted(request: str) -> str:
    """A request as a brief quotes it: whole, or its first `QUOTE_CHARS` and a note."""
    if len(request) <= QUOTE_CHARS:
        return request
    left = len(request) - QUOTE_CHARS
    return f"{request[:QUOTE_CHARS]}\n[... {left:,} more characters of this request left out]"
