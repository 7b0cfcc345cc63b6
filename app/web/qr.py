"""QR codes of room links, drawn server-side as SVG so the page needs no script for them."""

import io

import segno


def qr_svg(text: str) -> bytes:
    """An SVG QR code of `text`: black on white with a quiet zone, readable in any theme."""
    code = segno.make(text, error="m")
    out = io.BytesIO()
    code.save(out, kind="svg", scale=8, border=3, dark="#000", light="#fff", xmldecl=False)
    return out.getvalue()
