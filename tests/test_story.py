"""The run's story (docs/run-mode.md, "The first screen"): at most 30 lines of at most 100
columns whatever the number of processes; its top files and processes are those with the
most bytes by strace -ff -yy of the same run; JSON totals.files adds up to the processes'
rows; -s prints the first screen alone; call sites skip the syscall wrappers."""
import json
import os
import re
import subprocess
import sys

import pytest

from helpers import IOTRACE, iotrace_json, real_processes, run
from ledger import COPIES, DATA, FILE_CALLS, normal, strace_calls, strace_files

SCREEN_LINES, COLUMNS = 30, 100
GO = "/usr/local/go/bin/go"


def make_build(tmp):
    """make -j2 of seven C files and their link (cc1, as, ld: a few dozen processes)."""
    src = tmp / "build"
    src.mkdir()
    names = [f"unit{i}" for i in range(7)]
    for i, n in enumerate(names):
        (src / f"{n}.c").write_text(
            "".join(f"int {n}_f{k}(int x) {{ return x * {k} + {i}; }}\n" for k in range(200)))
    (src / "main.c").write_text("int main(void) { return 0; }\n")
    objs = " ".join(f"{n}.o" for n in names + ["main"])
    (src / "Makefile").write_text(f"prog: {objs}\n\tcc -o prog {objs}\n"
                                  "%.o: %.c\n\tcc -O1 -c -o $@ $<\n")
    return f"make -s -j2 -C {src}"


def pipeline(tmp):
    data = tmp / "words"
    data.write_bytes(b"".join(b"word%d\n" % (i % 5000) for i in range(200000)))
    return f"cat {data} | tr a-z A-Z | sort > {tmp}/sorted; wc -c {tmp}/sorted"


def python_workers(tmp):
    for i in range(4):
        (tmp / f"in{i}").write_bytes(os.urandom(200000 * (i + 1)))
    script = tmp / "workers.py"
    script.write_text(
        "import multiprocessing, sys\n"
        "def work(i):\n"
        f"    data = open('{tmp}/in%d' % i, 'rb').read()\n"
        f"    open('{tmp}/out%d' % i, 'wb').write(data[::-1])\n"
        "    return len(data)\n"
        "if __name__ == '__main__':\n"
        "    with multiprocessing.get_context('fork').Pool(3) as p:\n"
        "        print(sum(p.map(work, range(4))))\n")
    return f"{sys.executable} {script}"


def tar_gzip(tmp):
    d = tmp / "tree"
    d.mkdir()
    for i in range(5):
        (d / f"f{i}").write_bytes(os.urandom(150000 * (i + 1)))
    return f"tar cf - -C {tmp} tree | gzip -1 > {tmp}/tree.tgz"


WORKLOADS = {"make": make_build, "pipeline": pipeline, "python": python_workers,
             "tar_gzip": tar_gzip}


def first_screen(text):
    """The report up to its details (the first line starting with "== ")."""
    return text.split("\n== ", 1)[0]


def strace_log(tmp, n):
    return tmp / f"st{n}"


def traced(cmd, tmp, opts=(), json_out=None, cwd=None):
    """(report text or JSON, strace log prefix): iotrace -- strace -ff -yy -- sh -c CMD."""
    n = len(list(tmp.glob("report.*")))
    out, log = tmp / f"report.{n}", strace_log(tmp, n)
    # clone and clone3 too: a thread's log is its own file, named by its tid (strace_tgids).
    res = run([str(IOTRACE), *opts, "-o", str(out), "--", "strace", "-f", "-ff", "-s0", "-yy",
               "-e", "trace=" + ",".join(FILE_CALLS + ["clone", "clone3"]), "-o", str(log),
               "sh", "-c", cmd],
              timeout=600, cwd=cwd)
    assert res.returncode == 0, res.stderr[-2000:]
    return out.read_text(), str(log)


