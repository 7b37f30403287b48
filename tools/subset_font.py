"""Build the Chinese font the figures use: a subset of Noto Sans CJK SC with only the characters the course writes.

Usage: python tools/subset_font.py [--source FONT] [--check]

matplotlib's own font (DejaVu Sans) has no Chinese glyphs. ``utils.plots`` registers the font
this script writes (utils/data/fonts/) as the fallback for them, so every figure draws the same
glyphs on every machine. The full Noto Sans CJK font is tens of MB; the course uses a few
hundred characters, so we ship only those:

- every Chinese character the figures can draw: the course vocabulary, the package's source
  (titles, widget labels, the language catalogue) and the notebooks' code cells;
- every Chinese character of the Chinese lessons and the glossary, so a Chinese figure title
  written later finds its glyphs;
- printable ASCII.

Adding a Chinese word or title: run this script and commit the new font. It reads the font and
the licence text from Debian's ``fonts-noto-cjk`` (``apt-get install fonts-noto-cjk``).
``--check`` writes nothing and exits 1 when a character the figures can draw has no glyph in
the shipped font (tests/test_fonts.py runs the same check); characters only the lessons use are
listed as a reminder.

The subset is renamed (a modified font should not pass for the original) and stays under the
SIL Open Font License, whose text ships next to it as OFL.txt.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FONT_DIR = ROOT / "utils" / "data" / "fonts"
FONT = FONT_DIR / "NotoSansSC-course-subset.otf"  # utils.plots.COURSE_FONT (a test keeps them equal)
LICENCE = FONT_DIR / "OFL.txt"

SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")  # fonts-noto-cjk
SOURCE_FAMILY = "Noto Sans CJK SC"  # the face to take from a collection (it also holds JP, KR, TC, HK)
FAMILY, POSTSCRIPT = "KV Course Sans SC", "KVCourseSansSC-Regular"
UPSTREAM_COPYRIGHT = "Copyright 2014-2021 Adobe (http://www.adobe.com/), with Reserved Font Name 'Source'."
OFL_SOURCE = Path("/usr/share/doc/fonts-noto-cjk/copyright")  # Debian's copy of the OFL 1.1 text

# Blocks DejaVu Sans lacks and Chinese text uses: CJK radicals, symbols and punctuation (、。《》),
# kana, ideographs (with extension A and compatibility forms), vertical and full-width forms (，：（）).
CJK = re.compile(r"[\u2e80-\u2fff\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")
ASCII = "".join(chr(c) for c in range(0x20, 0x7F))


def cjk(text: str) -> set[str]:
    return set(CJK.findall(text))


def drawn_characters() -> set[str]:
    """Chinese characters a figure can draw: the package's source and data (the vocabulary is
    utils/data/course_tokenizer.json) and the notebooks' code cells."""
    chars = set()
    for path in sorted((ROOT / "utils").rglob("*.py")) + sorted((ROOT / "utils" / "data").glob("*.json")):
        chars |= cjk(path.read_text("utf-8"))
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        cells = json.loads(path.read_text("utf-8"))["cells"]
        chars |= cjk("".join("".join(c["source"]) for c in cells if c["cell_type"] == "code"))
    return chars


def lesson_characters() -> set[str]:
    """Chinese characters of the Chinese lessons and the glossary (room for Chinese figure titles)."""
    paths = sorted((ROOT / "lessons" / "zh").glob("*.md")) + [ROOT / "lessons" / "glossary.md"]
    return set().union(*(cjk(p.read_text("utf-8")) for p in paths if p.exists()))


def missing_glyphs(font: Path, chars: set[str]) -> list[str]:
    """The characters of ``chars`` that ``font`` has no glyph for, sorted."""
    from matplotlib.ft2font import FT2Font
    face = FT2Font(str(font))
    return sorted(ch for ch in chars if face.get_char_index(ord(ch)) == 0)


