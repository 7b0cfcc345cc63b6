"""The transport: python-socketio, python-engineio and uvicorn as we serve them, frame budgets,
queues, outgoing encoding, origins (the per-address limits it applies are app/ops/limits.py).
"""