def strace_pid_bytes(log):
    """{pid: bytes its threads' read/write-family calls moved} (a copy on both sides, as
    iotrace)."""
    out = {}
    for pid, name, _args, _files, failed, value in strace_calls(log):
        if name in DATA and not failed:
            out[pid] = out.get(pid, 0) + int(value) * (2 if name in COPIES else 1)
    return out


def strace_file_bytes(log):
    """{file: bytes} of the read/write family by strace -yy's names."""
    out = {}
    for (name, call), row in strace_files(log).items():
        if call in DATA:
            out[name] = out.get(name, 0) + row[2]
    return out


# docs/run-mode.md, "What the run worked on, what it loaded" (user/model/file_use.c): the C
# library's start-up files, and where the system's files are.
STARTUP = ("/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/locale.alias", "/usr/lib/locale/",
           "/usr/share/locale/", "/etc/nsswitch.conf", "/etc/localtime", "/usr/share/zoneinfo/")
SYSTEM = ("/usr/", "/etc/", "/opt/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/",
          "/libx32/")
READS = {"read", "pread64", "readv", "preadv", "preadv2"}
WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2", "fsync", "fdatasync",
          "sync_file_range", "ftruncate", "fallocate"}


def under(path, d):
    return path.startswith(d) if d.endswith("/") else path == d or path.startswith(d + "/")


def strace_uses(log):
    """{file: (use, bytes, written)} by strace's logs and the rule of docs/run-mode.md: a
    process's use of a file is code when it mmapped it PROT_EXEC and read none of it after;
    startup for one of the C library's start-up files it did not write; else data. The run's:
    data when any process's is, then code, then startup."""
    per, rank = {}, {"data": 0, "code": 1, "startup": 2}
    for pid, name, args, files, failed, value in strace_calls(log):
        for i, f in enumerate(files):
            st = per.setdefault((pid, f), {"exec": False, "after": 0, "wrote": False,
                                           "bytes": 0})
            copy_side = name in COPIES and len(files) == 2
            if name == "mmap" and "PROT_EXEC" in args and not failed:
                st["exec"] = True
            if name in DATA and not failed:
                st["bytes"] += int(value)
            if st["exec"] and (name in READS or (copy_side and i == 0)):
                st["after"] += 1
            if name in WRITES or (copy_side and i == 1):
                st["wrote"] = True
    out = {}
    for (pid, f), st in per.items():
        startup = any(under(f, d) for d in STARTUP) or (f.startswith("/usr/lib") and
                                                        "/gconv/" in f)
        use = ("data" if st["wrote"] else ("data" if st["after"] else "code") if st["exec"]
               else "startup" if startup else "data")
        was = out.get(f, ("startup", 0, False))
        out[f] = (min(was[0], use, key=rank.get), was[1] + st["bytes"], was[2] or st["wrote"])
    return out


def screen_order(uses, cwd=None, skip=lambda f: False):
    """The bytes of the files the first screen lists, in its order: those the run worked on,
    the system's files it only read last, each part by bytes."""
    def system(f, written):
        return (not written and any(under(f, d) for d in SYSTEM) and
                not (cwd and under(f, str(cwd))))
    data = [(system(f, w), b) for f, (u, b, w) in uses.items() if u == "data" and not skip(f)]
    return [b for _, b in sorted(data, key=lambda x: (x[0], -x[1]))]


def cell_path(cell, cwd=None):
    """A name cell as a path: relative to the command's working directory when it is."""
    # " (deleted)": strace -yy's names too (normal); a path's files in one row: "(3 versions)"
    cell = re.sub(r" \((deleted|\d+ versions(, deleted)?)\)$", "", cell)
    if cwd and cell == ".":
        return str(cwd)
    return cell if cell.startswith("/") or ":" in cell or not cwd else f"{cwd}/{cell}"


