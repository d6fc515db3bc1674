"""The model error tree: every way a model call can fail, as the agent sees it.

The agent loop, compaction, intent and the turn runner handle these; the
providers raise them (`providers/errors.py` turns a failed HTTP answer into
one, `transport_errors.py` a transport failure, `answer_errors.py` an error
inside a successful answer). Nothing above the provider layer ever sees an
`httpx` exception.

    ModelError
    +-- ModelUnavailable       nothing answers: refused, connect timeout, DNS
    +-- ModelTimeout           no first byte in time, or silence past the idle limit
    +-- ModelRateLimited       429 (any error may carry retry_after from the server)
    +-- ModelRequestRejected   4xx: bad request, key, model, size
    |   +-- ModelContextExceeded   the conversation does not fit the context
    |   +-- ModelBadRequest        the request itself is invalid (400, 422, or a
    |       |                      500 whose body is a validation or parse error)
    |       +-- ModelToolsUnsupported  the model takes no tools ("does not support tools")
    +-- ModelServerError       5xx
    +-- ModelBadResponse       a success status with a body we cannot use
    +-- ModelStreamCut         the stream ended before the answer did
        +-- ModelStreamEmpty   ... before its first event (see stream_fallback.py)

Messages are one line, name the endpoint, and say what to do where we know.
"""

from __future__ import annotations

from typing import ClassVar


class ModelError(Exception):
    """A provider request failed; `message` is one line fit to show a user."""

    default_retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        endpoint: str,
        status: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.endpoint = endpoint
        self.status = status
        self.retryable = self.default_retryable if retryable is None else retryable
        self.retry_after = retry_after

    def amend(self, text: str) -> None:
        """Add `text` to the message (the same line), e.g. why it was not retried."""
        self.message = f"{self.message}{text}"
        self.args = (self.message,)


class ModelUnavailable(ModelError):
    default_retryable = True


class ModelTimeout(ModelError):
    default_retryable = True


class ModelRateLimited(ModelError):
    default_retryable = True

    def __init__(
        self,
        message: str,
        *,
        endpoint: str,
        status: int | None = 429,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(
            message, endpoint=endpoint, status=status, retryable=retryable, retry_after=retry_after
        )


class ModelRequestRejected(ModelError):
    default_retryable = False


class ModelContextExceeded(ModelRequestRejected):
    pass


class ModelBadRequest(ModelRequestRejected):
    """The server says the request itself is invalid: the same request gets the same answer."""


class ModelToolsUnsupported(ModelBadRequest):
    """The model cannot be offered tools (Ollama: "MODEL does not support tools"): its
    turns go on in the text edit format (`turns/text_edits.py`)."""


class ModelServerError(ModelError):
    default_retryable = True


class ModelBadResponse(ModelError):
    default_retryable = False


class ModelStreamCut(ModelError):
    default_retryable = True


class ModelStreamEmpty(ModelStreamCut):
    """A 200 event stream that ended (cleanly or not) before its first event."""
