"""The code's own limits (issue 14): no C function over 80 lines, no user/*/*.c over 600."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(list((ROOT / "user").glob("*/*.c")) + list((ROOT / "bpf").glob("*.c")) +
                 list((ROOT / "workloads").glob("*.c")) + list((ROOT / "bench").glob("*.c")))
MAX_FUNCTION = 80
MAX_USER_FILE = 600


def functions(text):
    """(name, lines) of each function: kernel style, its body from a "{" to a "}" at column 0."""
    lines, out, start, name = text.splitlines(), [], None, None
    for i, line in enumerate(lines):
        if line == "{" and i:
            # The name is on the line with the opening parenthesis, at most a few lines up.
            head = " ".join(lines[max(0, i - 4):i])
            m = re.findall(r"(\w+)\s*\(", head)
            start, name = i, m[0] if m else "?"
        elif line.startswith("}") and start is not None:
            out.append((name, i - start + 1))
            start = None
    return out


def test_the_parser_sees_functions():
    found = dict(functions("static int f(int a,\n\t  int b)\n{\n\treturn a;\n}\n"))
    assert found == {"f": 3}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_long_function(path):
    long = [(n, k) for n, k in functions(path.read_text()) if k > MAX_FUNCTION]
    assert not long, f"functions over {MAX_FUNCTION} lines: {long}"


def test_no_long_user_file():
    long = [(str(p.relative_to(ROOT)), n) for p in (ROOT / "user").glob("*/*.c")
            if (n := len(p.read_text().splitlines())) > MAX_USER_FILE]
    assert not long, long
