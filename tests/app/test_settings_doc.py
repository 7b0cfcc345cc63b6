"""docs/settings.md is what `python -m tools.settings_doc` writes from `Settings`, and every
setting the README and docs name exists."""

import re

import pytest
from pydantic import Field
from pydantic_settings import BaseSettings

from app.ops.config import Settings
from tools import settings_doc


def test_docs_settings_md_is_the_table_of_every_setting_as_generated() -> None:
    written = settings_doc.DOC.read_text()
    assert written == settings_doc.render(), "stale: run .venv/bin/python -m tools.settings_doc"
    for name in Settings.model_fields:
        assert f"| `SLAPJACK_{name.upper()}` |" in written


def test_a_setting_without_a_description_cannot_be_documented(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Undescribed(BaseSettings):
        quiet: int = Field(default=1)

    monkeypatch.setattr(settings_doc, "Settings", Undescribed)
    with pytest.raises(ValueError, match="quiet has no description"):
        settings_doc.render()


def test_defaults_and_bounds_are_written_as_an_operator_types_them() -> None:
    fields = Settings.model_fields
    assert settings_doc.shown(fields["save_seconds"].default) == "`0.5`"
    assert settings_doc.shown(fields["drain_seconds"].default) == "`2`"
    assert settings_doc.shown(fields["expose_metrics"].default) == "`true`"
    assert settings_doc.shown(fields["gc_thresholds"].default) == "`[5000, 100, 10]`"
    assert settings_doc.shown(fields["node_id"].default) == "(empty)"
    assert settings_doc.accepts(fields["port"]) == "a whole number, >= 1, <= 65535"


def test_every_setting_the_readme_and_docs_name_exists() -> None:
    root = settings_doc.DOC.parents[1]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    named = {name for page in pages for name in re.findall(r"SLAPJACK_([A-Z_]+)", page.read_text())}
    assert {name.lower() for name in named} - set(Settings.model_fields) == set()
