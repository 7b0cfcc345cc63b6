"""The edges people touch: pages, the HTTP API, the Socket.IO handlers, translations and QR
codes.
"""