def _face_number(source: Path) -> int:
    """Index of the Simplified Chinese face in a font collection (0 for a single font)."""
    from fontTools.ttLib import TTCollection
    if source.suffix.lower() != ".ttc":
        return 0
    names = [f["name"].getDebugName(1) for f in TTCollection(str(source), lazy=True).fonts]
    if SOURCE_FAMILY not in names:
        raise ValueError(f"{source} holds no {SOURCE_FAMILY!r} face, only {names}")
    return names.index(SOURCE_FAMILY)


def build(source: Path, chars: set[str]) -> None:
    """Write FONT: ``source``'s Simplified Chinese face cut to ``chars``, renamed; and LICENCE."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.layout_features = []  # matplotlib draws glyph by glyph, without OpenType shaping
    options.name_IDs = ["*"]  # keep the copyright, licence and designer records
    options.name_languages = [0x409]  # in English
    # The source's timestamp is kept, so the same characters give the same bytes.
    font = TTFont(str(source), fontNumber=_face_number(source), lazy=False, recalcTimestamp=False)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(ord(c) for c in chars))
    subsetter.subset(font)

    names = font["name"]
    version = f"Version {font['head'].fontRevision:.3f}"
    for name_id in (16, 17, 21, 22):  # typographic family names, if any, would keep the old name
        names.removeNames(nameID=name_id)
    for name_id, value in {1: FAMILY, 3: f"{POSTSCRIPT};course subset", 4: FAMILY, 6: POSTSCRIPT,
                           5: f"{version}; subset of {SOURCE_FAMILY} by tools/subset_font.py"}.items():
        names.setName(value, name_id, 3, 1, 0x409)
    cff = font["CFF "].cff
    cff.fontNames = [POSTSCRIPT]
    top = cff.topDictIndex[0]
    top.FullName, top.FamilyName = FAMILY, FAMILY
    FONT_DIR.mkdir(parents=True, exist_ok=True)
    font.save(str(FONT))

    # Debian's copyright file: the licence is the stanza "License: SIL-1.1" followed by its text,
    # indented by one space, blank lines written as " .".
    stanza = next(s for s in OFL_SOURCE.read_text("utf-8").split("\n\n") if s.startswith("License: SIL-1.1\n"))
    ofl = "\n".join("" if line == " ." else line[1:] for line in stanza.splitlines()[1:])
    LICENCE.write_text(
        f"{FONT.name} ({FAMILY}) is a subset of {SOURCE_FAMILY} ({version}),\n"
        f"made by tools/subset_font.py. Original font:\n\n{UPSTREAM_COPYRIGHT}\n\n"
        f"This Font Software is licensed under the SIL Open Font License, Version 1.1.\n"
        f"This license is copied below, and is also available with a FAQ at: https://openfontlicense.org\n\n"
        f"{ofl}\n", "utf-8")


def check() -> int:
    """Print what the shipped font lacks; 1 when a character a figure can draw has no glyph."""
    drawn = drawn_characters()
    lacking = missing_glyphs(FONT, drawn)
    later = missing_glyphs(FONT, lesson_characters() - drawn)
    if later:
        print(f"{len(later)} characters of the lessons have no glyph (only needed once a figure "
              f"writes them): {''.join(later)}")
    if lacking:
        print(f"figures can draw {len(lacking)} characters the shipped font lacks: {''.join(lacking)}\n"
              f"run: python tools/subset_font.py")
        return 1
    print(f"{FONT.relative_to(ROOT)}: every one of the {len(drawn)} Chinese characters the figures use has a glyph")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a glyph is missing")
    parser.add_argument("--source", type=Path, default=SOURCE,
                        help=f"Noto Sans CJK: a .ttc collection or the SC .otf (default {SOURCE})")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    if not args.source.exists():
        raise SystemExit(f"{args.source} not found: install Noto Sans CJK (Debian: apt-get install fonts-noto-cjk) "
                         f"or pass --source")
    chars = drawn_characters() | lesson_characters() | set(ASCII)
    build(args.source, chars)
    lacking = missing_glyphs(FONT, chars)
    if lacking:
        raise SystemExit(f"{args.source} itself has no glyph for: {''.join(lacking)}")
    print(f"wrote {FONT.relative_to(ROOT)}: {len(chars)} characters, {FONT.stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
