"""What a task leaves once its turn ended: a commit on its branch, a patch, a push.

Whatever the turn changed in the worktree is committed on the task's branch
(author: the person who queued it; committer: the runner's person), the
commits become the patch stored in the hub (`git format-patch`, empty when
nothing changed), and the branch is pushed to the task's repository when the
runner's `hub.runner.push` is true. A push that fails is a note in `error`,
not a failed task: the patch is in the hub either way. The turn's exit code
decides the state: 0 done, 130 cancelled when a cancel was asked (else
failed), anything else failed with the start of the reply as the error.
"""

from __future__ import annotations

from coding_harness.daemon.sessions.activity import FinishedTurn
from coding_harness.daemon.team.task_claims import Claim, Outcome
from coding_harness.daemon.team.task_repo import TaskTree, commit_all, patch_of, push
from coding_harness.daemon.worktrees.git import GitFailed
from coding_harness.protocol import exit_codes

SUBJECT_CHARS = 60


def subject(claim: Claim) -> str:
    first = next((line.strip() for line in claim.text.splitlines() if line.strip()), "")
    short = first if len(first) <= SUBJECT_CHARS else first[: SUBJECT_CHARS - 1] + "…"
    return f"harness task {claim.id}: {short}" if short else f"harness task {claim.id}"


async def collect(
    *,
    claim: Claim,
    tree: TaskTree,
    finished: FinishedTurn,
    session_id: str,
    committer: str,
    push_to: tuple[str, ...] | None,
    cancelled: bool,
) -> Outcome:
    """The task's outcome; `push_to`: the runner's listed repos when it pushes, else None."""
    outcome = Outcome(
        state=_state(finished.exit_code, cancelled),
        session_id=session_id,
        branch=tree.branch,
        exit_code=finished.exit_code,
    )
    notes: list[str] = []
    if outcome.state != "done":
        notes.append(_why(finished, cancelled))
    try:
        message = f"{subject(claim)}\n\n{claim.text.strip()}\n"
        committed = await commit_all(
            tree, author=claim.person, committer=committer, message=message
        )
        outcome.patch = await patch_of(tree) if committed else ""
    except GitFailed as exc:
        notes.append(f"the changes could not be committed: {exc}")
        committed = False
    if committed and push_to is not None:
        failed = await push(tree, claim.repo, push_to)
        outcome.pushed = failed is None
        if failed is not None:
            notes.append(f"the branch was not pushed: {failed}")
    elif push_to is not None:
        outcome.pushed = False
    outcome.error = "; ".join(notes) or None
    return outcome


def _state(code: int, cancelled: bool) -> str:
    if code == exit_codes.OK:
        return "done"
    if code == exit_codes.INTERRUPTED and cancelled:
        return "cancelled"
    return "failed"


def _why(finished: FinishedTurn, cancelled: bool) -> str:
    if cancelled and finished.exit_code == exit_codes.INTERRUPTED:
        return "cancelled"
    reply = finished.reply.strip().splitlines()
    said = reply[0] if reply else "no reply"
    return f"the turn ended with exit code {finished.exit_code}: {said}"
