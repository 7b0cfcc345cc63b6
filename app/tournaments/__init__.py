"""Events: more than eight players, one link, heats at many tables and a final.

`Tournament` (tournament.py) is the event as a value, as `Table` is a room's: its organiser,
its players (entrants), its rounds of heats and its podium; methods take `now` and return
what changed. `TournamentRoom` (room.py) is the async shell around it, as `Room` is a
table's: its lock, its connections, its broadcast, its timers and its saves; its heats are
ordinary tables (app/tables/), each a `Heat`, opened and read through `HeatTables`
(heats.py). `Tournaments` (registry.py) holds this process's events.
"""
