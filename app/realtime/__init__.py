"""The transport: python-socketio, python-engineio and uvicorn as we serve them, frame budgets,
queues, outgoing encoding, per-address limits, origins.
"""
