"""HTTP routes: create a room, look one up, health. The pages live in app/web/pages.py."""

from __future__ import annotations

import json
import time
import unicodedata
from typing import Any, TypeVar

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError

from app.cluster.node import ClusterNode
from app.ops.limits import address_key
from app.ops.metrics import CONTENT_TYPE
from app.tables.registry import Rooms
from app.tournaments.registry import Tournaments
from app.web.lookups import CodeLookups
from app.wire.names import NAME_FORBIDDEN, clean_name
from app.wire.protocol import (
    EVENT_NAME_MAX,
    CreateEvent,
    CreateRoom,
    ErrorCode,
    ProtocolError,
    refusal,
)
from app.wire.rules_schema import merged_rules
from engine import Rules

router = APIRouter()
M = TypeVar("M", bound=BaseModel)

STATUS = {
    ErrorCode.NO_ROOM: 404,
    ErrorCode.TOO_LARGE: 413,
    ErrorCode.TOO_MANY_ROOMS: 503,
    ErrorCode.STORE_UNAVAILABLE: 503,
    ErrorCode.SHUTTING_DOWN: 503,
    ErrorCode.RATE_LIMITED: 429,
}


def error_response(error: ProtocolError) -> JSONResponse:
    return JSONResponse({"error": refusal(error)}, status_code=STATUS.get(error.code, 422))


@router.post("/api/rooms", status_code=201)
async def create_room(request: Request) -> Any:
    rooms: Rooms = request.app.state.rooms
    try:
        if not await request.app.state.room_limit.admit(client_host(request), time.monotonic()):
            raise ProtocolError(ErrorCode.RATE_LIMITED, "too many new rooms: try in a minute")
        wanted = parse_create(await read_body(request, rooms.settings.max_message_bytes))
        changes = wanted.rules.changes() if wanted.rules else {}
        # The room's rules, not the engine's.
        lag_fair = bool(changes.pop("lag_fair", False))
        false_starts = bool(changes.pop("false_starts", True))
        rules = merged_rules(Rules(), changes)
        cluster: ClusterNode | None = request.app.state.cluster
        opener = address_key(client_host(request))
        if cluster is not None:  # in Redis, for whichever process the router picks
            code = await cluster.open_table(
                rules, lag_fair=lag_fair, false_starts=false_starts, opener=opener
            )
        else:
            room = await rooms.open_room(
                rules, lag_fair=lag_fair, false_starts=false_starts, opener=opener
            )
            code = room.code
    except ProtocolError as error:
        return error_response(error)
    return JSONResponse({"code": code, "url": f"/r/{code}"}, status_code=201)


@router.get("/api/rooms/{code}")
async def room_summary(code: str, request: Request) -> Any:
    cluster: ClusterNode | None = request.app.state.cluster

    async def summary_of() -> dict[str, Any] | None:
        if cluster is not None:
            return await cluster.summary(code)  # from Redis: any process answers
        room = request.app.state.rooms.get(code)
        return None if room is None else room.summary()

    # Room codes are short: testing one spends the address's budget (app/web/lookups.py).
    lookups: CodeLookups = request.app.state.code_lookups
    try:
        summary = await lookups.find(client_host(request), summary_of)
    except ProtocolError as error:
        return error_response(error)
    if summary is None:
        return error_response(ProtocolError(ErrorCode.NO_ROOM, "there is no room with that code"))
    return summary


