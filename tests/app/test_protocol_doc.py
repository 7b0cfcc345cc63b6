"""docs/protocol.md stays true: every event, error code and event kind the server uses is in it."""

import re
from pathlib import Path

import engine
from app import protocol
from app.config import Settings
from app.rooms import Rooms
from app.views import build_state

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "protocol.md").read_text()
DOCUMENTED = set(re.findall(r"`([a-z_]+)`", DOC))


def test_every_client_event_the_server_handles_is_documented() -> None:
    assert set(protocol.CLIENT_EVENTS) - DOCUMENTED == set()


def test_every_server_event_is_documented() -> None:
    assert {protocol.WELCOME, protocol.STATE, protocol.EVENT} - DOCUMENTED == set()
    for name in (protocol.WELCOME, protocol.STATE, protocol.EVENT):
        assert f"### `{name}`" in DOC or f"emits `{name}" in DOC


def test_every_setting_is_documented() -> None:
    table = DOC.split("## Server settings", 1)[1]
    documented = set(re.findall(r"`SLAPJACK_([A-Z_]+)`", table))
    assert {name.upper() for name in Settings.model_fields} - documented == set()


def test_every_error_code_is_documented() -> None:
    assert {code.value for code in protocol.ErrorCode} - DOCUMENTED == set()


def test_every_event_kind_is_documented() -> None:
    engine_kinds = {cls.kind for cls in engine.Event.__subclasses__()}
    room_source = "".join(
        (ROOT / "app" / name).read_text() for name in ("rooms.py", "people.py", "lobby.py")
    )
    room_kinds = set(re.findall(r'"kind": "([a-z_]+)"', room_source))
    room_kinds |= {"leave", "disconnect"}  # chosen by a condition in Room.drop
    assert len(room_kinds) >= 11
    assert (engine_kinds | room_kinds) - DOCUMENTED == set()


class Silent:
    async def emit(self, event: str, data: object = None, to: str | None = None) -> None:
        pass

    async def enter_room(self, sid: str, room: str) -> None:
        pass


async def test_every_state_field_is_documented() -> None:
    rooms = Rooms(Settings(allowed_origins=["http://127.0.0.1"]), Silent())
    room = rooms.create()
    await room.join("sid-1", "Ann", None)
    await room.act("sid-1", "sit", protocol.Sit(seat=0), 0.0)
    await room.act("sid-1", "add_bot", protocol.AddBot(level="easy"), 0.0)
    await room.act("sid-1", "start", protocol.Empty(), 0.0)
    person = room.seats[0]
    state = build_state(room, person, 0)
    names = set(state) | set(state["you"]) | set(state["seats"][0]) | set(state["pile"])
    names |= set(state["stats"][0]) | set(state["rules"])
    assert names - DOCUMENTED == set()
    rooms.close_all()
