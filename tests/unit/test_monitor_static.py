"""The monitor page's files keep to the CSP they are served with (no build step, no browser).

The page may run only ``/monitor/monitor.js`` and style itself only from
``/monitor/monitor.css``: no inline script, handler attribute or style attribute in the
HTML, and the policy is the one ``docs/control-plane.md`` documents. The script takes a
token out of the address (``#token=``) with ``history.replaceState`` and keeps it in
``sessionStorage`` alone; the browser tests (``tests/integration/test_monitor_*.py``) check
the same in a real Chromium.
"""

from __future__ import annotations

import re
from pathlib import Path

from phoned.daemon.server.monitor import CSP, STATIC_DIR

DOCS = Path(__file__).resolve().parents[2] / "docs" / "control-plane.md"
DOCUMENTED_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def test_the_policy_is_the_documented_one() -> None:
    assert CSP == DOCUMENTED_CSP
    documented = " ".join(DOCS.read_text(encoding="utf-8").split())
    assert f"Content-Security-Policy: {DOCUMENTED_CSP}" in documented.replace("`", "")


def test_the_html_has_no_inline_script_handler_or_style() -> None:
    html = (STATIC_DIR / "monitor.html").read_text(encoding="utf-8")
    assert html.count("<script") == 1  # the one script, from this origin, with nothing inline
    assert '<script src="/monitor/monitor.js" defer></script>' in html
    assert not re.search(r"\son[a-z]+\s*=", html, re.IGNORECASE)
    assert not re.search(r"\sstyle\s*=", html, re.IGNORECASE) and "<style" not in html
    assert "javascript:" not in html.lower()


def test_the_script_keeps_the_token_in_session_storage_only() -> None:
    script = (STATIC_DIR / "monitor.js").read_text(encoding="utf-8")
    assert "localStorage" not in script and "document.cookie" not in script
    assert "console." not in script  # nothing is logged, the token least of all
    assert "history.replaceState" in script  # a #token= address is rewritten without it
    assert "eval(" not in script and "new Function" not in script
