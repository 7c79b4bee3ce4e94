"""The code's own limits (issue 14): no C function over 80 lines, no user/*/*.c over 600; and
its shape (issue 29): user/'s folders are stages, and an include goes only to a stage below."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(list((ROOT / "user").glob("*/*.c")) + list((ROOT / "bpf").glob("*.c")) +
                 list((ROOT / "workloads").glob("*.c")) + list((ROOT / "bench").glob("*.c")))
MAX_FUNCTION = 80
MAX_USER_FILE = 600
USER = ROOT / "user"
# Each stage of user/ and the stages below it, the only ones it may include (docs/design.md):
# renderers never reach the collector or the kernel side, and nothing below calls up.
STAGES_BELOW = {
    "cmd": {"collect", "report", "kernel", "model", "util"},
    "collect": {"report", "kernel", "model", "util"},
    "report": {"model", "util"},
    "kernel": {"model", "util"},
    "model": {"util"},
    "util": set(),
}


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


def user_includes(path, user):
    """The files of user that path includes: a quoted name, found beside path or below user
    (-Iuser); other headers (bpf/, the skeleton, the system's) are left out."""
    found = []
    for name in re.findall(r'^\s*#\s*include\s*"([^"]+)"', path.read_text(), re.M):
        for base in (path.parent, user):
            if (base / name).is_file():
                found.append((base / name).resolve())
                break
    return found


def includes_between_stages(user):
    """(including file, included file, whether the stage order allows it) for every include
    from one folder of user into another."""
    out = []
    for path in sorted(user.glob("*/*.[ch]")):
        for target in user_includes(path, user):
            stage, below = path.parent.name, target.parent.name
            if target.parent.parent == user.resolve() and below != stage:
                out.append((path.relative_to(user), target.relative_to(user.resolve()),
                            below in STAGES_BELOW.get(stage, set())))
    return out


def write_tree(root, files):
    """files ({path: text}) written under root, their folders made."""
    for name, text in files.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(text)


def test_the_include_check_sees_a_wrong_way(tmp_path):
    write_tree(tmp_path, {"model/a.h": "", "util/b.h": "", "cmd/c.h": "",
                          "model/a.c": '#include "a.h"\n#include "util/b.h"\n#include "cmd/c.h"\n',
                          "util/b.c": '#include "b.h"\n#include "iotrace.h"\n'})
    found = {(str(a), str(b), ok) for a, b, ok in includes_between_stages(tmp_path)}
    assert found == {("model/a.c", "util/b.h", True), ("model/a.c", "cmd/c.h", False)}


def test_user_files_stand_in_stages():
    assert {p.name for p in USER.iterdir() if p.is_dir()} == set(STAGES_BELOW)
    loose = [str(p.relative_to(ROOT)) for p in USER.rglob("*")
             if p.is_file() and (p.parent.parent != USER or p.suffix not in (".c", ".h"))]
    assert not loose, loose


def test_includes_go_down_the_stages():
    found = includes_between_stages(USER)
    wrong = [f"{a} includes {b}" for a, b, ok in found if not ok]
    assert len(found) > 50, found  # the check reads the includes at all
    assert not wrong, wrong


# ---- containers (issue 38): one growable array (util/vec.c), one hash table (uthash) ----

CONTAINER_HELPERS = {"util/vec.c"}
REALLOC = re.compile(r"\brealloc\s*\(")


def hand_grown(path):
    """The lines of path that grow an array themselves (a realloc outside the helpers)."""
    return [i + 1 for i, line in enumerate(path.read_text().splitlines()) if REALLOC.search(line)]


def test_the_realloc_check_sees_one(tmp_path):
    f = tmp_path / "x.c"
    f.write_text("p = realloc(p, n);\n/* (realloc) */\nq = vec_append(&q, n, 8);\n")
    assert hand_grown(f) == [1]


def test_no_realloc_outside_the_container_helpers():
    found = {str(p.relative_to(USER)): lines for p in sorted(USER.glob("*/*.c"))
             if str(p.relative_to(USER)) not in CONTAINER_HELPERS and (lines := hand_grown(p))}
    assert not found, found


PROBE = re.compile(r"&\s*\(\s*[\w>.-]*cap\s*-\s*1\s*\)")


def test_no_hand_made_hash_table():
    """An open-addressing probe (an index masked by a power-of-two capacity) is uthash's job."""
    found = [f"{p.relative_to(ROOT)}:{i + 1}" for p in sorted(USER.glob("*/*.[ch]"))
             for i, line in enumerate(p.read_text().splitlines()) if PROBE.search(line)]
    assert PROBE.search("h = (h + 1) & (s->cap - 1);")
    assert not found, found


def test_uthash_only_through_its_configuration():
    """util/hash.h makes a failed allocation an error the caller sees, never uthash's exit()."""
    direct = [str(p.relative_to(ROOT)) for p in USER.glob("*/*.[ch]")
              if p.name != "hash.h" and re.search(r'#\s*include\s*[<"]uthash\.h', p.read_text())]
    assert not direct, direct


# ---- commands drive, they do not read (issue 38): cmd/ starts the engine and chooses the
# renderer; what a run found is the model's and the collectors' to say, through functions ----

# What a command fills in to ask for something, not a record of what was found: its parsed
# command line, top's view choices.
CONFIG_STRUCTS = {"options", "top_view_opts"}
DECLARED = re.compile(r"\bstruct\s+(\w+)\s*\**\s*(?:const\s+)?(\w+)\s*[;,)=\[]")


def record_structs(user):
    """Every struct a header of model/ or collect/ defines, but the configurations."""
    found = set()
    for stage in ("model", "collect"):
        for header in (user / stage).glob("*.h"):
            found |= set(re.findall(r"^struct (\w+)\s*\{", header.read_text(), re.M))
    return found - CONFIG_STRUCTS


def code_only(text):
    """text without comments, strings and preprocessor lines (each kept as its newlines)."""
    blank = lambda m: "\n" * m.group(0).count("\n")
    text = re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", blank, text,
                  flags=re.S)
    return re.sub(r"^[ \t]*#[^\n]*", "", text, flags=re.M)


