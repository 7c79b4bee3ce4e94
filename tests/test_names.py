"""Hostile names (issue 28): file names, process names (prctl), command lines, cgroup names and
function names made of any bytes go through every output kind, and each output is checked by
its real consumer (Python's json and jq, promtool, the timeline's format checks, speedscope's
import of folded stacks) and read back to the original bytes by decoders written here from
docs/json.md's rules, not from the C code."""
import codecs
import html
import json
import os
import random
import re
import signal
import subprocess
import time
import unicodedata
from pathlib import Path

import pytest

from helpers import IOTRACE, run
from test_prom import Serve, cgroup2_root, parse, promtool_check
from test_trace import SPEEDSCOPE, check_format, viewer_page

COMM_LEN = 15  # PR_SET_NAME keeps 15 bytes and a NUL
ARGS_LEN = 256  # argv bytes an exec event carries

# The seven, then the corners of each rule: a real backslash-x (the value rule's one
# escape of a valid name), C1 and DEL, JavaScript's line breaks, a bidirectional override, an
# escape byte before an octal digit (strace's three-digit form), UTF-8 that is not (a
# surrogate, an overlong form, a cut character), wide and combining characters, ';' and spaces.
EXPLICIT = [b"new\nline", b'quo"te', b"back\\slash", b"tab\tbed", b"\x1b[31mred\x1b[0m",
            b"bad\xff\xfe", "valid-é日本".encode(), b"lit\\x41", "c1\u009b\u0085".encode(),
            b"del\x7f", "ls\u2028ps\u2029".encode(), "bidi\u202eevil".encode(), b"oct\x1b5",
            b"\xed\xa0\x80surrogate", b"\xc0\xafoverlong", "cut日".encode()[:-1],
            "e\u0301-wide日本語".encode(), b"semi;colon", b"sp ace\r"]
CONTROLS = (set(range(0x20)) | set(range(0x7f, 0xa0)) | {0x061c, 0x200e, 0x200f, 0x2028, 0x2029}
            | set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a)))


def random_name(rnd):
    """1..24 bytes, never NUL or '/': printable ASCII, controls, stray high bytes and
    characters of every UTF-8 length, mixed."""
    out = b""
    while len(out) < rnd.randint(1, 24):
        kind = rnd.random()
        if kind < 0.35:
            out += bytes([rnd.randint(0x20, 0x7e)])
        elif kind < 0.55:
            out += bytes([rnd.choice([*range(1, 0x20), 0x7f])])
        elif kind < 0.75:
            out += bytes([rnd.randint(0x80, 0xff)])
        else:
            cp = rnd.choice([rnd.randint(0x80, 0x7ff), rnd.randint(0x800, 0xd7ff),
                             rnd.randint(0xe000, 0xffff), rnd.randint(0x10000, 0x10ffff)])
            out += chr(cp).encode()
    return out.replace(b"/", b"_")


def hostile_names(count=12, seed=28):
    rnd = random.Random(seed)  # reproducible
    names = list(EXPLICIT)
    while len(names) < len(EXPLICIT) + count:
        n = random_name(rnd)
        if n not in names and n not in (b".", b".."):
            names.append(n)
    return names


NAMES = hostile_names()


# ---- the rules, written from docs/json.md ----

def units(b):
    """(bytes, code point or None for a byte of no valid character) of b, in order."""
    i = 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                ch = b[i:i + n].decode("utf-8")  # strict: no surrogate, no overlong form
            except UnicodeDecodeError:
                continue
            yield b[i:i + n], ord(ch)
            i += n
            break
        else:
            yield b[i:i + 1], None
            i += 1


def value_of(b, hex_also=()):
    """The value rule: invalid bytes and a backslash before 'x' as \\xHH; hex_also: code
    points also written \\xHH (Prometheus: controls; folded stacks: controls and ';')."""
    out, raw = [], list(units(b))
    for k, (u, cp) in enumerate(raw):
        nxt = raw[k + 1][0][:1] if k + 1 < len(raw) else b""
        if cp is None or cp in hex_also or (cp == 0x5c and nxt == b"x"):
            out.append("".join(f"\\x{c:02x}" for c in u))
        else:
            out.append(chr(cp))
    return "".join(out)


