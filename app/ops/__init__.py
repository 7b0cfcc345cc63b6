"""Settings, logs, metrics, the collector's schedule, timers and the clock: what every layer
above may use.
"""
