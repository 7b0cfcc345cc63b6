"""The app's limits on one client address and on the whole server, lifted: every player of a
benchmark comes from one address (127.0.0.1, or nginx in front), and the benchmark opens
as many rooms and connections as its step asks for, as fast as the machine lets it. Each
benchmark that starts the app puts these in its environment (tests/bench/test_limits.py
checks every such setting is here).
"""

from __future__ import annotations

LIFTED_LIMITS = {
    "SLAPJACK_ROOMS_PER_MINUTE": "1000000",
    "SLAPJACK_CONNECTS_PER_MINUTE": "1000000",
    "SLAPJACK_OPENS_PER_MINUTE": "1000000",
    "SLAPJACK_OPEN_ROOMS_PER_ADDRESS": "1000000",
    "SLAPJACK_CONNECTIONS_PER_ADDRESS": "65535",  # nginx limit_conn takes no more
    "SLAPJACK_WEBSOCKETS_PER_ADDRESS": "65535",  # nginx applies it too (limit_conn)
    "SLAPJACK_WRONG_CODES_PER_MINUTE": "1000000",
    "SLAPJACK_WRONG_CODES_BURST": "1000000",
    "SLAPJACK_GUESS_WAVE_PER_MINUTE": "1000000",
    "SLAPJACK_MAX_ROOMS": "1000000",
    # Opening hundreds of tables on a busy core can take a connection past the deadline for
    # joining its room (5 s), which then closes it as one that never joins.
    "SLAPJACK_CONNECT_DEADLINE_SECONDS": "120",
    "SLAPJACK_MAX_CONNECTIONS": "1000000",  # uvicorn's limit_concurrency (503 beyond)
}