def value_decode(s):
    """Each \\xHH back to its byte; the rest is UTF-8."""
    return re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m[1], 16)]), s.encode())


def text_of(b):
    """strace's escapes: \\\\, \\t \\n \\v \\f \\r, other C0 and DEL in octal (three digits before
    an octal digit), the bytes of invalid UTF-8 and of the other controls in hex."""
    named = {9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 0x5c: "\\\\"}
    out, raw = [], list(units(b))
    for k, (u, cp) in enumerate(raw):
        nxt = raw[k + 1][0][:1] if k + 1 < len(raw) else b""
        if cp in named:
            out.append(named[cp])
        elif cp is not None and (cp < 0x20 or cp == 0x7f):
            out.append(f"\\{cp:03o}" if nxt and nxt in b"01234567" else f"\\{cp:o}")
        elif cp is None or cp in CONTROLS:
            out.append("".join(f"\\x{c:02x}" for c in u))
        else:
            out.append(chr(cp))
    return "".join(out)


def text_decode(s):
    return codecs.escape_decode(s.encode())[0]


def width(s):
    """Columns a terminal gives s: East Asian wide characters two, combining marks none
    (unassigned code points one: Python calls them fullwidth)."""
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" and
               unicodedata.category(c) != "Cn" else 1 for c in s)


def prom_unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m[1] == "n" else m[1], v)


def assert_safe_text(data):
    """Valid UTF-8, and no control character but the layout's newlines."""
    text = data.decode("utf-8")
    bad = {hex(ord(c)) for c in text if ord(c) in CONTROLS and c != "\n"}
    assert not bad, bad
    return text


def load_json(data):
    """Strict: UTF-8 (RFC 8259) and JSON, by Python; and jq reads the same strings."""
    doc = json.loads(data.decode("utf-8"))
    res = run(["jq", "-c", "[.. | strings]"], input=data)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == list(strings(doc)), "jq read other strings"
    return doc


def strings(doc):
    """Every string of a JSON document, keys excluded, in jq's `..` order."""
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, list):
        for v in doc:
            yield from strings(v)
    elif isinstance(doc, dict):
        for v in doc.values():
            yield from strings(v)


# ---- the workloads ----

HELPER = r"""
/* For each NAME: a child named NAME (prctl) reads IN and writes and syncs OUT through
 * functions with hostile symbol names, for --stacks. Usage: hostile IN OUT NAME... */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static const char *in_path, *out_path;

static void io(void)
{
	char buf[8192] = { 1 };
	int fd = open(in_path, O_RDONLY);

	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf) || fsync(fd))
		exit(1);
	close(fd);
}

FRAMES

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: hostile IN OUT NAME...\n");
		return 2;
	}
	in_path = argv[1];
	out_path = argv[2];
	for (int i = 3; i < argc; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			prctl(PR_SET_NAME, argv[i]);
			FIRST();
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || status)
			return 1;
	}
	return 0;
}
"""


def c_string(b):
    return '"' + "".join(f"\\{c:03o}" for c in b) + '"'


