"""Names of every JSON-RPC method and event kind, as constants.

docs/protocol.md describes each; a client or daemon never spells one inline.
"""

from __future__ import annotations

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

INITIALIZE: Final = "initialize"

DAEMON_STATUS: Final = "daemon.status"
DAEMON_SHUTDOWN: Final = "daemon.shutdown"
DAEMON_RELOAD: Final = "daemon.reload"

SESSION_CREATE: Final = "session.create"
SESSION_LIST: Final = "session.list"
SESSION_ATTACH: Final = "session.attach"
SESSION_DETACH: Final = "session.detach"
SESSION_SUBMIT: Final = "session.submit"
SESSION_CANCEL: Final = "session.cancel"
SESSION_HISTORY: Final = "session.history"
SESSION_RESET: Final = "session.reset"
SESSION_CLOSE: Final = "session.close"
SESSION_CONFIGURE: Final = "session.configure"
SESSION_CONTEXT: Final = "session.context"
SESSION_COMPACT: Final = "session.compact"
SESSION_UNDO: Final = "session.undo"  # put back the files a turn (and later ones) wrote
SESSION_CHECKPOINTS: Final = "session.checkpoints"
SESSION_MAP: Final = "session.map"  # the repo map the session's next coding turn is shown
SESSION_REMOVE: Final = "session.remove"  # {sessions: [id]}: forget them (not a running one)
SESSION_PRUNE: Final = "session.prune"  # {days}: remove the idle sessions older than that
SESSION_APPEND: Final = "session.append"  # {session, text}: the user's own `!cmd` and its output

# A session's git worktree (`session.create {worktree}` makes one): each takes `{worktree: ID}`,
# the worktree's name or its session's id, short id or a prefix.
WORKTREE_LIST: Final = "worktree.list"  # {}: every worktree the daemon made, and its state
WORKTREE_DIFF: Final = "worktree.diff"  # its changes against the branch it came from
WORKTREE_MERGE: Final = "worktree.merge"  # into the branch it came from; a conflict is reported
WORKTREE_REMOVE: Final = "worktree.remove"  # {worktree, force?}: unmerged work needs force

# The team hub (docs/team.md), for a daemon whose global file names one.
HUB_SESSIONS: Final = "hub.sessions"  # {}: every runner's sessions, from the hub
QUEUE_SUBMIT: Final = "queue.submit"  # {text, repo?, ref?, cwd}: a task for any runner
QUEUE_LIST: Final = "queue.list"  # {}: the hub's tasks, newest first
QUEUE_CANCEL: Final = "queue.cancel"  # {task}: a queued task never starts; a running one stops

PLAN_GET: Final = "plan.get"
SKILLS_LIST: Final = "skills.list"

APPROVAL_RESPOND: Final = "approval.respond"

STATS_GET: Final = "stats.get"

PROVIDER_LIST: Final = "provider.list"
PROVIDER_USE: Final = "provider.use"
MODEL_USE: Final = "model.use"
MODEL_LIST: Final = "model.list"  # {session}: the models the session's server offers
PROVIDER_DISCOVER: Final = "provider.discover"  # local servers and key variables found
PROVIDER_WINDOW: Final = "provider.window"  # the model's context window, from its server

MEMORY_GET: Final = "memory.get"  # a project's turn-close notes
MEMORY_SET: Final = "memory.set"

MCP_LIST: Final = "mcp.list"  # the MCP servers the daemon holds, and those a folder configures
MCP_RESTART: Final = "mcp.restart"

# The one notification the daemon sends.
EVENT: Final = "event"

# Requests the daemon sends to a client that announced the capability.
CLIENT_READ_TEXT_FILE: Final = "client.read_text_file"  # an editor's unsaved buffer
CLIENT_WRITE_TEXT_FILE: Final = "client.write_text_file"  # an edit to a file it holds unsaved


class EventKind:
    """The `kind` of an `event` notification."""

    TURN_STARTED: Final = "turn.started"
    TURN_QUEUED: Final = "turn.queued"
    TEXT_DELTA: Final = "text.delta"
    REASONING_DELTA: Final = "reasoning.delta"
    TOOL_CALL: Final = "tool.call"
    TOOL_RESULT: Final = "tool.result"
    DIFF: Final = "diff"
    APPROVAL_REQUESTED: Final = "approval.requested"
    APPROVAL_RESOLVED: Final = "approval.resolved"
    CHECK_STARTED: Final = "check.started"  # {command}: the check after an applied edit runs
    CHECK_RESULT: Final = "check.result"
    USAGE: Final = "usage"
    NOTICE: Final = "notice"
    ERROR: Final = "error"
    TURN_FINISHED: Final = "turn.finished"
    INTENT: Final = "intent"
    PLAN: Final = "plan"
    COMPACTED: Final = "context.compacted"
    MODEL_WAITING: Final = "model.waiting"  # {seconds, done}: no byte from the model yet
    EDIT_WRITE: Final = "edit.write"  # the journal of a file write, before and after it
    CHECKPOINT: Final = "checkpoint"  # {turn, files}: what a turn's writes can be undone to
    UNDO: Final = "undo"  # {turn, restored, skipped}
    MODE_CHANGED: Final = "mode.changed"  # {mode, client}
    MCP_STATE: Final = "mcp.state"  # {name, state, error}: an MCP server the session uses
    HOOK: Final = "hook"  # {event, command, exit_code, blocked, output}: a hook ran
    INDEX_STATE: Final = "index.state"  # {root, state, done, total, files, seconds, error}


# "always" is yes, and the request's `allow` entry runs unasked for the rest of the session.
DECISIONS: Final = ("yes", "no", "skip", "revert", "always")
