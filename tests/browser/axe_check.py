"""axe-core on a page (pinned in package-lock.json, injected from node_modules: no network):
every violation that fails a state, whatever axe rates its impact. The page's context must
be opened with `bypass_csp` (the page's policy refuses inline scripts, and axe is one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.async_api import Page

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# Structure every page needs, though axe rates it "moderate".
ALWAYS = {"page-has-heading-one", "landmark-one-main"}


async def axe(page: Any, state: str) -> list[str]:
    """The violations that fail this state, one line each. `page`: Playwright's, or one of
    engines.py's (any engine)."""
    assert AXE.exists(), "run `make test` (npm ci installs axe-core)"
    # Colours are judged as they settle: a card still fading in would measure half-faded.
    await page.evaluate(
        """() => Promise.all(document.getAnimations()
              .filter((a) => a.effect.getComputedTiming().iterations !== Infinity)
              .map((a) => a.finished.catch(() => null)))"""
    )
    if not await page.evaluate("() => typeof window.axe === 'object'"):
        if isinstance(page, Page):
            await page.add_script_tag(path=str(AXE))
        else:  # a page of engines.py's seam: its source, run as the page's own
            await page.evaluate(f"() => {{ {AXE.read_text()}\n; window.axe = axe; }}")
    result: dict[str, Any] = await page.evaluate(
        "() => axe.run(document, {resultTypes: ['violations']})"
    )
    failing = []
    for violation in result["violations"]:
        if violation["impact"] or violation["id"] in ALWAYS:
            targets = [
                (node["target"], node.get("failureSummary", "")[:300])
                for node in violation["nodes"]
            ][:2]
            failing.append(
                f"{state}: {violation['id']} ({violation['impact']}) {json.dumps(targets)}"
            )
    return failing
