"""A websocket's events and pongs read where they arrive, before uvicorn's websocket protocol
parses them, and its packets written as frames of ours.

uvicorn parses each frame with websockets' parser (a Frame object and a generator step per
read), puts it in a queue as an ASGI event, pauses reading until the app takes it, and
wakes the app's reader: as much CPU as the app's own work on the message. Every byte of a
websocket passes our meter first (app/realtime/doors.py `Metered`), which reads each
frame's header anyway; once the app reads the websocket (app/realtime/websocket.py), a
FrameReader there takes each whole final text frame that carries a client's event (`42`)
or pong (`3`), unmasks it and hands its text to the app at once. Every other frame (a
CONNECT, an ack, a close, a ping, anything binary or fragmented) goes on to uvicorn whole,
in order, so its parser always starts at a frame: ordered with the events, as a Socket.IO
client sends none before its CONNECT is answered. From the first frame that is no final
masked text frame within the size limit, or no UTF-8, everything goes to uvicorn for good,
and what it answers (a pong, a close with its code) is as ever.

Until then uvicorn has read nothing it could answer or close on, so what the app sends is
written the same way: each packet's text as a frame straight to the transport (`write_frame`),
in place of uvicorn's ASGI `send`. From then on, and while the transport's writes wait for
a slow reader, uvicorn's `send` takes it."""

from __future__ import annotations

from asyncio import Transport
from collections.abc import Callable
from typing import Any

_TEXT_FIN = 0x81  # a frame's first byte: final, no extension bit, opcode TEXT
_MASKED = 0x80
OURS = (b"42", b"3")  # what the app reads here: a Socket.IO event, an Engine.IO pong


def unmask(payload: bytes, mask: bytes) -> bytes:
    """RFC 6455's unmasking: `payload` XOR the 4-byte `mask` repeated (as one big integer:
    the work is done in C)."""
    size = len(payload)
    key = (mask * (size // 4 + 1))[:size]
    unmasked = int.from_bytes(payload, "little") ^ int.from_bytes(key, "little")
    return unmasked.to_bytes(size, "little")


class FrameReader:
    """Splits a websocket's incoming bytes (`take`): the text of each final text frame of
    ours to `listener`, every other frame's bytes to `forward`, in order."""

    __slots__ = ("_partial", "answers", "for_good", "limit", "listener", "transport")

    def __init__(self, listener: Callable[[str], Any], limit: int, transport: Transport) -> None:
        self.listener, self.limit, self.transport = listener, limit, transport
        self._partial = b""  # the start of a frame not yet whole (at most limit + 8 bytes)
        self.for_good = False  # everything goes to uvicorn from here
        # While the listener hears a message: the frames that answer it, written together.
        self.answers: list[bytes] | None = None

    def take(self, data: bytes, forward: Callable[[bytes], None]) -> None:
        if self.for_good:
            forward(data)
            return
        if self._partial:
            data, self._partial = self._partial + data, b""
        at, end = 0, len(data)
        while at < end:
            if end - at < 2:
                self._partial = data[at:]
                return
            if data[at] != _TEXT_FIN or data[at + 1] < _MASKED:
                break  # no final text frame, or not masked (uvicorn closes then)
            size = data[at + 1] & 0x7F
            if size < 126:
                start = at + 6
            elif size == 126:
                if end - at < 4:
                    self._partial = data[at:]
                    return
                size, start = int.from_bytes(data[at + 2 : at + 4], "big"), at + 8
            else:
                break  # an 8-byte length: never a message of ours
            if size > self.limit:
                break  # uvicorn closes with 1009
            if end < start + size:
                self._partial = data[at:]
                return
            payload = unmask(data[start : start + size], data[start - 4 : start])
            try:
                text = payload.decode()
            except UnicodeDecodeError:
                break  # uvicorn closes with 1007
            if not payload.startswith(OURS):
                forward(data[at : start + size])  # a CONNECT, an ack...: uvicorn's
                at = start + size
                continue
            at = start + size
            self.answers = []
            try:
                self.listener(text)
            finally:  # (it never raises, what fails in it is logged there: still, no frame lost)
                answers, self.answers = self.answers, None
                if answers and not self.transport.is_closing():  # (closed by what it heard)
                    self.transport.write(b"".join(answers))
        else:
            return
        self.for_good = True
        forward(data[at:])


def text_frame(text: str) -> bytes:
    """A server's final text frame of `text` (RFC 6455: unmasked, no extension bit): what
    websockets' `send_text` serializes, without its Frame object and its checks."""
    data = text.encode()
    size = len(data)
    if size < 126:
        return bytes((_TEXT_FIN, size)) + data
    wide = size >= 1 << 16  # its length in 8 bytes (127), else in 2 (126)
    return bytes((_TEXT_FIN, 127 if wide else 126)) + size.to_bytes(8 if wide else 2, "big") + data


def write_frame(socket: Any, reader: FrameReader, text: str) -> bool:
    """A connection's outgoing `text` written straight to its transport as a frame, in the
    place of uvicorn's ASGI `send` (a coroutine, an event, websockets' Frame serialized and
    its output joined: 8% of the server's CPU at 200 tables): True once it is written,
    False (nothing done) when uvicorn's `send`, through the connection's writer, must take
    it instead:

    - once the connection's `reader` reads for good (a close, a ping, a frame it does not
      take: from there uvicorn may answer or close, and its close must be the last frame);
    - once the transport closes (uvicorn's own close at shutdown closes it at once);
    - while the transport's writes are paused (a slow reader: uvicorn's `send` waits).

    `socket` is the connection's meter (app/realtime/doors.py `Metered`), `paused` while its
    transport asks for its writes to wait; `reader` reads that transport. While the
    `reader` hears one of the connection's own messages, what answers it (its ack, the state
    it made) is gathered, and the reader writes it all at once after: one write, not two."""
    transport = reader.transport  # (the meter's)
    if reader.for_good or socket.paused or transport.is_closing():
        return False
    (transport.write if reader.answers is None else reader.answers.append)(text_frame(text))
    return True
