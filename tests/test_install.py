"""Deployable like a system tool (issue 21): make install/uninstall, iotrace(8), bash
completion, the Debian package and the systemd unit.

References: the list of files to install is written here (docs/install.md), not read from
the Makefile; option lists come from each mode's --help; counts from strace -f -c; the
package's dependencies from the binary's DT_NEEDED entries and dpkg -S; the checkers are
`man --warnings`, lintian and systemd-analyze.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from helpers import IOTRACE, ROOT, mkinput, run, strace_counts, wl

MODES = ("run", "snoop", "compare", "serve", "info", "top", "containers")
# argp adds these to every mode; the man page lists them once, under COMMON OPTIONS.
COMMON = {"-?", "--help", "--usage", "-V", "--version"}
MAN_SECTION = {"run": "RUN MODE OPTIONS", "snoop": "SNOOP", "compare": "COMPARE", "info": "INFO",
               "serve": "SERVE", "top": "TOP", "containers": "CONTAINERS"}
# "  -o, --output=FILE   ..." or "      --json   ...": options start at column 2 or 6;
# wrapped descriptions start further right.
HELP_OPTION = re.compile(r"^  (?:(-[^-\s])(?:,\s|\s|$)|    )(?:(--[a-z][a-z-]*))?")


def help_options(mode):
    """The options `iotrace [MODE] --help` lists."""
    res = run([IOTRACE, *([] if mode == "run" else [mode]), "--help"])
    assert res.returncode == 0, res.stderr
    found = set()
    for line in res.stdout.decode().splitlines():
        m = HELP_OPTION.match(line)
        if m:
            found |= {o for o in m.groups() if o}
    assert {"--help", "--version"} <= found and len(found) > len(COMMON), found
    return found


def installed_files(prefix):
    """What `make install` must write, relative to DESTDIR (docs/install.md)."""
    docs = run(["git", "ls-files", "README.md", "docs/*.md", "docs/*.png",
                "docs/grafana-iotrace.json"], cwd=ROOT).stdout.decode().split()
    docs = [d for d in docs if d.count("/") <= 1]  # not docs/experiments/
    assert "README.md" in docs and "docs/prometheus.md" in docs
    p = prefix.lstrip("/")
    return {f"{p}/sbin/iotrace", f"{p}/share/man/man8/iotrace.8",
            f"{p}/share/bash-completion/completions/iotrace",
            f"{p}/lib/systemd/system/iotrace-serve.service"} | \
        {f"{p}/share/doc/iotrace/{d}" for d in docs}


def make(*args, **kw):
    res = run(["make", "-C", ROOT, *args], timeout=600, **kw)
    assert res.returncode == 0, (res.stdout + res.stderr).decode()[-3000:]
    return res


def files_under(root):
    return {str(p.relative_to(root)) for p in Path(root).rglob("*") if not p.is_dir()}


@pytest.fixture
def outside():
    """A directory outside the source tree (pytest's may be inside it, as in `make soak`)."""
    with tempfile.TemporaryDirectory(prefix="iotrace-install-", dir="/tmp") as d:
        yield Path(d)


def traced_counts(binary, cwd, tmp, hide_source=True, env=None):
    """Trace a copy of tr2u on a 5,001-byte input with binary, from cwd; with hide_source an
    empty tmpfs covers the source tree, so nothing can be read from it. Returns the
    {syscall: calls} of the report and iotrace's stderr."""
    tr2u = tmp / "tr2u"
    shutil.copy(wl("tr2u"), tr2u)
    data = mkinput(tmp / "in", 5001)
    out = tmp / "run.json"
    script = f'exec "$@" < {data} > {tmp / "out"}'
    argv = [str(binary), "-v", "--json", "-o", str(out), "--", str(tr2u), "a", "b"]
    if hide_source:
        script = f"mount -t tmpfs none {ROOT} && test -z \"$(ls -A {ROOT})\" && " + script
        argv = ["unshare", "-m", "sh", "-c", script, "sh", *argv]
    else:
        argv = ["sh", "-c", script, "sh", *argv]
    res = run(argv, cwd=cwd, env=env)
    assert res.returncode == 0, res.stderr
    report = json.loads(out.read_text())
    (proc,) = [p for p in report["processes"] if p["pid"] is not None]
    table, sres = strace_counts([str(tr2u), "a", "b"], tmp, data, stdout=subprocess.DEVNULL)
    assert sres.returncode == 0
    got = {k: v["calls"] for k, v in proc["syscalls"].items()}
    for name in ("read", "write", "execve"):
        assert got[name] == table[name][0], (name, got[name], table[name])
    assert got["write"] == 5001
    return got, res.stderr.decode()


# ---- make install / uninstall ----

def test_install_uninstall_with_destdir(outside):
    dest = outside / "dest"
    res = make("install", f"DESTDIR={dest}", "PREFIX=/usr")
    assert files_under(dest) == installed_files("/usr")
    # One short line per file, as every other step of the build prints.
    lines = [l for l in res.stdout.decode().splitlines() if "INSTALL" in l]
    assert len(lines) == len(installed_files("/usr")), lines
    binary = dest / "usr/sbin/iotrace"
    assert binary.stat().st_mode & 0o777 == 0o755
    for f in installed_files("/usr") - {"usr/sbin/iotrace"}:
        assert (dest / f).stat().st_mode & 0o777 == 0o644, f
    assert binary.read_bytes() == IOTRACE.read_bytes()
    assert (dest / "usr/share/bash-completion/completions/iotrace").read_text() == \
        (ROOT / "completion/iotrace.bash").read_text()
    assert (dest / "usr/share/doc/iotrace/docs/prometheus.md").read_text() == \
        (ROOT / "docs/prometheus.md").read_text()
    unit = (dest / "usr/lib/systemd/system/iotrace-serve.service").read_text()
    assert re.search(r"^ExecStart=/usr/sbin/iotrace serve ", unit, re.M), unit
    assert "@" not in unit

    # The installed binary, from another directory, with the source tree hidden.
    work = outside / "elsewhere"
    work.mkdir()
    traced_counts(binary, work, work)

    make("uninstall", f"DESTDIR={dest}", "PREFIX=/usr")
    assert files_under(dest) == set()
    assert not (dest / "usr/share/doc/iotrace").exists()


def test_install_default_prefix_is_usr_local(outside):
    make("install", f"DESTDIR={outside}")
    assert files_under(outside) == installed_files("/usr/local")
    unit = (outside / "usr/local/lib/systemd/system/iotrace-serve.service").read_text()
    assert "ExecStart=/usr/local/sbin/iotrace serve " in unit
    make("uninstall", f"DESTDIR={outside}")
    assert files_under(outside) == set()


# ---- the man page ----

def rendered_man(page):
    """`man -l` output at 80 columns; fails on any warning."""
    env = dict(os.environ, MANWIDTH="80")
    res = run(["man", "--warnings", "-l", str(page)], env=env)
    assert res.returncode == 0, res.stderr
    assert res.stderr == b"", res.stderr.decode()
    text = re.sub(r".\x08", "", res.stdout.decode())  # overstrike bold and underline
    # Undo line breaks inside words: hyphenation (U+2010) and breaks after a hyphen.
    text = re.sub(r"\u2010\n\s*", "", text)
    return re.sub(r"(?<=[a-z]-)\n\s+(?=[a-z])", "", text)


def man_sections(text):
    """{SECTION HEADING: body}: headings start at column 0."""
    sections, name = {}, None
    for line in text.splitlines()[1:-1]:
        if line and not line[0].isspace():
            name = line.strip()
            sections[name] = ""
        elif name:
            sections[name] += line + "\n"
    return sections


def documented_options(body):
    """Options on the term lines of a section: "       -o, --output=FILE" followed by its
    description, indented further."""
    found = set()
    lines = body.splitlines() + [""]
    for line, after in zip(lines, lines[1:]):
        if re.match(r"^ {7}-", line) and re.match(r"^ {8,}\S", after):
            found |= set(re.findall(r"(?<![\w-])(--?[?a-zA-Z][a-z-]*)", line))
    return found


def test_man_page_renders_without_warnings_and_documents_every_option():
    page = ROOT / ".output" / "iotrace.8"
    make(".output/iotrace.8")
    assert "iotrace.8" not in run(["git", "ls-files"], cwd=ROOT).stdout.decode().split(), \
        "the page is built, not committed"
    sections = man_sections(rendered_man(page))
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "THE REPORT", "PRIVILEGES",
                    "EXIT STATUS", "FILES", "EXAMPLES", "ENVIRONMENT"):
        assert sections.get(heading, "").strip(), heading
    for mode in MODES:
        want = help_options(mode) - COMMON
        have = documented_options(sections[MAN_SECTION[mode]])
        assert want == have, (mode, "undocumented:", want - have, "stale:", have - want)
        if mode != "run":
            assert f"iotrace {mode}" in sections["SYNOPSIS"]
    assert documented_options(sections["COMMON OPTIONS"]) == COMMON
    # Every IOTRACE_* variable the code reads is documented.
    variables = set(re.findall(r'getenv\("(IOTRACE_\w+)"\)', "".join(
        p.read_text() for p in (ROOT / "user").glob("*/*.c"))))
    variables |= set(re.findall(r'#define \w+_ENV "(IOTRACE_\w+)"', "".join(
        p.read_text() for p in (ROOT / "user").glob("*/*.h"))))
    assert variables and all(v in sections["ENVIRONMENT"] for v in variables), variables