def shown_matches(shown, path):
    """A name cell ("/usr/…/libc.so.6") is path cut in its middle (or whole)."""
    parts = shown.split("…")
    return path.startswith(parts[0]) and path.endswith(parts[-1]) and (
        len(parts) > 1 or path == shown)


def screen_tables(screen):
    """(file names, pids) of the first screen's tables."""
    lines = screen.splitlines()
    fstart = next(i for i, l in enumerate(lines) if l.startswith("files: "))
    pstart = next(i for i, l in enumerate(lines) if l.startswith("processes: "))
    width = lines[fstart + 2].index("calls") - 2  # the name column, as wide as its names
    files = [l[:width].rstrip() for l in lines[fstart + 3:pstart]
             if l.strip() and not l.startswith("+ ")]
    pids = [int(l.split()[0]) for l in lines[pstart + 2:] if l.strip() and l.split()[0].isdigit()]
    return files, pids


def top_values(values, k):
    return sorted(values, reverse=True)[:k]


def check_files_shown(screen, log, cwd=None):
    """The first screen's files are strace's by the rule: what the run worked on (its loaded
    code and start-up files folded), by bytes, the system's last; the strace logs aside."""
    files, _ = screen_tables(screen)
    uses = strace_uses(log)
    skip = lambda f: f.startswith(log)
    # strace's own files: its logs, and what it reads of the kernel and its tracees (/proc).
    shown = [f for f in files if not re.search(r"st\d+\.\d+$", f) and
             not f.startswith("/proc/")]
    assert shown, screen
    values = []
    for cell in shown:
        match = [p for p in uses if not skip(p) and shown_matches(cell_path(cell, cwd), p)]
        assert match, (cell, sorted(uses)[:20])
        assert all(uses[p][0] == "data" for p in match), (cell, [uses[p] for p in match])
        values.append(max(uses[p][1] for p in match))
    assert values == screen_order(uses, cwd, skip)[:len(values)], (shown, values, screen)
    return shown


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_first_screen_tells_the_story(name, tmp_path):
    """≤30 lines, ≤100 columns; its files and processes are strace's top ones by bytes (the
    files: of those the run worked on, the system's last)."""
    text, log = traced(WORKLOADS[name](tmp_path), tmp_path, ["--no-time"])
    screen = first_screen(text)
    assert len(screen.splitlines()) <= SCREEN_LINES, screen
    wide = [l for l in text.splitlines() if len(l) > COLUMNS]
    assert not wide, wide[:5]
    for label in ("syscalls ", "read/write ", "page cache ", "disk ", "files: ", "processes: "):
        assert re.search(rf"^{re.escape(label)}", screen, re.M), label
    files, pids = screen_tables(screen)
    by_pid = strace_pid_bytes(log)
    # strace itself is traced too (it writes the logs): left out on both sides.
    ours = [p for p in pids if p in by_pid]
    assert ours, (pids, sorted(by_pid))
    assert [by_pid[p] for p in ours] == top_values(by_pid.values(), len(ours)), \
        (ours, by_pid, screen)
    check_files_shown(screen, log)


def numbers(a, b, path="", out=None):
    """Every numeric leaf of b, paired with a's at the same place: [(path, a, b)]."""
    out = [] if out is None else out
    if isinstance(b, dict):
        for k, v in b.items():
            numbers(a.get(k) if isinstance(a, dict) else None, v, f"{path}.{k}", out)
    elif isinstance(b, (int, float)) and not isinstance(b, bool):
        out.append((path, a, b))
    return out


def add_into(total, row):
    """total += row, recursively, for every numeric leaf (histogram buckets included)."""
    for k, v in row.items():
        if isinstance(v, dict):
            add_into(total.setdefault(k, {}), v)
        elif isinstance(v, list) and v and isinstance(v[0], dict) and "count" in v[0]:
            acc = total.setdefault(k, [])
            for bucket in v:
                same = [b for b in acc if b.get("le", b.get("lo")) == bucket.get("le",
                                                                                 bucket.get("lo"))]
                if same:
                    same[0]["count"] += bucket["count"]
                else:
                    acc.append(dict(bucket))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            total[k] = total.get(k, 0) + v


