#!/usr/bin/env python3
"""Where the verifier walked a program more than once.

Reads a verifier log of level 2 (every instruction of the walk), as
IOTRACE_VERIFIER_LOG=PROG:FILE iotrace -- true writes it, and prints how often the walk
visited each instruction: the total (the `processed` figure of `iotrace -v`), each function
(the program's own body, the static functions inlined into it, each global function,
verified once), and the stretches of code visited most, with the source line of each. A
stretch visited N times is walked once per state that reached it and could not be pruned:
look just before it for the branch that split them (docs/startup.md, "What the verifier
walks more than once").
"""
import argparse
import bisect
import collections
import re
import sys

INSN = re.compile(r"^(\d+): \((..)\) (.*)")
FUNC = re.compile(r"^func#(\d+) @(\d+)")
NAMED = re.compile(r"^Validating (\S+)\(\) func#(\d+)")
PROCESSED = re.compile(r"^processed (\d+) insns")


def read(path):
    visits, text, source = collections.Counter(), {}, {}
    starts, names, processed, last_src = [], {}, None, None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("; "):
                last_src = line[2:].strip()
                continue
            m = INSN.match(line)
            if m:
                i = int(m.group(1))
                visits[i] += 1
                text.setdefault(i, m.group(3).split(" ; ")[0].strip())
                if last_src:
                    source.setdefault(i, last_src)
                last_src = None
                continue
            if (m := FUNC.match(line)):
                starts.append(int(m.group(2)))
            elif (m := NAMED.match(line)):
                names[int(m.group(2))] = m.group(1)
            elif (m := PROCESSED.match(line)):
                processed = int(m.group(1))
    return visits, text, source, sorted(starts) or [0], names, processed


def stretches(visits):
    """Runs of consecutive visited instructions with the same count: (first, last, count)."""
    runs = []
    for i in sorted(visits):
        if runs and runs[-1][1] == i - 1 and runs[-1][2] == visits[i]:
            runs[-1][1] = i
        else:
            runs.append([i, i, visits[i]])
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", help="a verifier log of level 2")
    ap.add_argument("--top", type=int, default=15, help="stretches to show (default 15)")
    args = ap.parse_args()
    try:
        visits, text, source, starts, names, processed = read(args.log)
    except OSError as e:
        sys.exit(f"verifier_walk: {args.log}: {e.strerror}")
    if not visits:
        sys.exit(f"verifier_walk: {args.log}: no instructions (not a log of level 2?)")
    total = sum(visits.values())
    print(f"{total} instruction visits over {len(visits)} instructions"
          + (f"; the verifier says {processed} processed" if processed is not None else ""))
    per_func = collections.Counter()
    for i, n in visits.items():
        per_func[bisect.bisect_right(starts, i) - 1] += n
    print("\nby function (global functions are verified once, apart):")
    for f, n in sorted(per_func.items(), key=lambda kv: -kv[1]):
        name = names.get(f, "the program and what is inlined into it" if f == 0
                         else "a static function")
        print(f"  {n:7}  func#{f} @{starts[f]}  {name}")
    print(f"\nthe {args.top} stretches that cost the most visits (instructions × visits):")
    for first, last, n in sorted(stretches(visits), key=lambda r: -(r[1] - r[0] + 1) * r[2]
                                 )[:args.top]:
        where = source.get(first) or next((source[i] for i in range(first, last + 1)
                                           if i in source), "")
        print(f"  {first:5}-{last:<5} ×{n:<4} {where[:100]}")
        print(f"  {'':11}  {text[first][:100]}")


if __name__ == "__main__":
    main()
