"""The HTTP API: create a room, look it up, health, and the page routes' use of the rooms."""

import re

import httpx
from app_harness import Server, serving

from app.tables.registry import CODE_ALPHABET


async def test_create_a_room_and_read_its_summary(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        created = await http.post("/api/rooms")
        assert created.status_code == 201
        code = created.json()["code"]
        assert re.fullmatch(f"[{CODE_ALPHABET}]{{6}}", code)
        assert created.json() == {"code": code, "url": f"/r/{code}"}
        summary = await http.get(f"/api/rooms/{code.lower()}")
        assert summary.status_code == 200
        assert summary.json() == {
            "code": code,
            "phase": "lobby",
            "game": 0,
            "seated": 0,
            "spectators": 0,
        }
        assert (await http.get("/api/rooms/ZZZZZZ")).status_code == 404
        assert (await http.get("/api/rooms/ZZZZZZ")).json()["error"]["code"] == "no_room"
        assert (await http.get("/healthz")).json() == {"status": "ok"}


async def test_codes_avoid_look_alike_characters(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        codes = [(await http.post("/api/rooms")).json()["code"] for _ in range(40)]
    assert len(set(codes)) == 40
    assert not set("".join(codes)) & set("0O1IL")


async def test_rules_given_at_creation_are_the_rooms_rules(server: Server) -> None:
    code = await server.new_room(penalty="give", decks=2)
    rules = server.room(code).rules.to_dict()
    assert rules["penalty"] == "give" and rules["decks"] == 2


async def test_bad_bodies_are_refused(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        for body, status, code in [
            (b"not json", 422, "bad_request"),
            (b"[]", 422, "bad_request"),
            (b'{"rules": {"decks": 3}}', 422, "bad_request"),
            (b'{"rules": {"triggers": []}}', 422, "bad_rules"),  # the engine's words
            (b'{"rules": {"colour": "red"}}', 422, "bad_request"),
            (b'{"room": "K7PQRX"}', 422, "bad_request"),
            (b'{"rules": {}}' + b" " * 10_000, 413, "too_large"),
        ]:
            answer = await http.post("/api/rooms", content=body)
            assert answer.status_code == status, (body[:40], answer.text)
            assert answer.json()["error"]["code"] == code
    assert len(server.rooms) == 0


async def test_a_server_with_enough_rooms_refuses_more() -> None:
    async with serving(max_rooms=2) as server, httpx.AsyncClient(base_url=server.url) as http:
        assert [(await http.post("/api/rooms")).status_code for _ in range(3)] == [201, 201, 503]


async def test_the_room_page_finds_rooms_through_the_registry(server: Server) -> None:
    code = await server.new_room()
    async with httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.get(f"/r/{code}")).status_code == 200
        assert (await http.get(f"/r/{code.lower()}")).status_code == 200
        assert (await http.get("/r/ZZZZZZ")).status_code == 404


async def test_one_address_opening_room_after_room_is_slowed_down() -> None:
    async with (
        serving(rooms_per_minute=3) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        answers = [await http.post("/api/rooms") for _ in range(4)]
        assert [a.status_code for a in answers] == [201, 201, 201, 429]
        assert answers[-1].json()["error"]["code"] == "rate_limited"


async def test_the_api_description_is_private_unless_asked_for(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        for path in ("/docs", "/redoc", "/openapi.json"):
            assert (await http.get(path)).status_code == 404, path
    async with serving(api_docs=True) as shown, httpx.AsyncClient(base_url=shown.url) as http:
        assert (await http.get("/openapi.json")).status_code == 200
