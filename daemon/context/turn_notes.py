"""Turn-close notes: after a coding turn has finished, one short call asks for notes.

The turn's transcript (its request, the assistant's words, its tool calls and
shortened results) goes to the session's model in one non-streaming request
with `max_tokens` 1024, asking for `{"decisions": [], "facts": [], "todo": []}`
(`agent/prompts.py`, `notes_parse.py`). A profile with `json_schema` (the
default for type openai) adds `response_format: {"type": "json_schema", ...}`;
a server that refuses that as an invalid request is asked once more in words,
and remembered, while the daemon runs, as one that takes no schema. The
answer is parsed leniently and kept in the store under the project
(`notes.py`), cleaned and redacted with the session's secrets. The
call's tokens count like any call's: the session's usage, a `usage` event,
the store's totals (not the turn's: its `turn.finished` has gone out, and the
event's `turn` stays what that said); the exchange goes to the `--debug` log
marked as the notes call; a call that would pass a spending limit is not made. Any
failure is an empty result and a debug line: no event, no error, and the
turn (already finished) is not touched. When the call is made, and its
waiting for an idle session on a local server, is `notes_schedule.py`'s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from coding_harness.daemon.agent.frames import escape_tags
from coding_harness.daemon.agent.model_errors import ModelBadRequest
from coding_harness.daemon.agent.prompts import NOTES_PROMPT
from coding_harness.daemon.agent.seams import JSONObject, Model, QuietSink, Usage
from coding_harness.daemon.config.generation import request_payload
from coding_harness.daemon.config.loader import Config
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.context.notes_parse import NOTES_SCHEMA, TurnNotes, parse_notes
from coding_harness.daemon.providers.pool import PoolKey, ProviderPool, pool_key
from coding_harness.daemon.sessions.debug_log import DEBUG_SWITCHES
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.usage_rows import UsageRow
from coding_harness.daemon.turns.assemble import api_key, session_secrets
from coding_harness.daemon.usage.cost import add_cost, cost_usd
from coding_harness.daemon.usage.spending import TurnSpending, turn_spending
from coding_harness.protocol.methods import EventKind

log = logging.getLogger(__name__)

NOTES_MAX_TOKENS = 1024
NOTES_TIMEOUT_SECONDS = 120.0
TRANSCRIPT_CHARS = 16_000
_PART_CHARS = {"user": 2_000, "assistant": 1_500, "tool": 400, "arguments": 300}


class SchemaRefusals:
    """The servers (pool keys) that refused `response_format: json_schema`, while the
    daemon runs."""

    def __init__(self) -> None:
        self._keys: set[PoolKey] = set()

    def refused(self, profile: ProviderProfile) -> bool:
        return pool_key(profile) in self._keys

    def remember(self, profile: ProviderProfile) -> None:
        self._keys.add(pool_key(profile))


@dataclasses.dataclass(kw_only=True, slots=True)
class NotesJob:
    """What one notes call needs, taken when the turn finished."""

    session: Session
    profile: ProviderProfile
    config: Config
    turn: str
    messages: list[JSONObject]  # the turn's messages, a copy
    turn_usage: Usage  # the turn's own totals, as `turn.finished` said them (never added to)


# Exit codes of a turn that ended normally (done, a failed check, a rejected edit).
NOTED_EXITS = frozenset({0, 2, 3})


def wants_notes(
    session: Session, config: Config, route: str, exit_code: int, profile: ProviderProfile
) -> bool:
    """Whether a finished turn gets its notes call: a tool-loop turn (coding or hybrid)
    that ended normally, on a profile that takes notes, in a session with a store
    (where notes are kept) and with tokens left in its budget."""
    budget = session.options.token_budget or config.agent.session_token_budget
    used = session.usage.prompt_tokens + session.usage.completion_tokens
    return (
        profile.notes
        and route in ("coding", "hybrid")
        and exit_code in NOTED_EXITS
        and session.store is not None
        and not (budget and used >= budget)
    )


async def take_notes(job: NotesJob, pool: ProviderPool, refusals: SchemaRefusals) -> TurnNotes:
    """Ask for the turn's notes and keep them; empty on any failure (never raises,
    except for cancellation)."""
    store = job.session.store
    if store is None:
        return TurnNotes()
    try:
        project = str(job.session.cwd)
        kept = [note.text for note in store.notes.read(project)]
        payload = _request(job, kept)
        stop = _spending(job).check(payload["messages"])
        if stop is not None:
            log.debug("turn %s: no notes taken: %s", job.turn, stop)
            return TurnNotes()
        text = await asyncio.wait_for(
            _ask_for_notes(_asker(job, pool), job.profile, refusals, payload),
            NOTES_TIMEOUT_SECONDS,
        )
        notes = parse_notes(text)
        if notes:
            redact = session_secrets(job.session, job.config).redact
            store.notes.add(project, notes.pairs(), redact)
        return notes
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # note-taking never fails a turn, nor shows up as an error
        log.debug("turn %s: no notes taken (%s: %s)", job.turn, type(exc).__name__, exc)
        return TurnNotes()


Ask = Callable[[JSONObject], Awaitable[str]]


def _spending(job: NotesJob) -> TurnSpending:
    """The spending limits' view of the notes call: every recorded call counts, the
    finished turn's too (its rows are in the store under its own id)."""
    limits = job.config.agent
    return turn_spending(
        session_limit=limits.spend_limit_session_usd,
        day_limit=limits.spend_limit_day_usd,
        profile=job.profile,
        store=job.session.store.usage if job.session.store is not None else None,
        session_id=job.session.id,
        turn_id=f"{job.turn}:notes",
        session_cost=lambda: job.session.cost_usd,
    )


