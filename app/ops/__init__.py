"""Settings, logs, metrics, rate limits, the collector's schedule, timers and the clock: what
every layer above may use.
"""
