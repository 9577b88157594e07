"""The man pages: no words glued together by the alternating-font macros (.BR, .IR, ...),
which join their arguments without a space ('.BR "x" ), the number' renders as
'x),thenumber'), and each page renders without a warning where groff is installed."""

import glob
import os
import re
import shlex
import shutil
import subprocess

import pytest

MAN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "man")
PAGES = sorted(glob.glob(os.path.join(MAN_DIR, "*.[0-9]")))
ALTERNATING = re.compile(r"^\.(BR|RB|BI|IB|IR|RI)\s+(.*)$")


def glued(line):
    """The pairs of arguments of an alternating-font macro line that render as one word."""
    found = ALTERNATING.match(line)
    if not found:
        return []
    try:
        args = shlex.split(found.group(2).replace("\\", "\\\\"))
    except ValueError:
        return [("unbalanced quotes", line)]
    pairs = []
    for prev, nxt in zip(args, args[1:]):
        if re.match(r"[A-Za-z0-9]", nxt) and not re.search(r"[(\[/ *_:=<]$|\\-$", prev):
            pairs.append((prev, nxt))
    return pairs


def test_lint_finds_glued_words():
    assert glued('.BR "ompi\\-checkpoint \\-\\-stop" ), the number of')
    assert not glued(".RB [ \\-a | \\-\\-all ]")
    assert not glued('.BR mpirun (1),')


@pytest.mark.parametrize("page", PAGES, ids=os.path.basename)
def test_page(page):
    with open(page) as f:
        bad = [(n, pair) for n, line in enumerate(f, 1) for pair in glued(line.rstrip("\n"))]
    assert not bad, "%s: words glued by a font macro: %s" % (page, bad)
    if not shutil.which("groff"):
        return
    with open(page) as f:
        if f.readline().startswith(".so "):
            return  # an alias of another page
    result = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page], capture_output=True,
                            text=True)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
