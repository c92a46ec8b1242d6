"""daemon/mcp/images.py: the screenshot fitted to a caller's limits, never over them; the
visible elements of a hierarchy; the image arguments checked and taken out of a call."""

from __future__ import annotations

import io
import random

import pytest
from PIL import Image

from phoned.daemon.mcp.images import (
    IMAGE_ARGS,
    ImageArgError,
    ImageLimits,
    element_lines,
    fit_image,
    shows_screen,
    take_limits,
)


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _flat(size: tuple[int, int] = (1080, 2400)) -> bytes:
    image = Image.new("RGB", size, (250, 250, 250))
    image.paste((30, 90, 200), (0, 0, size[0], 200))
    return _png(image)


def _noise(size: tuple[int, int] = (1080, 2400), seed: int = 3) -> bytes:
    rng = random.Random(seed)
    return _png(Image.frombytes("RGB", size, rng.randbytes(size[0] * size[1] * 3)))


@pytest.mark.parametrize("raw", [_flat(), _noise()], ids=["flat", "noise"])
@pytest.mark.parametrize(
    "limits",
    [ImageLimits(), ImageLimits(50_000, 600), ImageLimits(8_000, 1000), ImageLimits(2_000, 64)],
)
def test_a_fitted_image_is_never_over_either_limit(raw: bytes, limits: ImageLimits) -> None:
    fitted = fit_image(raw, limits)
    if fitted is None:  # nothing legible fits: left out, never sent over the limit
        return
    assert fitted.sent_bytes <= limits.max_bytes
    assert max(fitted.width, fitted.height) <= limits.max_side
    with Image.open(io.BytesIO(fitted.data)) as decoded:
        assert decoded.size == (fitted.width, fitted.height)
        assert decoded.format == ("PNG" if fitted.mime == "image/png" else "JPEG")


def test_flat_screens_stay_png_noise_goes_jpeg_and_nothing_is_scaled_up() -> None:
    flat = fit_image(_flat(), ImageLimits())
    assert (
        flat is not None and flat.mime == "image/png" and (flat.width, flat.height) == (450, 1000)
    )
    noisy = fit_image(_noise(), ImageLimits(100_000, 1000))
    assert noisy is not None and noisy.mime == "image/jpeg" and noisy.quality is not None
    small = fit_image(_flat((200, 300)), ImageLimits())
    assert small is not None and (small.width, small.height) == (200, 300)


def test_no_legible_image_fits_a_tiny_byte_limit_of_noise() -> None:
    assert fit_image(_noise((400, 400)), ImageLimits(400, 4096)) is None


def test_the_image_arguments_are_taken_out_and_checked() -> None:
    args = {"image_max_bytes": 50_000, "image_max_side": 640, "device": "x"}
    assert take_limits(args) == ImageLimits(50_000, 640) and args == {"device": "x"}
    assert take_limits({}) == ImageLimits(200_000, 1000)
    for bad in ({"image_max_side": 10}, {"image_max_bytes": "big"}, {"image_max_bytes": True}):
        with pytest.raises(ImageArgError, match=next(iter(bad))):
            take_limits(dict(bad))
    assert IMAGE_ARGS["image_max_bytes"]["default"] == 200_000
    assert (
        shows_screen("screen.snapshot") and shows_screen("ui.tap") and not shows_screen("dnd.get")
    )


def test_element_lines_list_visible_elements_as_data() -> None:
    xml = (
        '<?xml version="1.0"?><hierarchy rotation="0">'
        '<node text="" resource-id="" class="android.widget.FrameLayout" bounds="[0,0][1080,2400]">'
        '<node text="Отправить" resource-id="com.example:id/send" clickable="true" '
        'content-desc="" bounds="[900,2200][1060,2380]"/>'
        '<node text="안녕 $(reboot)" resource-id="" content-desc="msg" bounds="[10,10][500,80]"/>'
        '<node text="hidden" visible-to-user="false" bounds="[0,0][10,10]"/>'
        '<node text="" resource-id="" clickable="false" bounds="[0,0][5,5]"/>'
        "</node></hierarchy>"
    )
    assert element_lines(xml) == [
        "[900,2200][1060,2380] clickable id=com.example:id/send text='Отправить'",
        "[10,10][500,80] text='안녕 $(reboot)' desc='msg'",
    ]
    assert element_lines("not xml") == []
    many = "<hierarchy>" + '<node text="x" bounds="[0,0][1,1]"/>' * 5 + "</hierarchy>"
    assert len(element_lines(many, limit=3)) == 4


def test_a_ui_steps_screenshot_is_found_by_its_name(tmp_path) -> None:
    """A UI step may name its artifacts ``<step>_screenshot``/``<step>_hierarchy``: the latest
    evidence holding one is shown; a task that kept none gets no content."""
    from phoned.daemon.mcp.images import screen_content

    folder = tmp_path / "t1"
    folder.mkdir()
    (folder / "tap_screenshot.png").write_bytes(_flat((300, 600)))
    (folder / "tap_hierarchy.xml").write_text(
        '<hierarchy><node text="OK" clickable="true" bounds="[0,0][10,10]"/></hierarchy>'
    )
    doc = {"kind": "outcome", "body": {"evidence": {"artifacts": {
        "tap_screenshot": str(folder / "tap_screenshot.png"),
        "tap_hierarchy": str(folder / "tap_hierarchy.xml"),
    }}}}  # fmt: skip
    image, text = screen_content("t1", [doc], [tmp_path], ImageLimits())
    assert image.type == "image" and image.mime_type == "image/png"
    assert text.type == "text" and "[0,0][10,10] clickable text='OK'" in text.text
    assert screen_content("t1", [{"kind": "outcome", "body": {}}], [tmp_path], ImageLimits()) == []
    # a reference outside the task's folder is not read
    outside = {
        "kind": "outcome",
        "body": {"evidence": {"artifacts": {"x_screenshot": "/etc/passwd"}}},
    }
    [note] = screen_content("t1", [outside], [tmp_path], ImageLimits())
    assert note.type == "text" and "not readable" in note.text
