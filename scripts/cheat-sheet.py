#!/usr/bin/env python3
"""Renders docs/cheat-sheet.md as a printable page: docs/cheat-sheet.html (self-contained) and
docs/cheat-sheet.pdf (headless Chromium's --print-to-pdf, A4), and fails unless the PDF is one
page. Python's standard library and `chromium` only; the Markdown subset is the sheet's own
(headings, paragraphs, inline code, bold, and a picture `![ALT](FILE)` of docs/, put in the
HTML as a data URI so that the page stays one file).

    python3 scripts/cheat-sheet.py [--screenshot PNG] [--herd JITTERLAB]
    python3 scripts/cheat-sheet.py --check

`--herd` first draws the sheet's picture again, docs/cheat-sheet-herd.png: the herd chart of
`JITTERLAB run thundering-herd --set 'backoff.strategies=["no_jitter","full"]'`.

`--screenshot` also writes a PNG of the HTML page, to look at it. `--check` renders nothing and
fails when docs/cheat-sheet.html is not the rendering of docs/cheat-sheet.md (CI runs it; the
PDF is printed from that HTML). The numbers in the sheet are
checked against the commands it cites by `cargo test --release --test integration cheat_sheet`.
"""

from __future__ import annotations

import argparse
import base64
import html
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "docs" / "cheat-sheet.md"
HTML = REPO / "docs" / "cheat-sheet.html"
HERD = REPO / "docs" / "cheat-sheet-herd.png"
PDF = REPO / "docs" / "cheat-sheet.pdf"

STYLE = """
@page { size: A4; margin: 11mm 13mm; }
body { font-family: "DejaVu Sans", Verdana, sans-serif; font-size: 9.6pt; line-height: 1.34;
       color: #333; max-width: 184mm; margin: 0 auto; }
h1 { font-size: 15pt; margin: 0 0 3pt; }
h2 { font-size: 10.5pt; margin: 8pt 0 2pt; color: #0072B2; }
p { margin: 2pt 0; }
p.shows { color: #555; border-left: 3px solid #E69F00; padding-left: 6pt; }
p.fig { float: right; width: 84mm; margin: 2pt 0 2pt 8pt; }
p.fig img { width: 100%; display: block; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 8.8pt; background: #f2f2f2;
       padding: 0 2px; border-radius: 2px; }
"""


def inline(text: str) -> str:
    """Inline Markdown: `code` and **bold**, the rest escaped."""
    out = []
    for i, part in enumerate(re.split(r"(`[^`]*`)", text)):
        if i % 2:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
        else:
            escaped = html.escape(part)
            out.append(re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped))
    return "".join(out)


def to_html(markdown: str) -> str:
    body = []
    for block in re.split(r"\n\s*\n", markdown.strip()):
        text = " ".join(line.strip() for line in block.splitlines())
        if text.startswith("## "):
            body.append(f"<h2>{inline(text[3:])}</h2>")
        elif text.startswith("# "):
            body.append(f"<h1>{inline(text[2:])}</h1>")
        elif m := re.fullmatch(r"!\[([^\]]*)\]\(([^)]+)\)", text):
            data = base64.b64encode((SOURCE.parent / m[2]).read_bytes()).decode()
            body.append(f'<p class="fig"><img alt="{html.escape(m[1])}" '
                        f'src="data:image/png;base64,{data}"></p>')
        elif text.startswith("Shows it:"):
            body.append(f'<p class="shows">{inline(text)}</p>')
        else:
            body.append(f"<p>{inline(text)}</p>")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Retry backoff: the cheat sheet</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def chromium(*args: str) -> None:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        sys.exit("error: chromium is not installed (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args],
                       check=True, capture_output=True)


def pages(pdf: bytes) -> int:
    """Pages of a PDF: its page objects (`/Type /Page`, not `/Pages`)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-z])", pdf))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--screenshot", type=Path)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--herd", type=Path, help="the jitterlab binary that draws the picture")
    args = parser.parse_args()
    if args.herd:
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([str(args.herd), "run", "thundering-herd", "--quiet", "--out", out,
                            "--set", 'backoff.strategies=["no_jitter","full"]'],
                           check=True, capture_output=True)
            shutil.copyfile(Path(out) / "herd.png", HERD)
    if args.check:
        if not HTML.is_file() or HTML.read_text() != to_html(SOURCE.read_text()):
            print(f"error: {HTML.relative_to(REPO)} is not the rendering of "
                  f"{SOURCE.relative_to(REPO)}: run python3 scripts/cheat-sheet.py", file=sys.stderr)
            return 1
        print(f"{HTML.relative_to(REPO)} is up to date")
        return 0
    HTML.write_text(to_html(SOURCE.read_text()))
    chromium("--no-pdf-header-footer", f"--print-to-pdf={PDF}", HTML.as_uri())
    count = pages(PDF.read_bytes())
    if count != 1:
        print(f"error: {PDF.relative_to(REPO)} has {count} pages; the sheet must fit on one",
              file=sys.stderr)
        return 1
    if args.screenshot:
        chromium(f"--screenshot={args.screenshot}", "--window-size=794,1123", HTML.as_uri())
    print(f"wrote {HTML.relative_to(REPO)} and {PDF.relative_to(REPO)} (1 page)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