@pytest.fixture(scope="module")
def helper(tmp_path_factory):
    """The helper, built with clang (its assembler takes any bytes in a symbol's name), with
    frame pointers and without DWARF, so that --stacks names the frames by the symbol table."""
    frames = [n for n in NAMES if n][:10]
    funcs = []
    for i, name in enumerate(frames):
        callee = "io" if i == len(frames) - 1 else f"hop{i + 1}"
        funcs.append(f"__attribute__((noinline)) void hop{i}(void) __asm__({c_string(name)});\n"
                     f"__attribute__((noinline)) void hop{i}(void) {{ {callee}(); "
                     f"__asm__ volatile(\"\"); }}")
    # Callees first: each function is defined after the one it calls.
    src = HELPER.replace("FRAMES", "\n".join(reversed(funcs))).replace("FIRST", "hop0")
    d = tmp_path_factory.mktemp("hostile")
    (d / "hostile.c").write_text(src)
    res = run(["clang", "-O0", "-g0", "-fno-omit-frame-pointer", "-o", d / "hostile",
               d / "hostile.c"])
    assert res.returncode == 0, res.stderr.decode()
    return d / "hostile", frames


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A directory of files named by every hostile name (as bytes paths)."""
    d = bytes(tmp_path_factory.mktemp("names"))
    paths = []
    for i, name in enumerate(NAMES):
        p = os.path.join(d, name)
        with open(p, "wb") as f:
            f.write(b"x" * (100 + i))
        paths.append(p)
    return paths


def comms():
    return [n[:COMM_LEN] for n in NAMES]


def iotrace(*args, timeout=120):
    res = run([bytes(IOTRACE), *args], timeout=timeout)
    assert res.returncode == 0, res.stderr.decode(errors="replace")
    return res


# ---- run mode: text, JSON, timeline, folded stacks, Prometheus file ----

def test_text_report_one_line_per_file_nothing_raw(tmp_path, files):
    """cat of every file: each file is one row of the files table, as wide as the header
    (columns counted as a terminal shows them), nothing raw for the terminal; --wide shows
    each name whole as strace escapes it, which reads back to the bytes."""
    out = tmp_path / "report.txt"
    iotrace("-o", out, "--files", "all", "--", "cat", *files)
    lines = assert_safe_text(out.read_bytes()).splitlines()
    head = next(i for i, l in enumerate(lines) if re.match(r"files: \d+ of \d+", l)
                and " cat: cat " in lines[i - 2])
    listed = int(re.match(r"files: (\d+)", lines[head])[1])
    rows = lines[head + 3:lines.index("", head)]
    assert listed >= len(files) and len(rows) >= listed, lines[head:head + 4 + listed]
    assert {width(r) for r in rows} == {width(lines[head + 2])}, rows
    assert all(re.search(r"( +\S+){12}$", r) for r in rows), rows
    header = lines[head - 2]
    assert header.startswith("== pid ") and re.search(r" — exit 0, [\d.]+ s$", header)
    assert width(header) <= 100, header
    wide = tmp_path / "wide.txt"
    iotrace("-o", wide, "--wide", "--files", "all", "--", "cat", *files)
    lines = assert_safe_text(wide.read_bytes()).splitlines()
    for path in files:
        shown = text_of(path)
        assert text_decode(shown) == path
        assert shown in lines, (path, shown)  # a long name has a line of its own


def test_json_report_is_utf8_and_reads_back(tmp_path, files, helper):
    """--json is valid UTF-8 JSON for Python and jq; every path, comm, command line and
    earlier name (a file renamed from one hostile name to another) reads back to its bytes."""
    exe, _ = helper
    out = tmp_path / "report.json"
    old, new = bytes(tmp_path / "\x1b[31mold\n"), bytes(tmp_path / 'new;"\\x') + b"\xfe"
    with open(old, "wb") as f:
        f.write(b"old")
    script = (b'd=$1; o=$2; n=$3; shift 3; cat "$d"/* "$o" >/dev/null; mv "$o" "$n"; '
              b'cat "$n" >/dev/null; exec "$@"')
    argv = [bytes(exe), files[1], bytes(tmp_path / "o"), *NAMES]
    command = [b"sh", b"-c", script, b"sh", os.path.dirname(files[0]), old, new, *argv]
    iotrace("--json", "-o", out, "--", *command)
    doc = load_json(out.read_bytes())
    paths = {value_decode(f["path"]): f for p in doc["processes"] for f in p["files"]
             if "path" in f}
    for path in [*files, new]:
        assert path in paths, path
        assert paths[path]["path"] == value_of(path)
    assert [value_decode(n) for n in paths[new].get("other_names", [])] == [old]
    assert [value_decode(a) for a in doc["command"]] == command
    procs = [p for p in doc["processes"] if p["pid"] is not None]
    assert set(comms()) <= {value_decode(p["comm"]) for p in procs}
    joined = b" ".join(argv)
    for p in procs:
        if value_decode(p["comm"]) in comms():
            args = value_decode(p["args"])
            assert joined.startswith(args) and len(args) >= min(len(joined), ARGS_LEN - 1)


def test_trace_is_valid_and_names_read_back(tmp_path, files, helper):
    """--trace: valid UTF-8 JSON with the Trace Event Format's rules; every file's name in
    the calls' args and every process name reads back."""
    exe, _ = helper
    trace = tmp_path / "trace.json"
    iotrace("--trace", trace, "--trace-min", "0", "-o", tmp_path / "r", "--", "sh", "-c",
            b'd=$1; shift; cat "$d"/* >/dev/null; exec "$@"', "sh", os.path.dirname(files[0]),
            exe, files[0], tmp_path / "o", *NAMES)
    doc = load_json(trace.read_bytes())
    events = check_format(doc)
    named = {value_decode(e["args"]["file"]) for e in events
             if isinstance(e.get("args"), dict) and "file" in e["args"]}
    assert set(files) <= named, set(files) - named
    names = {value_decode(e["args"]["name"]) for e in events
             if e["ph"] == "M" and e["name"] in ("process_name", "thread_name")}
    assert set(comms()) <= names, set(comms()) - names