ADDITIVE_SKIP = {"ino", "versions", "share", "pid", "p50", "p90", "p99", "min", "max",
                 "size_bytes", "resident_pages", "dirty_pages", "writeback_pages",
                 "evicted_pages", "recently_evicted_pages", "mean", "avg"}


@pytest.mark.parametrize("name", ["make", "tar_gzip"])
def test_totals_files_add_up_to_the_processes_rows(name, tmp_path):
    """Each file of totals.files equals the sum of the processes' rows of its path, for every
    numeric field (recursively: syscalls, page cache, block); its pids are those rows'."""
    cmd = WORKLOADS[name](tmp_path)
    out = tmp_path / "r.json"
    res = run([str(IOTRACE), "--json", "-o", str(out), "--", "sh", "-c", cmd], timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    report = json.loads(out.read_text())
    rows = {}
    for p in real_processes(report):
        for f in p["files"]:
            key = f["path"] if f["kind"] != "metadata" and f["path"] else (f["kind"], f["dev"],
                                                                          f["ino"])
            entry = rows.setdefault(key, {"pids": [], "sum": {}})
            entry["pids"].append(p["pid"])
            add_into(entry["sum"], f)
    files = report["totals"]["files"]
    assert len(files) == len(rows)
    checked = 0
    for f in files:
        key = f["path"] if f["kind"] != "metadata" and f["path"] else (f["kind"], f["dev"],
                                                                      f["ino"])
        want = rows[key]
        assert sorted(u["pid"] for u in f["processes"]) == sorted(set(want["pids"])), key
        assert abs(sum(u["share"] for u in f["processes"]) - 1) < 1e-6, f["processes"]
        mine = {}
        add_into(mine, {k: v for k, v in f.items() if k != "processes"})
        for path, theirs, ours in numbers(want["sum"], mine):
            if path.rsplit(".", 1)[-1] in ADDITIVE_SKIP:
                continue
            assert ours == theirs, (key, path, ours, theirs)
            checked += 1
    assert checked > 100
    moved = [sum(u["bytes"] for u in f["processes"]) for f in files]
    assert moved == sorted(moved, reverse=True), "totals.files: by bytes moved"
    story = report["totals"]["story"]
    procs = real_processes(report)
    for field in ("calls", "errors", "read_bytes", "write_bytes", "read_calls", "write_calls",
                  "sync_calls", "disk_read_bytes", "disk_write_bytes", "disk_requests"):
        assert story[field] == sum(p["story"][field] for p in procs), field
    reads = sum(v["transferred_bytes"] for k, v in report["totals"]["io"].items()
                if "read" in k or "write" not in k)
    assert story["read_bytes"] == reads


# ---- what the run worked on, what it loaded (issue 40) ----

def make_project(root, n=30):
    """A project of n C files that all include its header, a static library made with ar
    from them, and a program linked against it: `make -j2` runs ~3n + 5 processes."""
    (root / "include").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "include/proj.h").write_text(
        "#ifndef PROJ_H\n#define PROJ_H\n" +
        "".join(f"int mod{i}_entry(int x);\n#define PROJ_K{i} {i * 7 + 1}\n" for i in range(n)) +
        "#endif\n")
    for i in range(n):
        (root / f"src/mod{i}.c").write_text(
            '#include "proj.h"\n' +
            "".join(f"int mod{i}_f{k}(int x) {{ return x * {k} + PROJ_K{i}; }}\n"
                    for k in range(80)) +
            f"int mod{i}_entry(int x) {{ return mod{i}_f1(x) + mod{i}_f7(x); }}\n")
    (root / "src/main.c").write_text(
        '#include <stdio.h>\n#include "proj.h"\nint main(void) { int s = 0;\n' +
        "".join(f"  s += mod{i}_entry({i});\n" for i in range(n)) +
        '  printf("%d\\n", s); return 0; }\n')
    objs = " ".join(f"src/mod{i}.o" for i in range(n))
    (root / "Makefile").write_text(
        "CFLAGS = -O1 -Iinclude\n"
        "app: src/main.o libproj.a\n\t$(CC) -o $@ src/main.o -L. -lproj\n"
        f"libproj.a: {objs}\n\tar rcs $@ $^\n"
        "src/%.o: src/%.c include/proj.h\n\t$(CC) $(CFLAGS) -c -o $@ $<\n"
        "clean:\n\trm -f app libproj.a src/*.o\n")
    return root


