"""What bench/gamenight.py makes of one table's timeline: the pause a fault cost it, and the
pause of its way home once its process answered again."""

from __future__ import annotations

from bench.gamenight import Table, cost


def test_a_tables_failover_and_its_way_home() -> None:
    table = Table(port=0, pages=[object()] * 4)  # type: ignore[list-item]
    times = (9.0, 9.5, 15.2, *range(16, 31), 30.1, 31.0, 31.4)  # a move a second meanwhile
    table.accepted = [(t, v) for v, t in enumerate(times)]
    table.comebacks = [(15.0, 2, page) for page in range(4)]  # back at the other process
    table.attempts = [
        (10.0, 0, "dropped"),  # the kill
        (15.0, 0, "in"),
        (30.5, 0, "dropped"),  # sent home, once its process answered at 20
        (30.8, 0, "in"),
    ]
    table.drops = 8

    found = cost(table, fault=10.0, answered=20.0, stored=1)

    assert found is not None
    assert found.pause == 15.2 - 9.5
    assert found.since_fault == 15.2 - 10.0
    assert found.home_pause == 31.0 - 30.1
    assert found.longest_gap == 15.2 - 9.5
    assert found.interruptions == 2


def test_a_table_never_sent_home_has_no_way_home() -> None:
    table = Table(port=0, pages=[object()] * 4)  # type: ignore[list-item]
    table.accepted = [(1.0, 0), (12.0, 1)]
    table.attempts = [(2.0, 0, "dropped")]
    found = cost(table, fault=2.0, answered=2.0, stored=0)
    assert found is not None and found.home_pause is None
