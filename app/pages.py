"""HTML pages: home and room. Placeholder until the table UI lands."""

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
async def home() -> str:
    return "<!doctype html><title>Slapjack</title><h1>Slapjack</h1><p>Coming soon.</p>"


@router.get("/r/{code}", response_class=HTMLResponse)
async def room_page(code: str, request: Request) -> HTMLResponse:
    rooms = getattr(request.app.state, "rooms", None)
    if rooms is None or rooms.get(code) is None:
        return HTMLResponse("<!doctype html><title>No such room</title><h1>No such room</h1>", 404)
    return HTMLResponse("<!doctype html><title>Slapjack room</title><h1>Room</h1>")


def install(api: FastAPI) -> None:
    """Adds the page routes (and, later, the page's security headers) to the app."""
    api.include_router(router)