LOADED_LINE = re.compile(r"^\+ ([\d,]+) (?:libraries and system files|library or system file) "
                         r"loaded by ([\d,]+) process(?:es)?: (\S+) read, ([\d,]+) faults")


def cell_value(cell):
    """Bytes a cell shows (user/report/cells.c cell_bytes), and how far off it may be."""
    m = re.fullmatch(r"([\d.]+)([KMGTP]?)", cell)
    scale = 1024 ** ("KMGTP".index(m.group(2)) + 1) if m.group(2) else 1
    return float(m.group(1)) * scale, scale * (0.05 if "." in m.group(1) else 0.5)


def screen_bytes(screen):
    """(the bytes of the rows, the rest's line and the loaded line less the read/write line's,
    and how far off their cells may be): the first screen's files table summed as printed."""
    lines = screen.splitlines()
    fstart = next(i for i, l in enumerate(lines) if l.startswith("files: "))
    header = lines[fstart + 2]
    width = header.index("calls") - 2
    cols = header[width:].split()
    total, slack = 0.0, 0.0
    for line in lines[fstart + 3:]:
        if not line.strip() or line.startswith("processes: "):
            break
        if line.startswith("+ "):
            m = LOADED_LINE.match(line)
            cells = [m.group(3)] if m else re.findall(r"(?:reads|writes) ([\d.]+[KMGTP]?)", line)
        else:
            values = line[width:].split()
            cells = [values[i] for i, c in enumerate(cols) if c == "bytes"]
        for c in cells:
            v, e = cell_value(c)
            total, slack = total + v, slack + e
    rw = re.search(r"^read/write  read (\S+) in .* wrote (\S+) in", screen, re.M)
    for c in rw.groups():  # the run's total, as rounded as the rest
        v, e = cell_value(c)
        total, slack = total - v, slack + e
    return total, slack