def record_fields_read(path, records):
    """The places of path where a name declared there as one of the records (a variable, a
    parameter, a member) is followed by . or ->: one name, one type, in a file."""
    text = code_only(path.read_text())
    names = {m.group(2) for m in DECLARED.finditer(text) if m.group(1) in records}
    if not names:
        return []
    use = re.compile(r"\b(" + "|".join(sorted(names)) + r")\s*(?:\.|->)\s*\w+")
    return [f"{path.name}:{i + 1}: {m.group(0)}" for i, line in enumerate(text.splitlines())
            for m in use.finditer(line)]


def test_the_field_check_sees_a_read(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "collect").mkdir()
    (tmp_path / "cmd").mkdir()
    (tmp_path / "model" / "m.h").write_text(
        "struct run_result {\n\tint partial;\n};\nstruct options {\n\tint json;\n};\n")
    (tmp_path / "collect" / "c.h").write_text("struct collector {\n\tint n;\n};\n")
    (tmp_path / "cmd" / "x.c").write_text(
        "static int f(const struct run_result *r, struct options *o)\n{\n"
        "\treturn o->json + r->partial + run_exit_code(r);\n}\n"
        "struct s {\n\tstruct collector coll;\n};\nint g(struct s *s) { return s->coll.n; }\n"
        '#include "coll.h"\n/* r->partial */ const char *t = "r->partial";\n')
    records = record_structs(tmp_path)
    assert records == {"run_result", "collector"}
    assert record_fields_read(tmp_path / "cmd" / "x.c", records) == [
        "x.c:3: r->partial", "x.c:8: coll.n"]


def test_no_command_reads_the_model_or_a_collector():
    records = record_structs(USER)
    # the check knows them: run's, top's and serve's records and collectors
    assert {"run_result", "proc_record", "top_view", "top_collector", "scrape_config",
            "top_sample"} <= records
    found = [hit for p in sorted((USER / "cmd").glob("*.c"))
             for hit in record_fields_read(p, records)]
    assert not found, found


# run, top and serve start the one engine (collect/engine.h) and no collector of their own;
# main.c takes --stacks-by's values from the stacks' header.
CMD_REACHES_COLLECT = {"collect/engine.h": None, "collect/stacks.h": {"main.c"}}


def collect_includes(cmd, user):
    """(command file, collect/ header) for each include of collect/ from cmd/ that
    CMD_REACHES_COLLECT does not allow."""
    out = []
    for path in sorted(cmd.glob("*.[ch]")):
        for target in user_includes(path, user):
            rel = str(target.relative_to(user.resolve()))
            if target.parent.name != "collect":
                continue
            allowed = CMD_REACHES_COLLECT.get(rel, set())
            if allowed is not None and path.name not in allowed:
                out.append((path.name, rel))
    return out


