"""A screen an agent can see (issue #27 item 4): a task's screenshot as MCP image content,
scaled and compressed to what the caller allows, and the hierarchy's visible elements as text.

Any tool whose task keeps a screenshot can use it: ``screen_content(task_id, evidence, folders,
limits)`` gives the content blocks to append to the tool's result (``server.py`` does so for
the methods ``shows_screen`` names). The screenshot is the evidence's ``snapshot_screenshot``
artifact, or an artifact whose name ends with ``screenshot`` (and ``hierarchy`` for the
elements), from the latest evidence document that has one. The full-size artifacts stay in the task's folder; the
image is a copy made here.

The bound: ``limits.max_bytes`` caps the image as it travels, base64 text included (what
the model's context holds), and ``limits.max_side`` its longest side in pixels. The image is
scaled to ``max_side`` (never up), tried as PNG (lossless: a phone screen of flat colours is
often small so), then as JPEG at falling qualities, then smaller again; if nothing fits
(a limit too small for any legible image), the image is left out and a note says why. A
result is never over the limit.
"""

from __future__ import annotations

import base64
import io
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp.types as types
from phoned.daemon.rendering.render import evidence_view
from phoned.daemon.rendering.render_html import RefusedReference, artifact_file

DEFAULT_MAX_BYTES = 200_000
DEFAULT_MAX_SIDE = 1000
MIN_MAX_BYTES, MAX_MAX_BYTES = 2_000, 5_000_000
MIN_SIDE, MAX_SIDE = 64, 4096
JPEG_QUALITIES = (85, 70, 55, 40, 30)
SHRINK = 0.75  # each further step when no quality fits at a size
MAX_ELEMENTS = 200  # element lines in the text block
SCREENSHOT, HIERARCHY = "snapshot_screenshot", "snapshot_hierarchy"

IMAGE_ARGS: dict[str, Any] = {
    "image_max_bytes": {
        "type": "integer", "minimum": MIN_MAX_BYTES, "maximum": MAX_MAX_BYTES,
        "default": DEFAULT_MAX_BYTES,
        "description": "the screenshot as returned is at most this many bytes (base64 included); "
        "scaled and compressed to fit, or left out with a note",
    },
    "image_max_side": {
        "type": "integer", "minimum": MIN_SIDE, "maximum": MAX_SIDE, "default": DEFAULT_MAX_SIDE,
        "description": "the screenshot's longest side in pixels, at most (never scaled up)",
    },
}  # fmt: skip


def shows_screen(method: str) -> bool:
    """Whether a method's tool returns the screen: ``screen.snapshot`` and the UI steps."""
    return method == "screen.snapshot" or method.startswith("ui.")


