"""The page's bundle as the pages name it (app/web/assets.py): the hashed files of a
bundle that is there and up to date, else the source files, never a stale bundle."""

import json
import os
from pathlib import Path

from app.web import assets


def sources(tmp_path: Path) -> Path:
    static = tmp_path / "static"
    (static / "js").mkdir(parents=True)
    (static / "css").mkdir()
    (static / "js" / "main.js").write_text("export {};\n")
    (static / "css" / "page.css").write_text("")
    return static


def bundle(tmp_path: Path) -> Path:
    build = tmp_path / "build"
    build.mkdir()
    names = {"main.js": "main-ABC123.js", "page.css": "page-DEF456.css"}
    (build / "manifest.json").write_text(json.dumps(names))
    return build


def test_a_bundle_names_the_hashed_files(tmp_path: Path) -> None:
    static = sources(tmp_path)
    build = bundle(tmp_path)
    names = assets.built_names.__wrapped__(build, static)
    assert names == {"main.js": "main-ABC123.js", "page.css": "page-DEF456.css"}


def test_without_a_bundle_or_with_a_stale_one_the_sources_are_served(tmp_path: Path) -> None:
    static = sources(tmp_path)
    assert assets.built_names.__wrapped__(tmp_path / "nowhere", static) == {}
    build = bundle(tmp_path)
    later = (build / "manifest.json").stat().st_mtime + 10
    os.utime(static / "js" / "main.js", (later, later))  # edited since `make bundle`
    assert assets.built_names.__wrapped__(build, static) == {}


def test_urls_point_at_the_bundle_or_at_the_sources(monkeypatch) -> None:
    monkeypatch.setattr(assets, "built_names", lambda: {"main.js": "main-ABC123.js"})
    assert assets.asset_url("main.js") == "/assets/main-ABC123.js"
    assert assets.asset_url("home.js") == "/static/js/home.js"
    assert assets.asset_url("page.css") == "/static/css/page.css"