def _asker(job: NotesJob, pool: ProviderPool) -> Ask:
    """One non-streaming request to the session's model, its tokens counted."""
    model = _whole_answer_model(job, pool)
    count = _usage_counter(job)

    async def ask(payload: JSONObject) -> str:
        reply = await model.complete(payload, QuietSink())
        if reply.usage is not None:
            count(reply.usage)
        return reply.content

    return ask


def _whole_answer_model(job: NotesJob, pool: ProviderPool) -> Model:
    """The profile's model asked for the whole answer at once (no stream, no retries:
    a failed notes call is simply no notes). While the session's `--debug` log is on
    the call's exchange goes there too, each line marked `"notes": true` with the
    turn's id: it follows the turn's last request and must never pass for it."""
    session, key = job.session, api_key(job.session, job.profile)
    recorder = None
    if DEBUG_SWITCHES.is_on(session.id):
        secrets = session_secrets(session, job.config)
        marks: JSONObject = {"notes": True, "turn": job.turn}
        recorder = DEBUG_SWITCHES.recorder(session.id, secrets, key, marks=marks)
    return pool.model_for(dataclasses.replace(job.profile, type="mlx"), key, recorder)


async def _ask_for_notes(
    ask: Ask, profile: ProviderProfile, refusals: SchemaRefusals, payload: JSONObject
) -> str:
    if not profile.json_schema or refusals.refused(profile):
        return await ask(payload)
    try:
        return await ask({**payload, "response_format": _RESPONSE_FORMAT})
    except ModelBadRequest as exc:
        log.debug("%s refused response_format json_schema (%s); asking in words", profile.name, exc)
        refusals.remember(profile)
        return await ask(payload)


_RESPONSE_FORMAT: JSONObject = {
    "type": "json_schema",
    "json_schema": {"name": "turn_notes", "schema": NOTES_SCHEMA},
}


def _transcript(job: NotesJob) -> str:
    """The turn's messages; tool output in them cannot close the transcript's frame."""
    return escape_tags(transcript(job.messages), "transcript")


def _request(job: NotesJob, kept: list[str]) -> JSONObject:
    known = "\n".join(f"- {text}" for text in kept[-20:]) or "(none yet)"
    user = (
        f"Transcript of the turn:\n<transcript>\n{_transcript(job)}\n</transcript>\n\n"
        f"Notes already kept for this project (do not repeat them):\n{known}\n\n"
        "Answer with the JSON object only."
    )
    own: JSONObject = {
        "model": job.profile.model,
        "messages": [
            {"role": "system", "content": NOTES_PROMPT},
            {"role": "user", "content": user},
        ],
    }
    return request_payload(own, _generation(job.profile.generation))


def _generation(generation: Any) -> JSONObject:
    """The profile's sampling settings with the notes call's own token cap winning."""
    chosen: JSONObject = dict(generation)
    key = "max_completion_tokens" if "max_completion_tokens" in generation else "max_tokens"
    chosen[key] = NOTES_MAX_TOKENS
    return chosen


def transcript(messages: list[JSONObject], limit: int = TRANSCRIPT_CHARS) -> str:
    """The turn as plain lines, each part shortened; the middle cut out past `limit`."""
    lines = [line for message in messages for line in _lines(message)]
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    head, tail = limit // 5, limit - limit // 5
    cut = f"[... {len(text) - limit} characters left out ...]"
    return f"{text[:head]}\n{cut}\n{text[-tail:]}"


def _lines(message: Any) -> list[str]:
    if not isinstance(message, dict):
        return []
    role = str(message.get("role", ""))
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content or "", ensure_ascii=False)
    lines = [f"{role.upper()}: {_short(text, _PART_CHARS.get(role, 400))}"] if text.strip() else []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            arguments = _short(str(function.get("arguments", "")), _PART_CHARS["arguments"])
            lines.append(f"CALL {function.get('name')}: {arguments}")
    return lines


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit} more]"


def _usage_counter(job: NotesJob) -> Callable[[Usage], None]:
    """Counts the call's tokens for the session, its clients and the store; not for the
    turn: the `usage` event's `turn` stays the turn's own totals, as `turn.finished`
    and the one-shot's result gave them."""
    session, profile = job.session, job.profile

    def count(usage: Usage) -> None:
        if not (usage.prompt_tokens or usage.completion_tokens):
            return  # a call that reports no tokens adds nothing
        cost = cost_usd(usage, profile)
        session.usage.add(usage)
        session.cost_usd = add_cost(session.cost_usd, cost)
        session.emit(
            EventKind.USAGE,
            {
                **usage.to_wire(),
                "turn": job.turn_usage.to_wire(),
                "session_cost_usd": session.cost_usd,
                "notes": True,
            },
        )
        if session.store is not None:
            row = UsageRow(
                turn=job.turn,
                provider=profile.name,
                model=profile.model,
                prompt_tokens=usage.prompt_tokens,
                cached_tokens=usage.cached_tokens,
                completion_tokens=usage.completion_tokens,
                cost_usd=cost,
            )
            session.store.usage.record(session.id, [row])

    return count