@router.post("/api/events", status_code=201)
async def create_event(request: Request) -> Any:
    """An event: one link for more than eight players, heats at many tables and a final."""
    rooms: Rooms = request.app.state.rooms
    events: Tournaments = request.app.state.events
    try:
        if not await request.app.state.room_limit.admit(client_host(request), time.monotonic()):
            raise ProtocolError(ErrorCode.RATE_LIMITED, "too many new rooms: try in a minute")
        body = await read_body(request, rooms.settings.max_message_bytes)
        wanted = parse_model(CreateEvent, body, "{'name': ...}")
        changes = wanted.rules.changes() if wanted.rules else {}
        # The rooms' rules, not the engine's.
        lag_fair = bool(changes.pop("lag_fair", False))
        false_starts = bool(changes.pop("false_starts", True))
        rules = merged_rules(Rules(), changes)
        organiser = clean_name(wanted.organiser) if wanted.organiser else ""
        room, token = await events.open_event(
            clean_title(wanted.name),
            organiser,
            size=wanted.size,
            first_to=wanted.first_to,
            bots=wanted.bots,
            rules=rules,
            lag_fair=lag_fair,
            false_starts=false_starts,
        )
    except ProtocolError as error:
        return error_response(error)
    opened = {"code": room.code, "url": f"/e/{room.code}", "token": token}
    return JSONResponse(opened, status_code=201)


@router.get("/api/events/{code}")
async def event_summary(code: str, request: Request) -> Any:
    events: Tournaments = request.app.state.events
    # An event's code is a room code: testing one spends the same budget (app/web/lookups.py).
    lookups: CodeLookups = request.app.state.code_lookups
    try:
        summary = await lookups.find(client_host(request), lambda: events.summary(code))
    except ProtocolError as error:
        return error_response(error)
    if summary is None:
        return error_response(ProtocolError(ErrorCode.NO_ROOM, "there is no event with that code"))
    return summary


def clean_title(name: str) -> str:
    """An event's name as stored and shown: trimmed, 1 to EVENT_NAME_MAX characters, with
    something visible in it and no control characters or line breaks."""
    trimmed = " ".join(name.split())
    if not 1 <= len(trimmed) <= EVENT_NAME_MAX:
        raise ProtocolError(ErrorCode.BAD_NAME, f"an event's name is 1 to {EVENT_NAME_MAX} long")
    if any(unicodedata.category(ch) in NAME_FORBIDDEN for ch in trimmed):
        raise ProtocolError(ErrorCode.BAD_NAME, "an event's name cannot hold control characters")
    return trimmed


@router.get("/healthz")
async def healthz(request: Request) -> JSONResponse:
    """200 `ok` while the process serves and its store takes every write; 503 `degraded`
    while writes fail (the games go on from memory). The image's and compose's health
    check: a degraded process shows as unhealthy, and is not restarted for it."""
    rooms: Rooms = request.app.state.rooms
    health = rooms.health()
    return JSONResponse(health, status_code=200 if health["status"] == "ok" else 503)


@router.get("/livez")
async def livez() -> dict[str, str]:
    """200 while the process answers at all: for a supervisor that restarts a process that
    fails its check (a restart would lose what a degraded store has not written)."""
    return {"status": "ok"}


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    rooms: Rooms = request.app.state.rooms
    if not rooms.settings.expose_metrics:  # SLAPJACK_EXPOSE_METRICS=false: kept private
        return Response("Not Found", status_code=404, media_type="text/plain")
    return Response(rooms.metrics.render(), media_type=CONTENT_TYPE)


def client_host(request: Request) -> str:
    """The client's address as uvicorn saw it, after its trusted-proxy rules."""
    return request.client.host if request.client is not None else "?"


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused past `limit` bytes without reading the rest."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise ProtocolError(ErrorCode.TOO_LARGE, f"the body is over {limit} bytes")
    return bytes(body)


def parse_create(body: bytes) -> CreateRoom:
    if not body.strip():
        return CreateRoom()
    return parse_model(CreateRoom, body, "{'rules': {...}}")


def parse_model(model: type[M], body: bytes, expected: str) -> M:
    try:
        return model.model_validate(json.loads(body))
    # JSONDecodeError and UnicodeError are ValueErrors; a body nested thousands deep
    # overflows the decoder's recursion.
    except (ValueError, ValidationError, RecursionError) as exc:
        message = f"expected {expected}: {exc}"[:200]
        raise ProtocolError(ErrorCode.BAD_REQUEST, message) from None


def install(api: FastAPI) -> None:
    api.include_router(router)
