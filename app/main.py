"""Wires the ASGI app: FastAPI for pages and HTTP, Socket.IO beside it."""

from fastapi import FastAPI

from app import pages


def create_app() -> FastAPI:
    api = FastAPI(title="Slapjack")

    @api.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    pages.install(api)
    return api


app = create_app()