def test_trace_is_valid_and_names_read_back(tmp_path, files, helper):
    """--trace: valid UTF-8 JSON with the Trace Event Format's rules; every file's name in
    the calls' args and every process name reads back."""
    exe, _ = helper
    trace = tmp_path / "trace.json"
    iotrace("--trace", trace, "--trace-min", "0", "-o", tmp_path / "r", "--", "sh", "-c",
            b'cat "$@" >/dev/null; exec "$0" "$1" "$2" "$3" "$4" "$5"', bytes(exe),
            *files[:1], bytes(tmp_path / "o"), *NAMES[:3], *files)
    doc = load_json(trace.read_bytes())
    events = check_format(doc)
    named = {value_decode(e["args"]["file"]) for e in events
             if isinstance(e.get("args"), dict) and "file" in e["args"]}
    assert set(files) <= named, set(files) - named
    names = {value_decode(e["args"]["name"]) for e in events
             if e["ph"] == "M" and e["name"] in ("process_name", "thread_name")}
    assert {n[:COMM_LEN] for n in NAMES[:3]} <= names, names


FOLDED_LINE = re.compile(r"^[^;\n]*(;[^;\n]*)+ \d+$")


def test_folded_stacks_keep_their_format(tmp_path, files, helper):
    """--stacks: every line is "frame;frame;... count", valid UTF-8 with no control; the
    hostile function names and process names are frames that read back; speedscope imports
    the file and lists those frames."""
    exe, frames = helper
    folded, report = tmp_path / "stacks.folded", tmp_path / "report.json"
    iotrace("--stacks", folded, "--stacks-unwind", "fp", "--json", "-o", report, "--", exe,
            files[0], tmp_path / "o", *NAMES)
    # Each process's call sites: its innermost frames outside libc, in JSON and in text.
    site = " ← ".encode().join([b"io", *reversed(frames[-2:])])
    children = [p for p in load_json(report.read_bytes())["processes"]
                if p["pid"] and value_decode(p["comm"]) in comms()]
    assert len(children) == len(NAMES)
    for p in children:
        assert site in [value_decode(s["where"]) for s in p["stack_sites"]], p
    iotrace("--stacks", tmp_path / "s", "--stacks-unwind", "fp", "-o", tmp_path / "r.txt",
            "--", exe, files[0], tmp_path / "o", NAMES[0])
    text = assert_safe_text((tmp_path / "r.txt").read_bytes())
    assert re.search(r" (write|fsync) +" + re.escape(text_of(site)) + "$", text, re.M), text
    text = assert_safe_text(folded.read_bytes())
    lines = text.splitlines()
    assert lines and all(FOLDED_LINE.match(l) for l in lines), lines[:3]
    stacks = [l.rsplit(" ", 1)[0].split(";") for l in lines]
    for name in NAMES:
        assert any(value_decode(s[0]) == name[:COMM_LEN] for s in stacks), name
    ours = [s for s in stacks if value_decode(s[0]) in comms()]
    for name in frames:
        shown = value_of(name, CONTROLS | {ord(";")})
        assert any(shown in s for s in ours), (name, shown, ours[:1])
        assert value_decode(shown) == name
    if SPEEDSCOPE.exists() and Path("/usr/bin/chromium").exists():
        dom = html.unescape(speedscope_sandwich(tmp_path, folded))
        assert "Unrecognized format" not in dom
        missing = [value_of(n, CONTROLS | {ord(";")}) for n in frames
                   if value_of(n, CONTROLS | {ord(";")}) not in dom]
        assert not missing, (missing, len(dom), "Symbol Name" in dom, dom[-3000:])