def test_the_engine_check_sees_a_collector(tmp_path):
    write_tree(tmp_path, {"collect/engine.h": "", "collect/top_collect.h": "",
                          "collect/stacks.h": "",
                          "cmd/top.c": '#include "collect/engine.h"\n'
                                       '#include "collect/top_collect.h"\n',
                          "cmd/main.c": '#include "collect/stacks.h"\n',
                          "cmd/run.c": '#include "collect/stacks.h"\n'})
    assert collect_includes(tmp_path / "cmd", tmp_path) == [
        ("run.c", "collect/stacks.h"), ("top.c", "collect/top_collect.h")]


def test_commands_reach_collection_only_through_the_engine():
    found = collect_includes(USER / "cmd", USER)
    used = {(p.name, str(t.relative_to(USER.resolve()))) for p in (USER / "cmd").glob("*.c")
            for t in user_includes(p, USER)}
    # run, top and serve each start the engine (the check reads the includes at all)
    assert {("run.c", "collect/engine.h"), ("top.c", "collect/engine.h"),
            ("serve.c", "collect/engine.h")} <= used, used
    assert not found, found


# ---- derive once (issue 38): every sink is finished before the one model_derive ----

def function_bodies(text):
    """(name, [lines]) of each function, found as functions() finds them."""
    lines, out, start, name = text.splitlines(), [], None, None
    for i, line in enumerate(lines):
        if line == "{" and i:
            head = lines[max(0, i - 4):i]
            # The head starts after the previous function's end.
            ends = [k for k, h in enumerate(head) if h.startswith("}")]
            m = re.findall(r"(\w+)\s*\(", " ".join(head[ends[-1] + 1 if ends else 0:]))
            start, name = i, m[0] if m else "?"
        elif line.startswith("}") and start is not None:
            out.append((name, lines[start:i + 1]))
            start = None
    return out


def derive_calls(paths):
    """(file, function, the calls of a *finish* function made after model_derive there) for
    each function that calls model_derive."""
    out = []
    for path in paths:
        for name, body in function_bodies(code_only(path.read_text())):
            at = [i for i, line in enumerate(body) if re.search(r"\bmodel_derive\s*\(", line)]
            if name == "model_derive" or not at:
                continue
            later = [m for line in body[at[-1] + 1:]
                     for m in re.findall(r"\b(\w*finish\w*)\s*\(", line)]
            out.append((path.name, name, later))
    return out


def test_the_derive_check_sees_a_late_sink(tmp_path):
    (tmp_path / "e.c").write_text(
        "void end(struct e *e)\n{\n\tfinish_sinks(e);\n\tmodel_derive(e->r);\n}\n"
        "void late(struct e *e)\n{\n\tmodel_derive(e->r);\n\tstacks_finish(e->s, e->r);\n}\n")
    assert derive_calls([tmp_path / "e.c"]) == [("e.c", "end", []),
                                                ("e.c", "late", ["stacks_finish"])]


def test_the_model_is_derived_once_after_every_sink():
    found = derive_calls(sorted(USER.glob("*/*.c")))
    assert len(found) == 1, found  # one caller: run mode's engine
    assert found[0][:2] == ("engine.c", "engine_finish") and not found[0][2], found


# ---- the model and the renderers read records, never the machine (issue 38) ----

MACHINE_PATH = re.compile(r'"/(?:sys|proc)\b')


def bodies(text):
    """(name, static, body) of each function, kernel style (see functions())."""
    lines, out, start = text.splitlines(), [], None
    for i, line in enumerate(lines):
        if line == "{" and i:
            j = i  # the declaration: the lines up to a blank one, a comment's end or a "}"
            while j and lines[j - 1].strip() and not lines[j - 1].startswith(("}", " */")):
                j -= 1
            head = " ".join(lines[j:i])
            names = re.findall(r"(\w+)\s*\(", head)
            start, name = i, names[0] if names else "?"
            static = re.search(r"\bstatic\b[^;{}]*\b" + re.escape(name) + r"\s*\(", head)
        elif line.startswith("}") and start is not None:
            out.append((name, bool(static), "\n".join(lines[start:i + 1])))
            start = None
    return out


def machine_readers(util):
    """The functions of util/ that open a /sys or /proc path, or call one that does."""
    funcs = [f for p in sorted(util.glob("*.c")) for f in bodies(p.read_text())]
    reads = {name for name, _, body in funcs if MACHINE_PATH.search(body)}
    grown = True
    while grown:
        called = {name for name, _, body in funcs
                  if any(re.search(r"\b%s\s*\(" % r, body) for r in reads)}
        grown = not called <= reads
        reads |= called
    return {name for name, static, _ in funcs if name in reads and not static}


