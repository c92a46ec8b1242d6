"""Screenshots: the window stack drawn with Pillow so a human can recognise the screen.

``screencap -p`` writes a PNG of the whole display (frameworks/base cmds/screencap
``screencap.cpp``: ``-p`` encodes PNG, otherwise raw RGBA with a header); the uiautomator2
server's ``takeScreenshot(scale, quality)`` returns the same picture JPEG-encoded in base64
(the client base64-decodes it and opens it with Pillow).
"""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont

from phoned.sim.ui.views import View, Window

BACKGROUND = (250, 250, 250)
SYSTEM_BG = (32, 33, 36)
TEXT = (32, 33, 36)
BUTTON = (26, 115, 232)
EDIT = (232, 240, 254)


def _fill_for(view: View, window: Window) -> tuple[int, int, int] | None:
    if view.cls == "android.widget.EditText":
        return EDIT
    if view.cls == "android.widget.Button" or (view.clickable and view.action == "send"):
        return BUTTON
    return None


def _draw_view(
    draw: ImageDraw.ImageDraw,
    view: View,
    window: Window,
    font: ImageFont.ImageFont | ImageFont.FreeTypeFont,
) -> None:
    left, top, right, bottom = view.bounds
    fill = _fill_for(view, window)
    if fill is not None or view.clickable:
        draw.rectangle((left, top, right - 1, bottom - 1), fill=fill, outline=(200, 200, 200))
    label = view.text or view.desc or view.hint
    if label:
        color = (255, 255, 255) if fill == BUTTON or window.activity is None else TEXT
        first_line = label.splitlines()[0] if label.strip() else label
        draw.text((left + 12, top + 12), first_line[:60], fill=color, font=font)
    for child in view.children:
        _draw_view(draw, child, window, font)


def render(windows: list[Window], size: tuple[int, int], screen_on: bool) -> Image.Image:
    """The display as an RGB image; black when the screen is off."""
    image = Image.new("RGB", size, BACKGROUND if screen_on else (0, 0, 0))
    if not screen_on:
        return image
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    for window in windows:
        if (
            window.activity is None
            or window.package.endswith("permissioncontroller")
            or window.package == "com.android.packageinstaller"
        ):
            left, top, right, bottom = _window_panel(window)
            draw.rectangle(
                (left, top, right - 1, bottom - 1),
                fill=SYSTEM_BG if window.activity is None else (255, 255, 255),
            )
        _draw_view(draw, window.root, window, font)
    return image


def _window_panel(window: View | Window) -> tuple[int, int, int, int]:
    root = window.root if isinstance(window, Window) else window
    if (
        root.children
        and root.bounds == (0, 0, 1080, 2400)
        and root.children[0].resource_id.endswith(":id/grant_dialog")
    ):
        return root.children[0].bounds
    return root.bounds


def png_bytes(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def jpeg_bytes(image: Image.Image, quality: int = 80) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=max(1, min(quality, 100)))
    return buf.getvalue()
