"""Every link between the README and docs/ leads somewhere: the file exists, and so does the
heading an anchor names (as GitHub makes anchors of headings)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def links(page: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(FENCE.sub("", page.read_text()))
        if not re.match(r"[a-z]+:", target)  # http:, https:, mailto: lead outside
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, fragment = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        missing_heading = bool(fragment) and goal.suffix == ".md" and goal.exists()
        if not goal.exists() or (missing_heading and fragment not in anchors(goal)):
            broken.append(target)
    assert broken == []


def test_anchors_are_made_as_github_makes_them() -> None:
    assert anchor(" Stores and saving (`app/stores/`)") == "stores-and-saving-appstores"
    assert anchor(" A cluster") == "a-cluster"
    assert anchor(" Behind nginx (HTTPS)") == "behind-nginx-https"