def test_build_names_its_own_files(tmp_path):
    """make -j2 of a project (30 sources, a header all include, an ar library, a link): the
    first screen names its own files, relative to where make ran, at most one row of the
    system's; the libraries and start-up files every process loads fold into one line; the
    rows, the rest and that line add up to the run's bytes. By JSON, each file is loaded or
    worked on as strace -ff -yy of the same run says, and the bytes add up exactly."""
    proj = make_project(tmp_path / "proj")
    res = run([str(IOTRACE), "-s", "-o", str(tmp_path / "screen"), "--", "make", "-s", "-j2"],
              cwd=proj, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    screen = (tmp_path / "screen").read_text()
    assert len(screen.splitlines()) <= SCREEN_LINES and \
        max(len(l) for l in screen.splitlines()) <= COLUMNS, screen
    files, _ = screen_tables(screen)
    # Relative names (ar's temporary archive among them), not pipes (pipe:[…]).
    own = [f for f in files if not f.startswith("/") and ":" not in f and
           (proj / re.sub(r" \(deleted\)$", "", f)).parent.is_dir()]
    system = [f for f in files if any(f.startswith(d) for d in SYSTEM)]
    assert len(own) >= 6 and len(system) <= 1, screen
    loaded = [LOADED_LINE.match(l) for l in screen.splitlines() if LOADED_LINE.match(l)]
    assert len(loaded) == 1 and int(loaded[0].group(2).replace(",", "")) > 60, screen
    missing, slack = screen_bytes(screen)
    assert abs(missing) <= slack, (missing, slack, screen)

    run(["make", "-s", "clean"], cwd=proj, check=True)
    report, log = traced("make -s -j2", tmp_path, ["--json"], cwd=proj)
    report = json.loads(report)
    check_uses_against_strace(report, log)


def check_uses_against_strace(report, log):
    """totals.files: each file's use and bytes are strace's (strace's own process and logs
    aside); what was loaded and what was worked on add up to the run's bytes, strace's."""
    uses = strace_uses(log)
    tracer = {p["pid"] for p in real_processes(report) if p["comm"] == "strace"}
    sums = {"data": 0, "code": 0, "startup": 0}
    for f in report["totals"]["files"]:
        path = normal(f["path"] or "")
        mine = sum(u["bytes"] for u in f["processes"] if u["pid"] not in tracer)
        if path.startswith(log) or f["kind"] == "metadata":
            continue
        sums[f["use"]] += mine
        if path in uses and {u["pid"] for u in f["processes"]} - tracer:
            assert (f["use"], mine) == uses[path][:2], (path, f["use"], mine, uses[path])
        else:
            assert not mine, (path, f)
    theirs = {u: sum(b for f, (use, b, _) in uses.items() if use == u and not f.startswith(log))
              for u in sums}
    assert sums == theirs and sums["code"] and sums["startup"], (sums, theirs)
    story = report["totals"]["story"]
    logs = sum(b for f, (_, b, _) in uses.items() if f.startswith(log))
    strace_own = sum(p["story"]["read_bytes"] + p["story"]["write_bytes"]
                     for p in real_processes(report) if p["pid"] in tracer)
    assert sum(sums.values()) + logs == story["read_bytes"] + story["write_bytes"] - strace_own


def one_file_compile(src):
    (src / "x.c").write_text('#include <stdio.h>\nint main(void) { puts("x"); return 0; }\n')
    return "cc -o x x.c", ["x.c", "x"]


def python_script(src):
    (src / "in.txt").write_text("a line of text\n" * 2000)
    return ("/usr/bin/python3 -c \"import json; d = open('in.txt').read(); "
            "open('out.json', 'w').write(json.dumps(d.upper().split()))\"", ["in.txt", "out.json"])


@pytest.mark.parametrize("name", ["cc", "python"])
def test_own_files_come_first(name, tmp_path):
    """cc -o x x.c, and a python3 -c script: the first screen shows the command's own files
    first (by name, relative to its working directory), what the system holds after them,
    every row as strace -ff -yy of the same run has it."""
    src = tmp_path / "src"
    src.mkdir()
    cmd, own = {"cc": one_file_compile, "python": python_script}[name](src)
    text, log = traced(cmd, tmp_path, cwd=src)
    check_files_shown(first_screen(text), log, src)
    # Without strace, whose logs would take rows of their own.
    res = run([str(IOTRACE), "-s", "-o", str(tmp_path / "screen"), "--", "sh", "-c", cmd],
              cwd=src, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    screen = (tmp_path / "screen").read_text()
    rows, _ = screen_tables(screen)
    assert set(own) <= set(rows), screen
    before = rows[:max(rows.index(f) for f in own)]
    assert not [r for r in before if any(r.startswith(d) for d in SYSTEM)], screen


def sqlite_db(tmp):
    (tmp / "db.sql").write_text(
        "create table t(id integer primary key, v text);\n"
        "with recursive c(x) as (select 1 union all select x + 1 from c where x < 20000)\n"
        "  insert into t(v) select hex(randomblob(40)) from c;\n"
        "create index tv on t(v);\nselect count(*), sum(length(v)) from t;\n")
    return f"rm -f {tmp}/t.db; sqlite3 {tmp}/t.db < {tmp}/db.sql"


@pytest.mark.parametrize("name", ["tar_gzip", "pipeline", "sqlite3"])
def test_data_files_are_never_folded(name, tmp_path):
    """tar | gzip, a pipeline, sqlite3, run where their data is: the first screen lists what
    strace -ff -yy shows them moving, by bytes, as before the fold; no file strace shows read
    or written as data is among what was loaded, and each loaded one is loaded by strace."""
    cmd = {"tar_gzip": tar_gzip, "pipeline": pipeline, "sqlite3": sqlite_db}[name](tmp_path)
    text, log = traced(cmd, tmp_path, cwd=tmp_path)
    screen = first_screen(text)
    shown = check_files_shown(screen, log, tmp_path)
    uses = strace_uses(log)
    top = sorted((b, f) for f, (u, b, _) in uses.items() if u == "data" and b and
                 not f.startswith(log) and not any(under(f, d) for d in SYSTEM))[::-1][:3]
    assert [cell_path(c, tmp_path) for c in shown[:len(top)]] == [f for _, f in top] or \
        [uses[cell_path(c, tmp_path)][1] for c in shown[:len(top)]] == [b for b, _ in top], \
        (top, screen)
    report, log = traced(cmd, tmp_path, ["--json"], cwd=tmp_path)
    check_uses_against_strace(json.loads(report), log)


@pytest.mark.parametrize("cwd,cmd,use", [
    ("/etc", ["cat", "/etc/ld.so.cache"], "data"),
    ("/etc", ["cat", "./ld.so.cache"], "data"),
    ("/etc", ["cat", "ld.so.cache/"], "data"),
    ("/", ["cat", "etc/ld.so.cache"], "data"),
    ("/usr", ["cat", "/etc/hostname", "/etc/"], "data"),
    ("/etc", ["cat", "hostname"], "startup"),
    ("/etc", ["cat", "/etc/ld.so.cache.not", "--", "-/etc/ld.so.cache"], "startup"),
], ids=["absolute", "dot-slash", "trailing-slash", "from-root", "directory-above", "not-named",
        "near-names"])
def test_a_start_up_file_named_on_the_command_line_is_data(tmp_path, cwd, cmd, use):
    """The loader's cache is a start-up file, read by every dynamically linked program's
    loader, unless a word of the process's command line names it or a directory above it,
    a relative word taken from the command's working directory (docs/run-mode.md)."""
    report, res = iotrace_json(cmd, tmp_path, cwd=cwd)
    uses = {f["path"]: f["use"] for f in report["totals"]["files"]}
    assert uses.get("/etc/ld.so.cache") == use, (uses, res.stderr)


def test_summary_is_the_first_screen(tmp_path):
    cmd = tar_gzip(tmp_path)
    res = run([str(IOTRACE), "-s", "-o", str(tmp_path / "s"), "--", "sh", "-c", cmd],
              timeout=600)
    assert res.returncode == 0, res.stderr
    out = (tmp_path / "s").read_text()
    run([str(IOTRACE), "-o", str(tmp_path / "full"), "--", "sh", "-c", cmd], timeout=600)
    full = (tmp_path / "full").read_text()
    assert out and "\n== " not in out and "lost:" not in out, out
    assert len(out.splitlines()) <= SCREEN_LINES
    def labels(text):
        return [l.split()[0] for l in text.splitlines() if re.match(r"(iotrace|command|syscalls|read/write|page cache|disk|io_uring|"
                                            r"files|processes)[: ]", l)]
    assert labels(out) == labels(first_screen(full))
    assert len(out.splitlines()) == len(first_screen(full).splitlines())


def test_many_processes_fit(tmp_path):
    """30 processes: still one screen, the rest folded into a line, the details 100 columns."""
    run([str(IOTRACE), "-o", str(tmp_path / "r"), "--", "sh", "-c",
         "for i in $(seq 30); do cat /etc/hostname > /dev/null; done"], timeout=600)
    text = (tmp_path / "r").read_text()
    screen = first_screen(text)
    assert len(screen.splitlines()) <= SCREEN_LINES, screen
    assert re.search(r"^\+ 2\d more processes: cat ×2\d", screen, re.M), screen
    assert not [l for l in text.splitlines() if len(l) > COLUMNS]


def sites(report):
    return [s["where"] for p in real_processes(report) for s in p.get("stack_sites") or []]


def test_c_call_sites_skip_the_c_library(tmp_path):
    src = tmp_path / "r.c"
    src.write_text("#include <fcntl.h>\n#include <unistd.h>\nstatic char b[4096];\n"
                   "__attribute__((noinline)) long reader(const char *p) { int fd = "
                   "open(p, O_RDONLY); long t = 0, n; while ((n = read(fd, b, sizeof b)) > 0)"
                   " t += n; close(fd); return t; }\n"
                   "int main(int c, char **v) { return reader(v[1]) > 0 ? 0 : 1; }\n")
    data = tmp_path / "in"
    data.write_bytes(os.urandom(1 << 21))
    for kind in ("dynamic", "static"):
        exe = tmp_path / kind
        res = subprocess.run(["cc", "-O1", "-fno-omit-frame-pointer", *(["-static"] if kind ==
                              "static" else []), "-o", str(exe), str(src)], capture_output=True)
        if res.returncode:
            continue  # no static C library here
        folded = tmp_path / f"{kind}.folded"
        out = tmp_path / f"{kind}.json"
        res = run([str(IOTRACE), "--json", "-o", str(out), "--stacks", str(folded), "--",
                   str(exe), str(data)])
        assert res.returncode == 0, res.stderr
        top = sites(json.loads(out.read_text()))
        assert top and top[0].startswith("reader ← main"), (kind, top)
        assert not any(re.match(r"(__libc_read|__GI___libc_read|read)\b", s) for s in top)
        assert re.search(r";(__libc_read|__GI___libc_read|read|__read)", folded.read_text())


@pytest.mark.skipif(not os.access(GO, os.X_OK), reason=f"no Go toolchain at {GO}")
def test_go_call_sites_skip_the_runtime_wrappers(tmp_path):
    (tmp_path / "go.mod").write_text("module gor\ngo 1.21\n")
    (tmp_path / "main.go").write_text(
        'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\n'
        "func readAll(path string) int {\n\tf, _ := os.Open(path)\n\tdefer f.Close()\n"
        "\tbuf := make([]byte, 4096)\n\ttotal := 0\n\tfor {\n\t\tn, err := f.Read(buf)\n"
        "\t\ttotal += n\n\t\tif err != nil {\n\t\t\tbreak\n\t\t}\n\t}\n\treturn total\n}\n\n"
        "func main() {\n\tfmt.Println(readAll(os.Args[1]))\n}\n")
    env = dict(os.environ, HOME=str(tmp_path), GOPATH=str(tmp_path / "gopath"),
               GOCACHE=str(tmp_path / "gocache"), GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    res = subprocess.run([GO, "build", "-o", "gor", "."], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    if res.returncode:
        pytest.skip(f"go build failed: {res.stderr[-300:]}")
    data = tmp_path / "in"
    data.write_bytes(os.urandom(1 << 20))
    folded, out = tmp_path / "go.folded", tmp_path / "go.json"
    res = run([str(IOTRACE), "--json", "-o", str(out), "--stacks", str(folded), "--",
               str(tmp_path / "gor"), str(data)])
    assert res.returncode == 0, res.stderr
    top = sites(json.loads(out.read_text()))
    assert top and top[0].startswith("main.readAll ← main.main"), top
    wrappers = r"(internal/runtime/syscall|runtime/internal/syscall|syscall\.)"
    assert not any(re.match(wrappers, s) for s in top), top
    assert re.search(r";" + wrappers, folded.read_text())
