"""Wires the ASGI app: FastAPI for pages and HTTP, Socket.IO beside it."""

from fastapi import FastAPI
from fastapi.responses import HTMLResponse


def create_app() -> FastAPI:
    api = FastAPI(title="Slapjack")

    @api.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @api.get("/", response_class=HTMLResponse)
    async def home() -> str:
        return "<!doctype html><title>Slapjack</title><h1>Slapjack</h1><p>Coming soon.</p>"

    return api


app = create_app()
