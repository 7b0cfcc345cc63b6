"""HTML pages (home, room, 404), the room's QR code, and the pages' security headers."""

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import jinja2
from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.cluster.node import ClusterNode
from app.ops.config import Settings, lan_address
from app.tables.registry import Rooms
from app.web import i18n
from app.web.assets import asset_url
from app.web.lookups import CodeLookups
from app.web.qr import qr_svg
from app.wire import rules_schema
from app.wire.errors import ProtocolError


def page_language(request: Request) -> dict[str, Any]:
    """Every page's language: the switch's cookie, else the browser's Accept-Language."""
    cookie = request.cookies.get(i18n.COOKIE)
    code = i18n.choose(cookie, request.headers.get("accept-language"))
    return {
        "language": i18n.PageLanguage(code, chosen=cookie == code),
        "page_messages": i18n.page_messages_json(code),
    }


# Jinja2's i18n extension: `_()`, `ngettext()` and `{% trans %}` in the templates, spoken in
# the request's language (app/web/i18n.py reads it from the template's context).
ENVIRONMENT = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).resolve().parents[2] / "templates"),
    autoescape=jinja2.select_autoescape(),
    extensions=["jinja2.ext.i18n"],
)
ENVIRONMENT.install_gettext_callables(  # type: ignore[attr-defined]
    i18n.context_gettext, i18n.context_ngettext, newstyle=True
)
# say(): the scripts' sentences by id (the house rules' words); the rules from one schema.
ENVIRONMENT.globals["say"] = i18n.context_say
ENVIRONMENT.globals["rules_schema"] = rules_schema.form_rules()
ENVIRONMENT.globals["rules_schema_json"] = rules_schema.page_schema_json()
ENVIRONMENT.globals["asset"] = asset_url  # a script's or stylesheet's URL (app/web/assets.py)
TEMPLATES = Jinja2Templates(env=ENVIRONMENT, context_processors=[page_language])
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}
SAME_SITE_PATH = re.compile(r"/(?![/\\])[\w/.\-]*")  # a path here, never "//host"
PLAIN_HOST = re.compile(r"[A-Za-z0-9.\-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?")

router = APIRouter()


async def room_exists(request: Request, code: str) -> bool:
    """A table with this code (any case) is open here, or, in a cluster, stored in Redis
    for whichever process serves it: a look-up that spends the client address's budget of
    room codes (app/web/lookups.py; ProtocolError rate_limited past it)."""
    cluster: ClusterNode | None = getattr(request.app.state, "cluster", None)
    rooms: Rooms = request.app.state.rooms

    async def exists() -> bool | None:
        if cluster is not None:
            return await cluster.exists(code) or None
        return rooms.get(code) is not None or None

    lookups: CodeLookups = request.app.state.code_lookups
    host = request.client.host if request.client is not None else "?"
    return bool(await lookups.find(host, exists))


async def room_or_refusal(request: Request, code: str) -> Response | None:
    """None when the room exists; else the page that says why not: a 404, or a 429 for
    an address that tried too many wrong codes."""
    try:
        if await room_exists(request, code):
            return None
    except ProtocolError:
        return TEMPLATES.TemplateResponse(request, "404.html", {"limited": True}, status_code=429)
    return not_found(request, room=True)


def share_url(request: Request, code: str) -> str:
    """The room's link for friends. A page opened on loopback of a server listening on
    every interface shares the LAN address instead: a phone cannot open "localhost"."""
    url = request.url_for("room_page", code=code)
    settings: Settings = request.app.state.settings
    if url.hostname in LOOPBACK_HOSTS and settings.host in ("0.0.0.0", "::"):
        url = url.replace(hostname=lan_address())
    return str(url)


def not_found(request: Request, *, room: bool = False) -> Response:
    return TEMPLATES.TemplateResponse(request, "404.html", {"room": room}, status_code=404)


@router.get("/", include_in_schema=False)
async def home(request: Request) -> Response:
    return TEMPLATES.TemplateResponse(request, "home.html", {})


@router.get("/r/{code}", include_in_schema=False)
async def room_page(request: Request, code: str) -> Response:
    refusal = await room_or_refusal(request, code)
    if refusal is not None:
        return refusal
    code = code.upper()
    context = {"code": code, "share_url": share_url(request, code)}
    return TEMPLATES.TemplateResponse(request, "room.html", context)