@dataclass(frozen=True)
class ImageLimits:
    """What the caller allows: bytes as sent (base64) and the longest side in pixels."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_side: int = DEFAULT_MAX_SIDE


class ImageArgError(Exception):
    """An image argument out of range; the message names it (a tool error for the model)."""


def take_limits(args: dict[str, Any]) -> ImageLimits:
    """Remove the image arguments from a tool call's ``args`` (they are no task params) and
    check them; ``ImageArgError`` naming the argument when one is out of range."""
    found = ImageLimits()
    values: dict[str, int] = {}
    for name, (low, high) in (("image_max_bytes", (MIN_MAX_BYTES, MAX_MAX_BYTES)),
                              ("image_max_side", (MIN_SIDE, MAX_SIDE))):  # fmt: skip
        if name not in args:
            continue
        value = args.pop(name)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ImageArgError(f"{name}: an integer from {low} to {high} is required")
        values[name] = value
    return ImageLimits(
        values.get("image_max_bytes", found.max_bytes), values.get("image_max_side", found.max_side)
    )


@dataclass(frozen=True)
class FittedImage:
    """The image as it will be sent, and what it was made from."""

    data: bytes
    mime: str  # image/png or image/jpeg
    width: int
    height: int
    source: tuple[int, int]  # the screenshot's own size
    quality: int | None  # JPEG quality; None for PNG

    @property
    def sent_bytes(self) -> int:
        """Its size as base64 text."""
        return 4 * ((len(self.data) + 2) // 3)


def _encoded_size(size: int) -> int:
    return 4 * ((size + 2) // 3)


def fit_image(raw: bytes, limits: ImageLimits) -> FittedImage | None:
    """``raw`` (any image Pillow reads) scaled to ``limits.max_side`` and compressed until its
    base64 form is at most ``limits.max_bytes``; None when no legible size fits."""
    from PIL import Image  # lazy: PIL is loaded only by the verbs that use it (start-up)

    with Image.open(io.BytesIO(raw)) as opened:
        opened.load()
        source = opened.size
        image = opened.convert("RGB")
    scale = min(1.0, limits.max_side / max(source))
    while True:
        size = (max(1, round(source[0] * scale)), max(1, round(source[1] * scale)))
        if max(size) < MIN_SIDE:
            return None
        scaled = image if size == image.size else image.resize(size, Image.Resampling.LANCZOS)
        for mime, quality in (("image/png", None), *(("image/jpeg", q) for q in JPEG_QUALITIES)):
            out = io.BytesIO()
            if quality is None:
                scaled.save(out, format="PNG", optimize=True)
            else:
                scaled.save(out, format="JPEG", quality=quality, optimize=True)
            data = out.getvalue()
            if _encoded_size(len(data)) <= limits.max_bytes:
                return FittedImage(data, mime, size[0], size[1], source, quality)
        scale *= SHRINK


def element_lines(hierarchy_xml: str, limit: int = MAX_ELEMENTS) -> list[str]:
    """The visible elements of a hierarchy dump, one line each: bounds, whether clickable,
    the resource id, the text and the content description (quoted as data); elements with
    none of id, text, description and no click are left out."""
    start, end = hierarchy_xml.find("<"), hierarchy_xml.rfind(">")
    if start < 0:
        return []
    try:
        root = ET.fromstring(hierarchy_xml[start : end + 1].encode("utf-8"))
    except ET.ParseError:
        return []
    lines: list[str] = []
    for node in root.iter("node"):
        if node.get("visible-to-user") == "false" or node.get("bounds", "") in ("", "[0,0][0,0]"):
            continue
        text, desc, rid = (
            node.get("text", ""),
            node.get("content-desc", ""),
            node.get("resource-id", ""),
        )
        clickable = node.get("clickable") == "true"
        if not (text or desc or rid or clickable):
            continue
        parts = [node.get("bounds", "")]
        if clickable:
            parts.append("clickable")
        if rid:
            parts.append(f"id={rid}")
        if text:
            parts.append(f"text={text!r}")
        if desc:
            parts.append(f"desc={desc!r}")
        lines.append(" ".join(parts))
        if len(lines) >= limit:
            lines.append(f"... more elements left out (at most {limit} listed)")
            break
    return lines


def _artifact(value: str | None, folders: Sequence[Path], task_id: str) -> bytes | None:
    """The bytes of an artifact inside the task's folder; None when it is not readable here
    (another machine's plane, removed by retention, a reference outside the folder, a
    folder this process may not read)."""

    if not value:
        return None
    try:
        path = artifact_file(value, folders, task_id)
        return None if path is None else path.read_bytes()
    except (RefusedReference, OSError):  # outside the folder; another user's 0700 folder
        return None


def _named(artifacts: dict[str, Any], kind: str) -> str | None:
    """The artifact of ``kind``: ``snapshot_screenshot`` itself, else the last one whose name
    ends with ``screenshot`` / ``hierarchy`` (a UI step's ``<step>_screenshot``)."""
    if artifacts.get(kind):
        return str(artifacts[kind])
    suffix = kind.rsplit("_", 1)[-1]
    found = [str(v) for k, v in artifacts.items() if k.endswith(suffix) and v]
    return found[-1] if found else None


def screen_content(
    task_id: str, evidence: Sequence[dict[str, Any]], folders: Sequence[Path], limits: ImageLimits
) -> list[types.ImageContent | types.TextContent]:
    """The screen a task kept (its latest evidence with a screenshot): the fitted image and
    a text block with its size and the visible elements; [] when the task kept none."""

    views = [evidence_view(d) for d in evidence]
    kept = [v["artifacts"] for v in views if _named(v["artifacts"], SCREENSHOT)]
    if not kept:
        return []
    artifacts = kept[-1]
    raw = _artifact(_named(artifacts, SCREENSHOT), folders, task_id)
    out: list[types.ImageContent | types.TextContent] = []
    if raw is None:
        note = (
            "screenshot: not readable from this server (the full size stays in the task's folder)"
        )
    else:
        fitted = fit_image(raw, limits)
        if fitted is None:
            note = (
                f"screenshot left out: no legible image fits in {limits.max_bytes} bytes; "
                "ask with a larger image_max_bytes"
            )
        else:
            out.append(
                types.ImageContent(
                    type="image", data=base64.b64encode(fitted.data).decode("ascii"),
                    mime_type=fitted.mime,
                )
            )  # fmt: skip
            note = (
                f"screenshot: {fitted.width}x{fitted.height} {fitted.mime} {fitted.sent_bytes} bytes "
                f"(base64) of {fitted.source[0]}x{fitted.source[1]}"
                + (f", JPEG quality {fitted.quality}" if fitted.quality else "")
            )
    xml = _artifact(_named(artifacts, HIERARCHY), folders, task_id)
    elements = element_lines(xml.decode("utf-8", "replace")) if xml is not None else []
    lines = [
        note,
        f"visible elements ({len(elements)}): bounds, clickable, id, text, desc",
        *elements,
    ]
    out.append(types.TextContent(type="text", text="\n".join(lines)))
    return out
