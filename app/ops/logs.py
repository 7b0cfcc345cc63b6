"""Structured logs: one JSON line per event worth knowing (room opened, game over, ...).

`log_event("room_opened", room=code)` writes {"ts", "level", "event", "room"}. Never pass
a token or a face-down card.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

logger = logging.getLogger("app")  # the parent of every app.* module's logger


class JsonFormatter(logging.Formatter):
    """A record as one JSON object: time, level, event, the event's fields, any error."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        line: dict[str, Any] = {
            "ts": f"{stamp}.{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "event": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure_logging(level: str, *, server_too: bool = False) -> None:
    """The app's log (and with `server_too` uvicorn's) goes to stdout as JSON lines; set up
    once, later calls only set the level."""
    names = ["app", "uvicorn"] if server_too else ["app"]
    for target in map(logging.getLogger, names):
        if not any(isinstance(h.formatter, JsonFormatter) for h in target.handlers):
            handler = logging.StreamHandler(sys.stdout)
            handler.setFormatter(JsonFormatter())
            target.addHandler(handler)
            target.propagate = False
        target.setLevel(level.upper())


def log_event(
    event: str, *, level: int = logging.INFO, exc_info: bool | BaseException = False, **fields: Any
) -> None:
    logger.log(level, event, exc_info=exc_info, extra={"fields": fields})
