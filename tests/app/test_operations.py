"""Operations: settings checked at start, /metrics after a game, JSON logs, draining."""

import asyncio
import json
import logging

import httpx
import pytest
from app_harness import Client, Server, autoplay, check_refusals, close_all, serving
from app_steps import refused, start_game
from pydantic import ValidationError

from app.ops.config import Settings
from app.ops.logs import JsonFormatter, log_event
from app.realtime.origins import origin_check


def metric(text: str, name: str) -> float:
    """The value of one sample line `name value` in Prometheus text."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not in /metrics")


async def scrape(server: Server) -> str:
    async with httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    return answer.text


async def test_metrics_count_a_played_game(server: Server) -> None:
    clients = await start_game(server, ["Ann", "Bob"], bots=["hard"])
    results = await asyncio.wait_for(asyncio.gather(*(autoplay(c) for c in clients)), 60)
    for acks in results:
        check_refusals(acks)
    refused = await clients[0].call("flip", {})  # the game is over: refused, and counted
    assert refused["error"]["code"] == "game_over"
    text = await scrape(server)
    assert metric(text, "slapjack_rooms") == 1
    assert metric(text, "slapjack_connected_players") == 2
    assert metric(text, "slapjack_games_started_total") == 1
    assert metric(text, "slapjack_games_finished_total") == 1
    assert metric(text, 'slapjack_events_handled_total{event="start"}') == 1
    sits = metric(text, 'slapjack_events_handled_total{event="sit"}')
    assert sits == 2
    flips = sum(
        1 for acks in results for a in acks if a.get("events", [{}])[0].get("kind") == "flip"
    )
    assert metric(text, 'slapjack_events_handled_total{event="flip"}') >= flips + 1
    assert metric(text, 'slapjack_events_rejected_total{code="game_over"}') >= 1
    good_slaps = sum(1 for acks in results for a in acks if a["ok"] and "take" in str(a))
    assert metric(text, "slapjack_slap_judging_seconds_count") >= good_slaps > 0
    await close_all(clients)


async def test_draining_refuses_new_rooms_and_people_and_tells_everyone(server: Server) -> None:
    code = await server.new_room()
    ann = await Client(server, code, "Ann").connect()
    await server.rooms.drain()
    await ann.wait_for(lambda: any(e["kind"] == "restart" for e in ann.events))
    async with httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.post("/api/rooms")
    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "shutting_down"
    refusal = await refused(server, {"room": code, "name": "Bob"})
    assert refusal["data"]["code"] == "shutting_down"
    await close_all([ann])


def test_bad_settings_are_refused_with_the_field_named() -> None:
    cases = {"port": "abc", "log_level": "loud", "drain_seconds": -1, "allowed_origins": ["*"]}
    for field, value in cases.items():
        with pytest.raises(ValidationError) as caught:
            Settings(**{field: value})
        assert field in str(caught.value)


def test_settings_come_from_slapjack_environment_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SLAPJACK_PORT", "9123")
    monkeypatch.setenv("SLAPJACK_ALLOWED_ORIGINS", '["https://slap.example"]')
    monkeypatch.setenv("SLAPJACK_TRUSTED_PROXIES", "10.0.0.2")
    settings = Settings()
    assert settings.port == 9123
    assert settings.allowed_origins == ["https://slap.example"]
    assert settings.trusted_proxies == "10.0.0.2"


def test_a_page_may_connect_to_the_server_that_served_it_whatever_its_address() -> None:
    allowed = origin_check(["https://slap.example"])
    lan = {"HTTP_HOST": "192.168.1.20:8000"}
    assert allowed("http://192.168.1.20:8000", lan)
    assert allowed("https://slap.example", lan)  # listed
    assert allowed("https://slap.example/", lan)
    assert not allowed("http://192.168.1.20:9000", lan)  # another port is another site
    assert not allowed("http://evil.example", lan)
    assert not allowed("http://evil.example", {"HTTP_HOST": ""})
    assert not allowed("javascript://192.168.1.20:8000", lan)
    assert not allowed("null", lan)


def test_log_lines_are_json_with_the_event_and_its_fields(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("app")
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO, logger="app"):
            log_event("room_opened", room="K7PQRX")
    finally:
        logger.removeHandler(caplog.handler)
    line = json.loads(JsonFormatter().format(caplog.records[-1]))
    assert line["event"] == "room_opened"
    assert line["room"] == "K7PQRX"
    assert line["level"] == "info"
    assert line["ts"].endswith("Z")


async def test_two_apps_count_apart() -> None:
    async with serving() as first, serving() as second:
        await first.new_room()
        assert metric(await scrape(first), "slapjack_rooms") == 1
        assert metric(await scrape(second), "slapjack_rooms") == 0
