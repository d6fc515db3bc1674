"""The `mlx` provider type (aliases ollama, omlx, sushi): a local server asked without streaming.

Local OpenAI-compatible servers (mlx_lm.server, Ollama, LM Studio) are asked for
the whole answer in one JSON body, as the reference designs do; their streamed
tool calls are the least reliable part of them. The text is handed to the sink
once the answer is in, so attached clients still see it. The first byte of
that answer may take the whole generation, so the profile's
`timeouts.first_byte` defaults to a longer wait here (`profiles.default_limits`);
the body is read up to `bodies.WHOLE_ANSWER_LIMIT`. An `openai` profile whose
server cannot stream a request with tools is asked through this too
(`stream_fallback.py`).
"""

from __future__ import annotations

import logging

import httpx

from coding_harness.daemon.agent.seams import JSONObject, ModelReply, StreamSink
from coding_harness.daemon.providers.bodies import read_error_body, read_whole_answer
from coding_harness.daemon.providers.chunks import reply_from_completion
from coding_harness.daemon.providers.errors import error_from_response
from coding_harness.daemon.providers.openai_stream import (
    HTTP_ERRORS,
    parse_json,
    replay,
    request_headers,
)
from coding_harness.daemon.providers.profile_model import ProfileModel, watch_response
from coding_harness.daemon.providers.stall import StallWatch
from coding_harness.daemon.providers.transport_errors import translate_httpx_error
from coding_harness.daemon.providers.wire import wire_payload

log = logging.getLogger(__name__)

# No read limit here: `StallWatch` times the first byte and the gaps (profile `timeouts`).
LOCAL_TIMEOUT = httpx.Timeout(connect=30.0, read=None, write=60.0, pool=30.0)


class LocalModel(ProfileModel):
    """A `Model` that posts one non-streaming request to a local server."""

    async def complete(self, payload: JSONObject, sink: StreamSink) -> ModelReply:
        endpoint = self._profile.endpoint
        body = {k: v for k, v in wire_payload(payload).items() if k != "stream_options"}
        body["stream"] = False
        log.debug("POST %s (whole answer, model %s)", endpoint, payload.get("model"))
        headers = request_headers(self._api_key, "application/json")
        try:
            async with (
                self._recorded(headers, body) as exchange,
                StallWatch(self._profile, sink).guard() as watch,
                self._borrow() as client,
                client.stream(
                    "POST", endpoint, json=body, headers=headers, timeout=LOCAL_TIMEOUT
                ) as response,
            ):
                watch_response(exchange, watch, response)
                if not response.is_success:
                    text = await read_error_body(response, watch)
                    profile = self._profile
                    raise error_from_response(response.status_code, text, response.headers, profile)
                text = await read_whole_answer(response, watch, endpoint)
        except HTTP_ERRORS as exc:
            raise translate_httpx_error(exc, endpoint, LOCAL_TIMEOUT) from exc
        reply = reply_from_completion(parse_json(text, endpoint, "the body"), endpoint)
        replay(reply, sink)
        return reply
