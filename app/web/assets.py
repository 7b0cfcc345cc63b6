"""The page's bundled scripts and styles (bundle.js, `make bundle`): each source name's
built file, named by the hash of its content and kept by browsers for a year, so a phone
never mixes an old script with a new one after a deploy. Without a bundle the pages use
the source modules and stylesheets from /static as they are (slower, and said in the log)."""

import json
import logging
from functools import cache
from pathlib import Path
from typing import Any

from starlette.responses import Response
from starlette.staticfiles import StaticFiles

from app.ops.logs import log_event

BUILD_DIR = Path(__file__).resolve().parents[2] / "build" / "assets"
URL_PREFIX = "/assets"
IMMUTABLE = "public, max-age=31536000, immutable"
SOURCES = {".js": "/static/js", ".css": "/static/css"}


STATIC_DIR = Path(__file__).resolve().parents[2] / "static"


def newest_source(static: Path) -> float:
    """When the page's newest script or stylesheet was written (0 when there is none)."""
    files = [*static.glob("js/*.js"), *static.glob("css/*.css")]
    return max((f.stat().st_mtime for f in files), default=0.0)


@cache
def built_names(build: Path = BUILD_DIR, static: Path = STATIC_DIR) -> dict[str, str]:
    """Source name -> built file name, from the bundle's manifest (read once). None when
    there is no bundle, or one older than its sources (an edit since `make bundle`): the
    sources are then served as they are, rather than yesterday's page."""
    manifest_file = build / "manifest.json"
    try:
        manifest = json.loads(manifest_file.read_text())
        stale = manifest_file.stat().st_mtime < newest_source(static)
    except (OSError, ValueError):
        log_event("bundle_missing", level=logging.WARNING, hint="make bundle", directory=str(build))
        return {}
    if stale:
        log_event("bundle_stale", level=logging.WARNING, hint="make bundle", directory=str(build))
        return {}
    return {str(name): str(built) for name, built in manifest.items()}


def asset_url(name: str) -> str:
    """The URL a page loads `name` (main.js, home.js, page.css) from."""
    built = built_names().get(name)
    if built is not None:
        return f"{URL_PREFIX}/{built}"
    return f"{SOURCES[Path(name).suffix]}/{name}"


class HashedFiles(StaticFiles):
    """The bundle's files: a name carries its content's hash, so it never changes."""

    async def get_response(self, path: str, scope: Any) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code == 200:
            response.headers["Cache-Control"] = IMMUTABLE
        return response