def speedscope_sandwich(tmp_path, profile):
    """speedscope (headless Chromium) opens the profile in its sandwich view, which lists
    every frame by name in a table; returns the page's DOM."""
    return viewer_page(tmp_path, profile, view="sandwich", height=4000)["dom"]


def test_prom_file_labels_read_back(tmp_path, files, helper):
    """--prom-file named with hostile bytes, processes with hostile names: promtool accepts
    it, and the comm and run labels read back to the bytes."""
    exe, _ = helper
    d = tmp_path / "prom"
    d.mkdir()
    path = os.path.join(bytes(d), b"run\n\xff\x1b" + NAMES[1] + b".prom")
    iotrace("--prom-file", path, "-o", tmp_path / "r", "--", exe, files[0], tmp_path / "o",
            *NAMES)
    # More than 8 processes: the top ones by I/O have sections ("== pid N (ppid M) COMM:"),
    # the rest are listed one line each ("PID PPID COMM ...").
    lines = assert_safe_text((tmp_path / "r").read_bytes()).splitlines()
    for name in NAMES:
        comm = re.escape(text_of(name[:COMM_LEN]))
        assert any(re.match(rf" *\d+ +\d+ {comm} ", l) or
                   re.match(rf"== pid \d+ \(ppid \d+\) {comm}: ", l) for l in lines), name
    data = open(path, "rb").read()
    check = tmp_path / "check.prom"
    check.write_bytes(data)
    promtool_check(check)
    text = assert_safe_text(data)
    labels = [l for _, l, _ in parse(text)]
    got = {value_decode(prom_unescape(l["comm"])) for l in labels if "comm" in l}
    assert set(comms()) <= got, set(comms()) - got
    runs = {value_decode(prom_unescape(l["run"])) for l in labels}
    assert runs == {os.path.basename(path)[:-len(".prom")]}


NAMER = ("import ctypes, sys; name = sys.argv[1].encode('utf-8', 'surrogateescape'); "
         "ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name), 0, 0, 0); "
         "sys.stdin.readline(); open(sys.argv[2], 'rb').read()")


def test_attached_process_name_reads_back(tmp_path, files):
    """-p: a process that named itself (a newline, an escape sequence, an invalid byte)
    before iotrace attached: the attach line shows the name escaped for a terminal, and the
    report has it whole (the kernel's newline after /proc/PID/comm's name is not the name's)."""
    name = b"at\n\x1b[31m\xff;"
    proc = subprocess.Popen(["/usr/bin/python3", "-c", NAMER, name, files[0]],
                            stdin=subprocess.PIPE)
    out = tmp_path / "r.json"
    try:
        comm = f"/proc/{proc.pid}/comm"
        for _ in range(100):
            if open(comm, "rb").read() == name + b"\n":
                break
            time.sleep(0.05)
        tracer = subprocess.Popen([bytes(IOTRACE), "--json", "-o", out, "-p", str(proc.pid)],
                                  stderr=subprocess.PIPE)
        line = tracer.stderr.readline()
        proc.stdin.write(b"\n")
        proc.stdin.close()
        proc.wait(timeout=30)
        assert tracer.wait(timeout=30) == 0, tracer.stderr.read()
    finally:
        proc.kill()
        proc.wait()
    assert_safe_text(line)
    assert f"({text_of(name)});".encode() in line, line
    doc = load_json(out.read_bytes())
    (p,) = [p for p in doc["processes"] if p["pid"] == proc.pid]
    assert p["comm"] == value_of(name) and value_decode(p["comm"]) == name
    assert any(value_decode(f["path"]) == files[0] for f in p["files"] if "path" in f)


# ---- serve, snoop: cgroup names ----

@pytest.fixture
def cgroups():
    """A cgroup under the root for each hostile name the kernel takes."""
    root = bytes(cgroup2_root())
    made = []
    for i, name in enumerate(NAMES):
        path = os.path.join(root, b"iot28-%d-%d-" % (os.getpid(), i) + name)
        try:
            os.mkdir(path)
        except OSError:
            continue
        made.append(path)
    yield made
    for path in made:
        for _ in range(50):
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.1)


