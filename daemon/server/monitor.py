"""The live monitor page of ``phoned serve``: ``GET /monitor`` and its script and style.

The page is static (``daemon/server/static/``) and served without a token: it holds no
data. It asks for a reader token (typed in, or handed over as ``/monitor#token=...``: a
fragment never reaches the server, and the script takes it out of the address at once),
keeps it in ``sessionStorage`` and calls the ``/v1`` read endpoints with it in the
``Authorization`` header (screenshots too: fetched as blobs from
``/v1/tasks/{id}/artifacts/{name}``, which needs the same token). Only the three
files named in ``ASSETS`` are served, so no path can reach anything else on disk. A strict
Content-Security-Policy allows scripts, styles and connections to this origin only and
images from it or ``blob:``; nothing is loaded from anywhere else.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

STATIC_DIR = Path(__file__).resolve().parent / "static"

ASSETS: dict[str, str] = {
    "monitor.html": "text/html; charset=utf-8",
    "monitor.js": "text/javascript; charset=utf-8",
    "monitor.css": "text/css; charset=utf-8",
}

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

router = APIRouter(tags=["monitor"], include_in_schema=False)


def asset_response(name: str) -> Response:
    """One of the page's files with its type and the security headers; 404 for any other name."""
    media_type = ASSETS.get(name)
    if media_type is None:
        raise HTTPException(404, "no such monitor file")
    body = (STATIC_DIR / name).read_bytes()
    return Response(body, media_type=media_type, headers=SECURITY_HEADERS)


@router.get("/monitor")
def monitor_page() -> Response:
    """The monitor page (no data in it: the page reads ``/v1`` with the viewer's token)."""
    return asset_response("monitor.html")


@router.get("/monitor/{name}")
def monitor_asset(name: str) -> Response:
    """``monitor.js`` or ``monitor.css``; anything else is 404."""
    return asset_response(name)
