#!/usr/bin/env python3
"""MCP image sizes: what ``screen_snapshot`` returns for a few caller limits (issue #27).

Fits two screenshots with ``phoned.daemon.mcp.images.fit_image`` (the code the MCP tool runs) under
each (image_max_bytes, image_max_side) pair and prints a Markdown table: the format chosen,
the dimensions, the bytes as sent (base64), the JPEG quality and the time it took (median
of ``--runs``). The screenshots: the simulated phone's home screen (flat colours, what the
simulator draws: ``sim/ui/render.py``) and a photo-like screen of the same size
(smooth gradients under noise, seeded: the worst case for PNG, as a gallery or a video
frame is on a real phone).

    .venv/bin/python scripts/bench_mcp_images.py [--runs 5] [--sdk 34]
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import time

from PIL import Image

from phoned.daemon.mcp.images import ImageLimits, fit_image
from phoned.sim.phone import Phone
from phoned.sim.ui.model import Ui

LIMITS = [
    (200_000, 1000), (100_000, 800), (50_000, 600), (20_000, 400), (5_000, 256), (2_000, 128),
    (50_000, 1000), (10_000, 1000),
]  # fmt: skip


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def home_screen(sdk: int) -> bytes:
    return _png(Phone(sdk=sdk).service(Ui).screenshot())


def photo_like(size: tuple[int, int], seed: int = 27) -> bytes:
    rng = random.Random(seed)
    width, height = size
    image = Image.linear_gradient("L").resize(size).convert("RGB")
    noise = Image.frombytes("RGB", size, rng.randbytes(width * height * 3))
    return _png(Image.blend(image, noise, 0.35))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sdk", type=int, default=34)
    args = parser.parse_args()
    home = home_screen(args.sdk)
    with Image.open(io.BytesIO(home)) as opened:
        size = opened.size
    sources = {"home screen (simulator)": home, "photo-like": photo_like(size)}
    print(f"screenshots {size[0]}x{size[1]}: " + ", ".join(
        f"{name} {len(raw)} bytes PNG" for name, raw in sources.items()
    ))  # fmt: skip
    print()
    print(
        "| screenshot | image_max_bytes | image_max_side | format | size | bytes sent | quality | ms |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, raw in sources.items():
        for max_bytes, max_side in LIMITS:
            limits = ImageLimits(max_bytes, max_side)
            times, fitted = [], None
            for _ in range(args.runs):
                start = time.perf_counter()
                fitted = fit_image(raw, limits)
                times.append((time.perf_counter() - start) * 1000)
            ms = statistics.median(times)
            if fitted is None:
                print(f"| {name} | {max_bytes} | {max_side} | left out | - | - | - | {ms:.0f} |")
                continue
            assert fitted.sent_bytes <= max_bytes and max(fitted.width, fitted.height) <= max_side
            print(
                f"| {name} | {max_bytes} | {max_side} | {fitted.mime} | "
                f"{fitted.width}x{fitted.height} | {fitted.sent_bytes} | "
                f"{fitted.quality or '-'} | {ms:.0f} |"
            )


if __name__ == "__main__":
    main()