def run_in(cgroup, argv):
    def enter():
        with open(os.path.join(cgroup, b"cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    res = run(argv, preexec_fn=enter)
    assert res.returncode == 0, res.stderr


def test_serve_labels_read_back(tmp_path, files, helper, cgroups):
    """serve --comm: processes in hostile cgroups with hostile names; promtool accepts the
    scrape, and every cgroup and comm label reads back to the bytes."""
    exe, _ = helper
    root = bytes(cgroup2_root())
    serve = Serve("--comm")
    try:
        for cg in cgroups:
            run_in(cg, [bytes(exe), files[0], bytes(tmp_path / "o"), *NAMES[:3]])
        text = serve.scrape()
    finally:
        assert serve.stop() == 0
    path = tmp_path / "serve.prom"
    path.write_text(text)
    promtool_check(path)
    assert_safe_text(text.encode())
    labels = [l for n, l, _ in parse(text) if n == "iotrace_syscalls_total"]
    got = {(value_decode(prom_unescape(l["cgroup"])), value_decode(prom_unescape(l["comm"])))
           for l in labels}
    for cg in cgroups:
        for name in NAMES[:3]:
            assert (cg[len(root):], name[:COMM_LEN]) in got, (cg, name)


def test_snoop_json_lines_read_back(tmp_path, files, helper, cgroups):
    """snoop -j -c on a hostile cgroup: every line is valid UTF-8 JSON, and the requests of
    each hostile-named process carry its name, read back to the bytes."""
    exe, _ = helper
    cg = cgroups[0]
    snoop = subprocess.Popen([bytes(IOTRACE), "snoop", "-j", "-c", cg],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert snoop.stderr.readline().startswith(b"iotrace: tracing block I/O")
        run_in(cg, [bytes(exe), files[0], bytes(tmp_path / "o"), *NAMES])
    finally:
        snoop.send_signal(signal.SIGINT)
        stdout, stderr = snoop.communicate(timeout=30)
    assert snoop.returncode == 0, stderr
    lines = stdout.splitlines()
    records = [json.loads(l.decode("utf-8")) for l in lines]
    assert records[-1].get("summary") is True
    got = {value_decode(r["comm"]) for r in records[:-1]}
    assert set(comms()) <= got, set(comms()) - got
    for l in lines:
        assert run(["jq", "-e", "."], input=l).returncode == 0, l


# ---- compare ----

def shell_quote(b):
    return b"'" + b.replace(b"'", b"'\\''") + b"'"


def test_compare_labels_commands_and_files_read_back(tmp_path, files):
    """compare with hostile labels and commands naming hostile files: its JSON is valid for
    Python and jq, labels and commands read back, the files named on the commands get their
    rows (their paths matched in the runs' reports); the text table has nothing raw."""
    plain = [p for p in files if not re.search(rb"[ \t\n'\"<>&;|()]", p)][:2]
    assert len(plain) == 2
    commands = [b"cat " + shell_quote(p) + b" >/dev/null" for p in plain]
    out = tmp_path / "compare.json"
    iotrace("compare", "--json", "-o", out, "--label", NAMES[4], "--label", NAMES[5], "--",
            *commands, timeout=300)
    doc = load_json(out.read_bytes())
    variants = doc["variants"]
    assert [value_decode(v["label"]) for v in variants] == NAMES[4:6]
    assert [value_decode(v["command"]) for v in variants] == commands
    keys = {value_decode(k): v for k, v in variants[0]["summary"]["files"].items()}
    for p in plain:
        real = os.path.realpath(p)
        assert real in keys, (real, keys.keys())
    assert keys[os.path.realpath(plain[0])]["calls"] >= 1
    assert keys[os.path.realpath(plain[1])]["calls"] is None
    res = run([bytes(IOTRACE), "compare", "--", *commands], timeout=300)
    assert res.returncode == 0, res.stderr
    legend = assert_safe_text(res.stdout).splitlines()[-2:]
    for line, command in zip(legend, commands):
        assert line.endswith(": " + text_of(command)) and text_decode(text_of(command)) == \
            command, line