@router.get("/lang/{code}", include_in_schema=False)
async def choose_language(request: Request, code: str, next: str = "/") -> Response:
    """The EN | BM switch: remembers the choice on this device (a cookie every page reads)
    and goes back to the page it was pressed on. Works without the page's scripts."""
    back = next if SAME_SITE_PATH.fullmatch(next) else "/"
    response = RedirectResponse(back, status_code=303)
    if code in i18n.LANGUAGES:
        response.set_cookie(
            i18n.COOKIE, code, max_age=i18n.COOKIE_MAX_AGE, samesite="lax", path="/"
        )
    return response


@router.get("/r/{code}/tv", include_in_schema=False)
async def room_tv(request: Request, code: str) -> Response:
    """The table for a shared screen (a laptop or a TV): large, with the QR code to join,
    watching while the phones play."""
    refusal = await room_or_refusal(request, code)
    if refusal is not None:
        return refusal
    code = code.upper()
    context = {"code": code, "share_url": share_url(request, code), "tv": True}
    return TEMPLATES.TemplateResponse(request, "room.html", context)


# The manifest's description is the pages' own (templates/base.html's meta description):
# one sentence, translated once.
DESCRIPTION = "Realtime Slapjack with friends: open a table, share the link, race to slap the Jack."
MANIFEST = {  # all but its `description` and `lang`
    "name": "Slapjack",
    "short_name": "Slapjack",
    "start_url": "/",
    "display": "standalone",
    "orientation": "portrait",
    "background_color": "#0a1712",
    "theme_color": "#0a1712",
    "icons": [
        {"src": "/static/img/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"}
    ],
}


@router.get("/manifest.webmanifest", include_in_schema=False)
async def manifest(request: Request, lang: str | None = None) -> Response:
    """The web app manifest (what a phone shows when the page is added to its home screen)
    in the page's language: `?lang=` as the page links it, else the page's own choice."""
    if lang not in i18n.LANGUAGES:
        lang = i18n.choose(request.cookies.get(i18n.COOKIE), request.headers.get("accept-language"))
    body = {**MANIFEST, "description": i18n.translations(lang).gettext(DESCRIPTION), "lang": lang}
    return JSONResponse(
        body,
        media_type="application/manifest+json",
        headers={"Cache-Control": "public, max-age=3600", "Vary": "Cookie, Accept-Language"},
    )


@router.get("/r/{code}/qr.svg", include_in_schema=False)
async def room_qr(request: Request, code: str) -> Response:
    try:
        if not await room_exists(request, code):
            return Response(status_code=404)
    except ProtocolError:
        return Response(status_code=429)
    svg = qr_svg(share_url(request, code.upper()))
    return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-cache"})


def content_security_policy(request: Request) -> str:
    """Everything from our own origin only; the websocket is named explicitly because
    older browsers do not count ws:// to the same host as 'self'."""
    host = request.headers.get("host", "")
    sockets = f" ws://{host} wss://{host}" if PLAIN_HOST.fullmatch(host) else ""
    return (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
        f"connect-src 'self'{sockets}; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    )


async def security_headers(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    response = await call_next(request)
    response.headers.setdefault("Content-Security-Policy", content_security_policy(request))
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    if response.headers.get("content-type", "").startswith("text/html"):
        # A page's language follows these two: a cache must not hand one person's to another.
        response.headers.append("Vary", "Accept-Language, Cookie")
        # Asked for again on every visit: it names the bundle's files of this deploy.
        response.headers.setdefault("Cache-Control", "no-cache")
    return response


async def friendly_404(request: Request, exc: Exception) -> Response:
    """A page for people who mistype a link; API clients keep FastAPI's JSON errors."""
    assert isinstance(exc, StarletteHTTPException)
    wants_page = "text/html" in request.headers.get("accept", "")
    if exc.status_code == 404 and wants_page and not request.url.path.startswith("/api"):
        return not_found(request)
    return await http_exception_handler(request, exc)


def install(api: FastAPI) -> None:
    """Adds the page routes, the friendly 404 page and the security headers to the app."""
    api.include_router(router)
    api.middleware("http")(security_headers)
    api.add_exception_handler(StarletteHTTPException, friendly_404)
