"""What a client can make the server log as often as it likes stays a few lines a second,
each saying how many went untold before it."""

import logging

from app.ops.logs import THROTTLE_BURST, Allowance, Bounded, Throttled


def test_an_allowance_gives_a_burst_then_one_a_second_and_counts_what_it_held_back() -> None:
    allowance = Allowance(rate=1.0, burst=3)
    assert [allowance.take(100.0) for _ in range(5)] == [0, 0, 0, None, None]
    assert allowance.take(100.5) is None  # half a token
    assert allowance.take(101.0) == 3  # the three held back since the last line
    assert allowance.take(101.0) is None
    assert allowance.take(111.0) == 1  # ten seconds refill the burst, never more
    assert [allowance.take(111.0) for _ in range(3)] == [0, 0, None]


def test_a_throttled_event_writes_its_burst_and_then_says_how_many_went_untold(caplog) -> None:
    refusals = Throttled("connection_refused")
    with caplog.at_level(logging.WARNING, logger="app"):
        for _ in range(THROTTLE_BURST + 25):
            refusals.log(50.0, why="connections_per_address", address="10.0.0.1")
        refusals.log(52.0, why="connections_per_address", address="10.0.0.1")
    lines = [r for r in caplog.records if r.getMessage() == "connection_refused"]
    assert len(lines) == THROTTLE_BURST + 1
    assert lines[-1].fields == {  # type: ignore[attr-defined]
        "why": "connections_per_address",
        "address": "10.0.0.1",
        "untold": 25,
    }


def test_a_library_line_loses_its_traceback_and_is_bounded() -> None:
    bounded = Bounded(rate=1.0, burst=2)
    try:
        raise ValueError("a client's bad body")
    except ValueError as error:
        failing = error
    records = [
        logging.LogRecord("engineio", logging.ERROR, __file__, 1, "post error", None, None)
        for _ in range(3)
    ]
    for record in records:
        record.created = 10.0
        record.exc_info = (ValueError, failing, failing.__traceback__)
    assert [bounded.filter(record) for record in records] == [True, True, False]
    assert records[0].exc_info is None
    assert records[0].fields["error"].startswith("ValueError")  # type: ignore[attr-defined]
    later = logging.LogRecord("engineio", logging.ERROR, __file__, 1, "again", None, None)
    later.created = 11.0
    assert bounded.filter(later) and later.fields["untold"] == 1  # type: ignore[attr-defined]
