"""Asking for whole answers when a server cannot stream a request with tools.

Some OpenAI-compatible servers take `"stream": true` with tools and then fail:
llama-cpp-python answers 200 and aborts the body before its first event ("Automatic
streaming tool choice is not supported"). `StreamOrWhole` is the `openai`
profile's `Model`: it streams, and when a request with tools gets a stream that
ends before its first event (`ModelStreamEmpty`), it asks the same request again
once without streaming, as an `mlx` profile would. Only when that whole answer
comes back is the stream's failure taken for the server's limit: a server that
refuses the request itself (a prompt over its context, say) refuses the whole
one too, and that error is the one raised, with nothing remembered. Then
`WholeAnswerMemory` (kept by the `ProviderPool`, so for as long as the daemon
runs) remembers the profile, so later requests with tools go straight to a whole
answer; requests without tools still stream. The first time, a `notice` says so
and names the config fix.
"""

from __future__ import annotations

import logging

from coding_harness.daemon.agent.model_errors import ModelStreamEmpty
from coding_harness.daemon.agent.seams import JSONObject, Model, ModelReply, StreamSink
from coding_harness.daemon.providers.errors import CONFIG_HINT

log = logging.getLogger(__name__)


def fallback_notice(name: str, endpoint: str) -> str:
    """The one line users see the first time a profile falls back."""
    return (
        f"{endpoint} cannot stream an answer with tools (the stream ended before it began);"
        f" profile {name!r} now asks for whole answers when tools are offered. To skip the"
        f' failed try after a restart, set "type": "mlx" for it in {CONFIG_HINT}'
    )


class WholeAnswerMemory:
    """The profiles (by pool key) whose server cannot stream a request with tools."""

    def __init__(self) -> None:
        self._keys: set[object] = set()

    def knows(self, key: object) -> bool:
        return key in self._keys

    def remember(self, key: object) -> bool:
        """Note `key`; True the first time (when users should be told)."""
        first = key not in self._keys
        self._keys.add(key)
        return first


class StreamOrWhole:
    """Streams through `streaming`; falls back to `whole` as described above."""

    def __init__(
        self,
        streaming: Model,
        whole: Model,
        *,
        memory: WholeAnswerMemory,
        key: object,
        notice: str,
    ) -> None:
        self._streaming = streaming
        self._whole = whole
        self._memory = memory
        self._key = key
        self._notice = notice

    @property
    def label(self) -> str:
        return self._streaming.label

    async def complete(self, payload: JSONObject, sink: StreamSink) -> ModelReply:
        with_tools = bool(payload.get("tools"))
        if with_tools and self._memory.knows(self._key):
            return await self._whole.complete(payload, sink)
        try:
            return await self._streaming.complete(payload, sink)
        except ModelStreamEmpty:
            if not with_tools:
                raise
        reply = await self._whole.complete(payload, sink)  # its error, if any, is the real one
        if self._memory.remember(self._key):
            tell(sink, self._notice)
        return reply


def tell(sink: StreamSink, message: str) -> None:
    """A notice to the people attached, through a sink that can pass one on."""
    notice = getattr(sink, "notice", None)
    if callable(notice):
        notice(message)
    else:
        log.warning("%s", message)
