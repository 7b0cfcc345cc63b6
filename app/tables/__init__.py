"""A table: the pure Table value, its events and views, bots, the lag meter; the async Room
around it and the registry of rooms.
"""
