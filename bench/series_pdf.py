"""The whole series as one PDF: peak memory and time of `write_pdf` (pages appended one at
a time) beside Pillow's one-call save of every page at once (what a single comic's PDF
does), on the same pages, side by side, each in a fresh process so its peak is its own.

Pages are drawn once at the size the pages engine draws (B5 at 150 DPI) with enough ink
to compress like a real page. Not a test; run it with

    .venv/bin/python bench/series_pdf.py --pages 30
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def draw_pages(folder: Path, count: int) -> list[Path]:
    from PIL import Image, ImageDraw

    from mangagen.pages.compose import page_size

    paths = []
    for number in range(count):
        image = Image.new("RGB", page_size(), "white")
        pen, rng = ImageDraw.Draw(image), random.Random(number)
        for _ in range(400):
            x, y = rng.randint(0, image.width), rng.randint(0, image.height)
            end = (x + rng.randint(-200, 200), y + rng.randint(-200, 200))
            pen.line((x, y, *end), fill=(0, 0, 0), width=2)
        path = folder / f"page-{number:03d}.png"
        image.save(path)
        paths.append(path)
    return paths


def run_one(way: str, folder: Path) -> None:
    """In a child process: write the PDF one way, print peak RSS (KiB) and seconds."""
    from PIL import Image

    from mangagen.pages.compose import DPI
    from mangagen.series.exports import write_pdf

    paths = sorted(folder.glob("page-*.png"))
    started = time.monotonic()
    with tempfile.TemporaryFile() as target:
        if way == "append":
            write_pdf((path.read_bytes() for path in paths), target, title="bench")
        else:
            pages = [Image.open(path).convert("RGB") for path in paths]
            pages[0].save(target, "PDF", save_all=True, append_images=pages[1:], resolution=DPI)
        size = target.tell()
    seconds = time.monotonic() - started
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, seconds, size)


def measure(way: str, folder: Path) -> tuple[float, float, int]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", way, str(folder)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "mangagen.settings", "DEBUG": "on"},
    ).stdout.split()
    return int(out[0]) / 1024, float(out[1]), int(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangagen.settings")
        import django

        django.setup()
        run_one(args.child[0], Path(args.child[1]))
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangagen.settings")
    os.environ.setdefault("DEBUG", "on")
    import django

    django.setup()
    with tempfile.TemporaryDirectory() as folder:
        draw_pages(Path(folder), args.pages)
        rounds: dict[str, list[tuple[float, float, int]]] = {"append": [], "at once": []}
        for number in range(args.rounds):  # alternate, so drift hits both alike
            order = ["append", "at once"] if number % 2 == 0 else ["at once", "append"]
            for way in order:
                rounds[way].append(measure(way, Path(folder)))
    print(f"series PDF of {args.pages} B5 pages, {args.rounds} rounds each, medians:")
    for way, results in rounds.items():
        memory = median(r[0] for r in results)
        seconds = median(r[1] for r in results)
        size = median(r[2] for r in results) / 1e6
        print(f"  {way:8}  peak RSS {memory:7.1f} MiB  {seconds:6.2f} s  {size:6.1f} MB")
    ratio = median(r[0] for r in rounds["append"]) / median(r[0] for r in rounds["at once"])
    speed = median(r[1] for r in rounds["append"]) / median(r[1] for r in rounds["at once"])
    print(f"  append / at once: memory {ratio:.2f}x, time {speed:.2f}x")


if __name__ == "__main__":
    main()