def machine_reads(user):
    """(file, what) of each /sys or /proc path named, or reader called, in model/ and report/."""
    readers = machine_readers(user / "util")
    found = set()
    for path in sorted(p for stage in ("model", "report") for p in (user / stage).glob("*.[ch]")):
        text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
        rel = str(path.relative_to(user))
        found |= {(rel, m.group(0)) for m in MACHINE_PATH.finditer(text)}
        found |= {(rel, r) for r in readers if re.search(r"\b%s\s*\(" % r, text)}
    return found


def test_the_machine_check_sees_a_read(tmp_path):
    files = {"util/m.c": 'static int raw(void)\n{\n\treturn open("/sys/x", 0);\n}\n\n'
                         'int machine_reads(void)\n{\n\treturn raw();\n}\n',
             "model/a.c": "int a(void)\n{\n\treturn machine_reads();\n}\n",
             "report/b.c": 'int b(void)\n{\n\treturn open("/proc/self/x", 0);\n}\n',
             "report/c.c": "/* no read of \"/sys\" here */\nint c(void)\n{\n\treturn 0;\n}\n"}
    write_tree(tmp_path, files)
    assert machine_readers(tmp_path / "util") == {"machine_reads"}
    assert machine_reads(tmp_path) == {("model/a.c", "machine_reads"), ("report/b.c", '"/proc')}


def test_model_and_renderers_never_read_the_machine():
    readers = machine_readers(USER / "util")
    assert {"disk_name", "disk_table_read", "mount_point_of", "cgroup_path_of"} <= readers
    assert "disk_table_name" not in readers  # a look-up in what the collector read
    found = machine_reads(USER)
    assert not found, sorted(found)


# ---- no circle of files (issue 38) ----
# A file of user/ stands above another when it includes that file's own header (x.h of x.c,
# directly or through other headers) or names a function that the other alone defines (a
# call, or a callback handed on). External names are unique in the one binary the files
# make, so every call between files is an arrow: the graph has no circle when no two files
# call each other, however far round.

DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?[\s\*](\w+)\s*\([^;{]*?\)\s*\{",
                        re.M | re.S)


def code_without_comments(text):
    """text without comments and with every string literal empty."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)


def external_functions(text):
    names = {m.group(1) for m in DEFINITION.finditer(code_without_comments(text))}
    return names - {"if", "while", "for", "switch", "return", "sizeof"}


def include_closure(path, user, seen=None):
    """Every header of user that path includes, directly or through other headers."""
    seen = set() if seen is None else seen
    for header in user_includes(path, user):
        if header not in seen:
            seen.add(header)
            include_closure(header, user, seen)
    return seen


def file_arrows(user):
    """{file: {file it stands above: why}} for the .c files of user (paths relative to it)."""
    sources = {p.resolve(): str(p.relative_to(user)) for p in sorted(user.glob("*/*.c"))}
    defined = {p: external_functions(p.read_text()) for p in sources}
    owner = {name: p for p, names in defined.items() for name in names}
    arrows = {}
    for p, rel in sources.items():
        words = set(re.findall(r"\w+", code_without_comments(p.read_text())))
        out = arrows.setdefault(rel, {})
        for name in sorted(words - defined[p]):
            if name in owner:
                out.setdefault(sources[owner[name]], []).append(name)
        for header in include_closure(p, user.resolve()):
            q = header.with_suffix(".c")
            if q in sources and q != p:
                out.setdefault(sources[q], []).append("#include " + header.name)
    return arrows


def circles(arrows):
    """The strongly connected sets of two or more files (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in arrows.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(part)

    for v in sorted(arrows):
        if v not in index:
            visit(v)
    return found


def test_the_circle_check_sees_one(tmp_path):
    files = {"model/a.h": "int a(void);\n",
             "model/a.c": '#include "a.h"\n#include "c.h"\nint a(void)\n{\n\treturn c();\n}\n',
             "model/b.c": '#include "a.h"\nint b(void)\n{\n\treturn a();\n}\n',
             "model/c.h": "int c(void);\n",
             "model/c.c": "/* b() */\nint c(void)\n{\n\treturn 0;\n}\n",
             "report/d.c": "static int b(void)\n{\n\treturn 1;\n}\n"
                           "int d(void)\n{\n\treturn b();\n}\n"}
    write_tree(tmp_path, files)
    assert circles(file_arrows(tmp_path)) == []  # b -> a -> c; d's b() is its own
    (tmp_path / "model/c.c").write_text('int b(void);\nint c(void)\n{\n\treturn b();\n}\n')
    assert circles(file_arrows(tmp_path)) == [{"model/a.c", "model/b.c", "model/c.c"}]
    (tmp_path / "model/c.c").write_text('#include "a.h"\nint c(void)\n{\n\treturn 0;\n}\n')
    assert circles(file_arrows(tmp_path)) == [{"model/a.c", "model/c.c"}]


def test_no_circle_of_files():
    arrows = file_arrows(USER)
    assert sum(len(v) for v in arrows.values()) > 200, arrows  # it reads the arrows at all
    found = [sorted(c) for c in circles(arrows)]
    assert not found, [(c, {a: {b: arrows[a][b] for b in arrows[a] if b in c} for a in c})
                       for c in found]


# ---- one catalogue of syscalls (issue 38) ----
# Which syscall reads, writes or syncs, its ledger op, its family: one row of bpf/iotrace.h's
# SYSCALL_CATALOGUE each, read through model/syscall_table.c. A syscall's name as a string
# anywhere else is knowledge kept twice. Some names are also plain words that outputs use as
# labels (a "read" column, a "sync" flag, an "exit" key); those may stand as labels, but a
# catalogued name compared or looked up (strcmp(name, "read"), syscall_nr("execve")) is
# always a slip.
CATALOGUE_FILES = {"bpf/iotrace.h", "user/model/syscall_table.c", "user/model/syscall_table.h"}
LABEL_WORDS = {"read", "write", "sync", "close", "exit", "time", "stat", "link", "pipe",
               "socket", "poll", "fork", "readahead", "listen", "mincore"}
LOOKUP = re.compile(r"\b(?:str\w*cmp|strstr|syscall_nr|seccomp_\w+)\s*\([^;]*$")
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def catalogue_names():
    text = (ROOT / "bpf/iotrace.h").read_text()
    rows = re.search(r"#define SYSCALL_CATALOGUE\(.*?[^\\]\n", text, re.S).group(0)
    return set(re.findall(r"\b(?:RW|COPY|OP|CALL)\(x, (\w+)", rows))


def syscall_names():
    """Every syscall the kernel's headers name, and the catalogue's."""
    headers = list(Path("/usr/include").glob("*/asm/unistd_64.h"))
    assert headers, "linux-libc-dev's asm/unistd_64.h is needed to build and to check"
    found = set(re.findall(r"#define __NR_(\w+)\s+\d", headers[0].read_text()))
    return found | catalogue_names()


def syscall_strings(path, names, catalogued):
    """(line, name, why) of each syscall name path holds as a string: a catalogued one
    compared or looked up, or any not a label word."""
    out = []
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), path.read_text(),
                  flags=re.S)
    for i, line in enumerate(text.splitlines()):
        for m in STRING.finditer(line):
            if m.group(1) not in names:
                continue
            if m.group(1) in catalogued and LOOKUP.search(line[:m.start()]):
                out.append((i + 1, m.group(1), "compared or looked up"))
            elif m.group(1) not in LABEL_WORDS:
                out.append((i + 1, m.group(1), "named"))
    return out


def test_the_syscall_name_check_sees_one(tmp_path):
    names = {"read", "write", "execve", "pread64"}
    f = tmp_path / "x.c"
    f.write_text('fprintf(out, "%s", "read");\nif (strstr(name, "read"))\n'
                 'nr = syscall_nr("execve"); /* "pread64" */\n'
                 'static const char *const n[] = { "pread64", "data" };\n'
                 'if (!strcmp(by, "write"))\n')
    assert syscall_strings(f, names, names - {"write"}) == [(2, "read", "compared or looked up"),
                                         (3, "execve", "compared or looked up"),
                                         (4, "pread64", "named")]


def test_syscall_names_only_in_the_catalogue():
    names = syscall_names()
    assert {"read", "pread64", "io_uring_enter", "execve", "rename"} <= catalogue_names()
    assert len(names) > 300
    found = {str(p.relative_to(ROOT)): hits
             for p in sorted(list(USER.glob("*/*.[ch]")) + list((ROOT / "bpf").glob("*.[ch]")))
             if str(p.relative_to(ROOT)) not in CATALOGUE_FILES
             and (hits := syscall_strings(p, names, catalogue_names()))}
    assert not found, found
