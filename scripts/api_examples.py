#!/usr/bin/env python3
"""Runs the examples of the project's markdown and writes their real output.

Usage: api_examples.py [--check] FILE=PORT... host=PORT

Each ```console block of FILE is a sequence of commands (`$ ` lines, with
`\\` continuation lines) and their output. Every command is run with bash,
in order, against the service on 127.0.0.1:PORT (the commands say
127.0.0.1:3000, `spin up`'s default; the port is swapped in) — or, for a
block after the line `<!-- examples: test host -->`, against the test host
on the `host` port. Its output, without the `date` header (and without
carriage returns), replaces the block's old output. Each FILE needs a
service of its own with a fresh store: the examples create pets and show
their ids.

--check writes nothing: it fails, with a diff, if any output differs from
the file's other than in generated request ids (32 hex digits, random).
"""

import difflib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST_MARK = "<!-- examples: test host -->"
ADDRESS = "127.0.0.1:3000"
GENERATED_ID = re.compile(r"(x-request-id: )[0-9a-f]{32}$", re.MULTILINE)


def run(command, port):
    """The output of one command, as a reader of the example sees it."""
    done = subprocess.run(
        ["bash", "-c", command.replace(ADDRESS, f"127.0.0.1:{port}")],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"example failed ({done.returncode}): {command}\n{done.stderr}")
    out = done.stdout.replace("\r", "").replace(f"127.0.0.1:{port}", ADDRESS)
    lines = [line for line in out.split("\n") if not line.lower().startswith("date:")]
    return "\n".join(lines).rstrip("\n")


def commands(block):
    """The commands of a console block: each `$ ` line with its continuations."""
    found, current = [], None
    for line in block:
        if line.startswith("$ "):
            current = [line]
            found.append(current)
        elif current and current[-1].endswith("\\"):
            current.append(line)
        else:
            current = None
    return ["\n".join(lines) for lines in found]


def rewrite(text, port, host_port):
    lines, out, i, ran, marked = text.split("\n"), [], 0, 0, False
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if line.strip() != "```console":
            # The mark applies to the block right after it (blank lines aside).
            marked = line.strip() == HOST_MARK or (marked and not line.strip())
            continue
        end = lines.index("```", i)
        target = host_port if marked else port
        block, quiet = [], True
        for command in commands(lines[i:end]):
            result = run(command[2:], target)
            # A blank line after an output, none after a bare comment.
            block.append(("" if quiet else "\n") + command + ("\n" + result if result else ""))
            quiet = not result
            ran += 1
        out.append("\n".join(block))
        out.append("```")
        i, marked = end + 1, False
    return "\n".join(out), ran


def main(argv):
    check = "--check" in argv
    pairs = dict(arg.split("=", 1) for arg in argv if "=" in arg)
    host_port = pairs.pop("host")
    failed = False
    for name, port in pairs.items():
        path = ROOT / name
        old = path.read_text()
        new, ran = rewrite(old, port, host_port)
        if not check:
            path.write_text(new)
            print(f"{name}: {ran} examples written")
            continue
        mask = lambda t: GENERATED_ID.sub(r"\1<generated>", t).split("\n")
        diff = list(difflib.unified_diff(mask(old), mask(new), name, "real output", lineterm=""))
        if diff:
            failed = True
            print("\n".join(diff))
            print(f"{name}: the examples differ from the component's real output; "
                  "run scripts/api-examples to rewrite them")
        else:
            print(f"{name}: {ran} examples match the real output")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
