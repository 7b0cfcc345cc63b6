"""Long-polling as strict as websockets: a POST's body is read here, checked by the
Socket.IO server of either transport (app/realtime/guards.py `FrameGuards.polled`: every
packet charged, a malformed body refused with the same cut-off) and only then handed to
python-engineio, which would otherwise log a traceback for a body it cannot read and answer
200 (it does so, as often as asked)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

Scope = dict[str, Any]
BAD_BODY = b"Bad request"


def is_polled_post(scope: Scope) -> bool:
    return (
        scope["type"] == "http"
        and scope.get("method") == "POST"
        and scope.get("path", "").startswith("/socket.io")
    )


async def guarded_post(sio: Any, app: Any, scope: Scope, receive: Any, send: Any) -> None:
    """Reads the body (at most the message cap: python-engineio's own), checks it, then
    serves the request with it (`app`) or answers 400 itself."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    sid = (query.get("sid") or [""])[0]
    limit = sio.eio.max_http_buffer_size
    chunks: list[bytes] = []
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return  # the client went away
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            break  # python-engineio refuses it by its length: it is not read further
        chunks.append(chunk)
        more = message.get("more_body", False)
    body = b"".join(chunks)
    if size <= limit and not sio.polled(sid, body):
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [(b"content-type", b"text/plain"), (b"connection", b"close")],
            }
        )
        await send({"type": "http.response.body", "body": BAD_BODY})
        return
    replayed = False

    async def replay() -> dict[str, Any]:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        message: dict[str, Any] = await receive()
        return message

    await app(scope, replay, send)
