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


# What a client can make us log as often as it likes is at most this many lines a second
# for the whole server (a burst of this many at once).
THROTTLE_RATE = 1.0
THROTTLE_BURST = 10


class Allowance:
    """At most `rate` lines a second for the whole server, `burst` at once, timed by the
    stamps it is given (a log reads no clock of its own); it counts the lines it held back
    so the next one can say how many went untold."""

    def __init__(self, rate: float = THROTTLE_RATE, burst: int = THROTTLE_BURST) -> None:
        self.rate, self.burst = rate, float(burst)
        self.tokens = float(burst)
        self.stamp: float | None = None
        self.untold = 0

    def take(self, now: float) -> int | None:
        """None when the line is held back (and counted); else how many went untold before."""
        since = 0.0 if self.stamp is None else max(0.0, now - self.stamp)
        self.tokens = min(self.burst, self.tokens + since * self.rate)
        self.stamp = now
        if self.tokens < 1:
            self.untold += 1
            return None
        self.tokens -= 1
        untold, self.untold = self.untold, 0
        return untold


class Throttled:
    """One event's JSON lines, rate-limited for the whole server (`Allowance`), each with
    the number that went untold before it: for what a client can cause as often as it likes
    (a refused connection, a refused frame)."""

    def __init__(
        self, event: str, rate: float = THROTTLE_RATE, burst: int = THROTTLE_BURST
    ) -> None:
        self.event = event
        self.allowance = Allowance(rate, burst)

    def log(self, now: float, **fields: Any) -> None:
        untold = self.allowance.take(now)
        if untold is not None:
            log_event(self.event, level=logging.WARNING, **fields, untold=untold)


class Bounded(logging.Filter):
    """What the libraries under us log, made as bounded as our own lines: no traceback (a
    client's malformed request is no bug of ours, and 10-21 lines each, as often as a
    client likes, is a flood), at most `rate` lines a second for the whole server (burst
    `burst`), each saying how many went untold before it; and uvicorn's lines below WARNING
    (two per connection: opened, closed) only when the log level is debug."""

    def __init__(self, rate: float = THROTTLE_RATE, burst: int = THROTTLE_BURST) -> None:
        super().__init__()
        self.allowance = Allowance(rate, burst)  # timed by the records' own stamps

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING and not logging.getLogger("app").isEnabledFor(
            logging.DEBUG
        ):
            return False
        untold = self.allowance.take(record.created)
        if untold is None:
            return False
        if record.exc_info:
            error = record.exc_info[1]
            record.exc_info, record.exc_text = None, None
            fields = {"error": repr(error)[:200]}
        else:
            fields = {}
        record.fields = {
            **getattr(record, "fields", {}),
            **fields,
            "logger": record.name,
            "untold": untold,
        }
        return True


LIBRARIES = "app.libraries"  # python-socketio's and python-engineio's loggers (library_logger)


def library_logger(name: str) -> logging.Logger:
    """The logger a library is handed (python-socketio's `logger`, python-engineio's
    `engineio_logger`): under `app`, so its lines are JSON lines, bounded (Bounded)."""
    logger = logging.getLogger(f"{LIBRARIES}.{name}")
    if not any(isinstance(f, Bounded) for f in logger.filters):
        logger.addFilter(Bounded())
    return logger


def configure_logging(level: str, *, server_too: bool = False) -> None:
    """The app's log (and with `server_too` uvicorn's) goes to stdout as JSON lines; set up
    once, later calls only set the level."""
    names = ["app", "uvicorn"] if server_too else ["app"]
    for target in map(logging.getLogger, names):
        if not any(isinstance(h.formatter, JsonFormatter) for h in target.handlers):
            handler = logging.StreamHandler(sys.stdout)
            handler.setFormatter(JsonFormatter())
            if target.name == "uvicorn":
                handler.addFilter(Bounded())
            target.addHandler(handler)
            target.propagate = False
        target.setLevel(level.upper())


def log_event(
    event: str, *, level: int = logging.INFO, exc_info: bool | BaseException = False, **fields: Any
) -> None:
    logger.log(level, event, exc_info=exc_info, extra={"fields": fields})
