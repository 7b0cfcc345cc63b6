"""Slapjack web app: FastAPI pages and the Socket.IO realtime server."""