# ---- bash completion ----

def complete(*words, cwd=None):
    """COMPREPLY of the completion function for the words (the last one being completed)."""
    script = (f"source {ROOT / 'completion/iotrace.bash'}\n"
              f"COMP_WORDS=({' '.join(_shq(w) for w in words)})\n"
              f"COMP_CWORD={len(words) - 1}\n"
              "_iotrace\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    res = run(["bash", "--norc", "--noprofile", "-c", script], cwd=cwd)
    assert res.returncode == 0 and not res.stderr, res.stderr
    return [l for l in res.stdout.decode().splitlines() if l]


def _shq(w):
    return "'" + w.replace("'", "'\\''") + "'"


def test_completion_lists_each_modes_options():
    for mode in MODES:
        words = ["iotrace"] + ([] if mode == "run" else [mode])
        assert set(complete(*words, "-")) == help_options(mode), mode
    assert {"snoop", "compare", "serve"} <= set(complete("iotrace", ""))
    assert complete("iotrace", "se")[0] == "serve"
    assert set(complete("iotrace", "serve", "--m")) == {"--max-labels"}


def test_completion_values(outside, tmp_path):
    users = {line.split(":")[0] for line in Path("/etc/passwd").read_text().splitlines()
             if line and not line.startswith("#")}
    assert set(complete("iotrace", "serve", "--user", "")) >= users
    assert complete("iotrace", "serve", "--user", "=", "nob") == ["nobody"]
    assert set(complete("iotrace", "snoop", "-d", "")) == set(os.listdir("/sys/block"))
    assert str(os.getpid()) in complete("iotrace", "-p", str(os.getpid()))
    (outside / "report.txt").write_text("")
    assert complete("iotrace", "-o", "rep", cwd=outside) == ["report.txt"]
    # Run mode: a command after the options or --, then the command's own arguments.
    assert "ls" in complete("iotrace", "-s", "l")
    assert "ls" in complete("iotrace", "--", "l")
    assert complete("iotrace", "--", "ls", "-") == []
    assert complete("iotrace", "compare", "--", "") == []
    # cgroup v2 directories, below the mount point or as full paths.
    root = next(Path(l.split()[1]) for l in open("/proc/self/mounts") if l.split()[2] == "cgroup2")
    cg = root / f"iotrace-compl-{os.getpid()}"
    (cg / "sub").mkdir(parents=True)
    try:
        assert complete("iotrace", "serve", "-c", cg.name[:-2]) == [cg.name + "/"]
        assert complete("iotrace", "serve", "-c", "/" + cg.name) == ["/" + cg.name + "/"]
        assert complete("iotrace", "snoop", "-c", f"{cg}/s") == [f"{cg}/sub/"]
    finally:
        (cg / "sub").rmdir()
        cg.rmdir()


# ---- the systemd unit ----

def test_systemd_unit_verifies(outside):
    if not shutil.which("systemd-analyze"):
        pytest.skip("no systemd-analyze")
    # A real prefix (no DESTDIR), so that ExecStart and the man page exist where the unit
    # says; systemd-analyze checks both.
    prefix = outside / "usr"
    make("install", f"PREFIX={prefix}")
    unit = prefix / "lib/systemd/system/iotrace-serve.service"
    env = dict(os.environ, MANPATH=str(prefix / "share/man"))
    res = run(["systemd-analyze", "verify", str(unit)], env=env)
    assert res.returncode == 0 and res.stderr == b"", res.stderr.decode()
    text = unit.read_text()
    caps = re.search(r"^CapabilityBoundingSet=(.*)$", text, re.M).group(1).split()
    assert sorted(caps) == ["CAP_BPF", "CAP_PERFMON", "CAP_SETGID", "CAP_SETUID"]
    for directive in ("NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes",
                      "PrivateTmp=yes", "PrivateDevices=yes", "ProtectKernelModules=yes",
                      "RestrictAddressFamilies=", "MemoryDenyWriteExecute=yes"):
        assert re.search(rf"^{directive}", text, re.M), directive
    # The check can fail: a misspelt directive is reported.
    bad = outside / "iotrace-serve.service"
    bad.write_text(text.replace("ProtectHome=yes", "ProtectHomes=yes"))
    res = run(["systemd-analyze", "verify", str(bad)], env=env)
    assert b"ProtectHomes" in res.stderr
    make("uninstall", f"PREFIX={prefix}")
    assert files_under(prefix) == set()


# ---- the Debian package ----

def needed_packages(binary):
    """Debian packages of the shared libraries the binary names (DT_NEEDED)."""
    dyn = run(["readelf", "-d", str(binary)]).stdout.decode()
    libs = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dyn)
    cache = run(["ldconfig", "-p"]).stdout.decode()
    pkgs = set()
    for lib in libs:
        path = re.search(rf"^\s+{re.escape(lib)} \(libc6,x86-64\) => (\S+)", cache, re.M).group(1)
        owner = run(["dpkg", "-S", os.path.realpath(path)])
        if owner.returncode:
            owner = run(["dpkg", "-S", path])
        pkgs.add(owner.stdout.decode().split(":")[0])
    return libs, pkgs


