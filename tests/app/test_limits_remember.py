"""Per-address limits hold bounded state and never forget an address while it is limited;
an IPv6 client counts as its /64."""

from __future__ import annotations

import time

from app.ops.limits import PerAddress, address_key

T = time.monotonic()  # the limits' clock


def test_a_limited_address_is_not_forgotten_when_the_table_fills() -> None:
    limit = PerAddress(rate=1 / 60, burst=3, limit=100)
    guilty = "198.51.100.66"
    for _ in range(3):
        assert limit.take(guilty, T + 0.0)
    assert not limit.take(guilty, T + 0.0)
    for n in range(20_000):  # a flood of other addresses, each taking one
        limit.take(f"10.{n // 65536}.{n // 256 % 256}.{n % 256}", T + 1.0)
    assert len(limit) <= 100  # bounded
    assert not limit.take(guilty, T + 2.0)  # still limited


def test_when_every_bucket_is_limited_a_newcomer_waits() -> None:
    limit = PerAddress(rate=1 / 60, burst=1, limit=10)
    for n in range(10):
        assert limit.take(f"10.0.0.{n}", T + 0.0)
    assert not limit.take("10.0.0.99", T + 0.0)  # forgetting one of them would free it
    assert limit.take("10.0.0.99", T + 61.0)  # once some have refilled, they go first


def test_ipv6_addresses_count_by_their_64() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:ffff::9")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("::ffff:192.0.2.1") == "192.0.2.1"
    assert address_key("192.0.2.1") == "192.0.2.1"
    limit = PerAddress(rate=1 / 60, burst=2)
    assert limit.take("2001:db8::1", T + 0.0) and limit.take("2001:db8::2", T + 0.0)
    assert not limit.take("2001:db8::3", T + 0.0)  # one client, three addresses
