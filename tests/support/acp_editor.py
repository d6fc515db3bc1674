"""A scripted editor: the ACP SDK's client side, driving a real `harness acp` process.

`Editor` records every `session/update` it is sent and every raw message that
reaches it (so a test sees `$/cancel_request`, which the SDK does not handle),
answers permission requests from a queue of choices (an option id, `cancelled`,
or `error` to fail the request; or holds them until the test releases them),
serves `fs/read_text_file` from `buffers`, its "unsaved" texts, and takes
`fs/write_text_file` into them, saving the file as Zed does (`writes` records
each). `open_editor` starts `harness acp` with the sandbox's
environment and stops it, whatever happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import schema, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.exceptions import RequestError


@dataclass
class Editor:
    choices: list[str] = field(default_factory=list)  # option ids, in order; empty: hold
    buffers: dict[str, str] = field(default_factory=dict)
    updates: list[tuple[str, Any]] = field(default_factory=list)
    incoming: list[dict[str, Any]] = field(default_factory=list)
    permission_requests: list[Any] = field(default_factory=list)
    read_requests: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    held: asyncio.Queue[str] = field(default_factory=asyncio.Queue)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        self.permission_requests.append(tool_call)
        choice = self.choices.pop(0) if self.choices else await self.held.get()
        if choice == "error":  # a client that fails the request instead of answering
            raise RequestError.internal_error({"why": "the editor's dialog failed"})
        if choice == "cancelled":
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kw: Any,
    ) -> schema.ReadTextFileResponse:
        self.read_requests.append(path)
        if path not in self.buffers:
            raise FileNotFoundError(path)
        return schema.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kw: Any
    ) -> schema.WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        await asyncio.to_thread(Path(path).write_text, content)  # saved, as Zed saves it
        return schema.WriteTextFileResponse()

    def observe(self, event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING:
            self.incoming.append(event.message)

    def kinds(self, session: str | None = None) -> list[str]:
        return [update.session_update for sid, update in self.updates if session in (None, sid)]

    def text(self, kind: str = "agent_message_chunk", session: str | None = None) -> str:
        return "".join(
            getattr(update.content, "text", "")
            for sid, update in self.updates
            if update.session_update == kind and session in (None, sid)
        )

    def of_kind(self, kind: str) -> list[Any]:
        return [update for _, update in self.updates if update.session_update == kind]

    def cancelled_requests(self) -> list[Any]:
        return [
            message.get("params", {}).get("requestId")
            for message in self.incoming
            if message.get("method") == "$/cancel_request"
        ]


@contextlib.asynccontextmanager
async def open_editor(
    env: dict[str, str],
    cwd: Path,
    editor: Editor,
    *,
    read_files: bool = False,
    write_files: bool = False,
    protocol_version: int = 1,
) -> AsyncIterator[ClientSideConnection]:
    """`harness acp` started and initialized, as an editor would (announcing
    `protocol_version`, and the fs methods it serves)."""
    async with spawn_agent_process(
        editor,
        sys.executable,
        "-m",
        "coding_harness.client",
        "acp",
        env=env,
        cwd=str(cwd),
        observers=[editor.observe],
        use_unstable_protocol=True,
        transport_kwargs={"stderr": None},  # the bridge's log goes to the test's stderr
    ) as (conn, process):
        try:
            capabilities = schema.ClientCapabilities(
                fs=schema.FileSystemCapabilities(
                    read_text_file=read_files, write_text_file=write_files
                )
            )
            await asyncio.wait_for(
                conn.initialize(
                    protocol_version=protocol_version,
                    client_capabilities=capabilities,
                    client_info=schema.Implementation(name="test-editor", version="1"),
                ),
                30,
            )
            yield conn
        finally:
            if process.returncode is None:
                process.terminate()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.wait(), 10)
            if process.returncode is None:
                process.kill()
                await process.wait()


def text_prompt(text: str) -> list[schema.TextContentBlock]:
    return [schema.TextContentBlock(type="text", text=text)]