def test_deb_builds_passes_lintian_and_runs(outside):
    version = run(["dpkg-parsechangelog", "-S", "Version"], cwd=ROOT).stdout.decode().strip()
    status = run(["git", "status", "--porcelain"], cwd=ROOT).stdout
    parent = set(os.listdir(ROOT.parent))
    make("deb")
    # Built inside .output (ignored): the tree and the directory above it are untouched.
    assert run(["git", "status", "--porcelain"], cwd=ROOT).stdout == status
    assert not {n for n in set(os.listdir(ROOT.parent)) - parent if n.startswith("iotrace")}
    deb = ROOT / ".output" / "deb" / f"iotrace_{version}_amd64.deb"
    assert deb.exists()

    res = run(["lintian", "--no-tag-display-limit", str(deb)])
    tags = [l for l in res.stdout.decode().splitlines() if re.match(r"^[EWIPXO]: ", l)]
    assert not [t for t in tags if t.startswith("E: ")], tags

    fields = {f: run(["dpkg-deb", "-f", str(deb), f]).stdout.decode().strip()
              for f in ("Package", "Version", "Depends")}
    assert fields["Version"] == version
    contents = run(["dpkg-deb", "-c", str(deb)]).stdout.decode()
    for path in ("./usr/sbin/iotrace", "./usr/share/man/man8/iotrace.8.gz",
                 "./usr/share/bash-completion/completions/iotrace",
                 "./lib/systemd/system/iotrace-serve.service",
                 "./usr/share/doc/iotrace/copyright"):
        assert re.search(rf" {re.escape(path)}$", contents, re.M), path

    x = outside / "x"
    assert run(["dpkg-deb", "-x", str(deb), str(x)]).returncode == 0
    binary = x / "usr/sbin/iotrace"
    # Dependencies come from the libraries the binary links, and the one library it opens
    # itself (`serve`'s libmicrohttpd, user/cmd/mhd.c) by the package that ships its soname.
    control = (ROOT / "debian/control").read_text()
    assert re.search(r"^Depends: \$\{shlibs:Depends\}, \$\{misc:Depends\}, libmicrohttpd12$",
                     control, re.M)
    libs, pkgs = needed_packages(binary)
    assert "libbpf.so.1" in libs and "libseccomp.so.2" in libs
    assert "libmicrohttpd.so.12" not in libs
    soname = re.search(r'#define MHD_SONAME "([^"]+)"',
                       (ROOT / "user/cmd/mhd.c").read_text()).group(1)
    assert any(p.endswith("/" + soname) for p in
               run(["dpkg", "-L", "libmicrohttpd12"]).stdout.decode().splitlines())
    depends = {d.split()[0] for d in fields["Depends"].split(", ")}
    assert pkgs | {"libmicrohttpd12"} <= depends, (pkgs, depends)

    res = run([binary, "--version"])
    assert res.returncode == 0 and res.stdout.decode() == f"iotrace {version}\n"
    # The unit in the package is the template for /usr/sbin.
    unit = (ROOT / "systemd/iotrace-serve.service.in").read_text().replace("@SBINDIR@",
                                                                           "/usr/sbin")
    assert (x / "lib/systemd/system/iotrace-serve.service").read_text() == unit

    # A short trace, with the minimal BTF built into the package (this kernel built it) and
    # with the running kernel's BTF, as on any other kernel.
    work = outside / "run"
    work.mkdir()
    counts, err = traced_counts(binary, work, work)
    assert "minimal BTF cut from this kernel" in err, err
    full, err = traced_counts(binary, work, work, env=dict(os.environ, IOTRACE_FULL_BTF="1"))
    assert "CO-RE against /sys/kernel/btf/vmlinux" in err, err
    assert full == counts
