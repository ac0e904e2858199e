#!/usr/bin/env python3
"""docs/adding-a-variant.md built and run from its own code blocks, so that the guide cannot rot (tests/guide.cmake).

A copy of the source tree gets the guide's blocks: `file=PATH` blocks are written as new files, `into=PATH` blocks are
inserted right before the last line that reads `before-last='LINE'` (or `at=end`). The copy's `hsdr` is built
(Release, -j2; the CUDA backend with --nvcc), the `test=commands` blocks run with `sh -e` in its root, and their
results are checked: cpu.example and cuda.example listed, every vector check passed, the run's row ok with its ratio
to cpu.production, a compare verdict. Exit 0 when all holds, 77 (skip, with the reason) when no compiler or cmake
can be found, 1 otherwise. Standard library only."""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

GUIDE = "docs/adding-a-variant.md"
MAX_LINE = 120
SKIP = 77


def fail(msg):
    print(f"check_guide: FAIL: {msg}")
    sys.exit(1)


def code_blocks(text):
    """(info string, body, line of the opening fence) of every fenced block of the guide."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j] != "```":
            j += 1
        if j == len(lines):
            fail(f"{GUIDE}:{i + 1}: code block never closed")
        out.append((lines[i][3:].strip(), "".join(line + "\n" for line in lines[i + 1:j]), i + 1))
        i = j + 1
    return out


def attributes(info, where):
    """key=value words of an info string (shell quoting), after the language."""
    try:
        words = shlex.split(info)
    except ValueError as e:
        fail(f"{where}: info string '{info}': {e}")
    return dict(w.split("=", 1) for w in words[1:] if "=" in w)


def inside(root, rel, where):
    path = os.path.normpath(os.path.join(root, rel))
    if os.path.isabs(rel) or not path.startswith(root + os.sep):
        fail(f"{where}: '{rel}' is not a path inside the source tree")
    return path


def apply_block(root, attrs, body, where):
    """Write or insert one block into the copy; returns a one-line description."""
    if "file" in attrs:
        path = inside(root, attrs["file"], where)
        if os.path.exists(path):
            fail(f"{where}: file={attrs['file']} already exists in the tree (the guide adds it as a new file)")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
        return f"wrote {attrs['file']}"
    path = inside(root, attrs["into"], where)
    if not os.path.isfile(path):
        fail(f"{where}: into={attrs['into']}: no such file in the tree")
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if attrs.get("at") == "end":
        if lines[-1] != "":
            lines.append("")
        lines[-1:] = body.split("\n")
        place = "at the end"
    elif "before-last" in attrs:
        anchor = attrs["before-last"]
        hits = [i for i, line in enumerate(lines) if line.rstrip() == anchor]
        if not hits:
            fail(f"{where}: into={attrs['into']}: anchor line '{anchor}' not found (the file changed: update the "
                 f"guide's text and marker)")
        lines[hits[-1]:hits[-1]] = body.split("\n")[:-1]
        place = f"before its last line '{anchor}' (line {hits[-1] + 1})"
    else:
        fail(f"{where}: into= needs before-last='LINE' or at=end")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return f"inserted {body.count(chr(10))} lines into {attrs['into']} {place}"


def copy_tree(src, dst):
    """The source tree without .git, results/, hidden top-level folders and build folders."""
    def ignore(folder, names):
        skip = set()
        for n in names:
            p = os.path.join(folder, n)
            if n in (".git", "__pycache__"):
                skip.add(n)
            elif os.path.isdir(p) and (os.path.exists(os.path.join(p, "CMakeCache.txt")) or (
                    os.path.samefile(folder, src) and (n.startswith((".", "build")) or n == "results"))):
                skip.add(n)
        return skip
    shutil.copytree(src, dst, symlinks=True, ignore=ignore)


def run(cmd, cwd, log, what):
    t0 = time.time()
    with open(log, "w", encoding="utf-8") as f:
        rc = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        with open(log, encoding="utf-8", errors="replace") as f:
            tail = f.read()[-6000:]
        fail(f"{what} exited {rc} ({log}):\n{tail}")
    print(f"check_guide: {what}: {time.time() - t0:.1f} s")


def capture(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True, help="scratch folder (emptied first): WORK/src, WORK/src/build")
    ap.add_argument("--cmake", required=True)
    ap.add_argument("--generator", required=True)
    ap.add_argument("--make-program", default="")
    ap.add_argument("--c-compiler", required=True)
    ap.add_argument("--cxx-compiler", default="")
    ap.add_argument("--cpu-kernels", default="OFF", help="ON when this build has the x86-64 CPU kernels")
    ap.add_argument("--nvcc", default="", help="build the copy with the CUDA backend (the CUDA example)")
    ap.add_argument("--cuda-arch", default="")
    ap.add_argument("--no-cuda-reason", default="no nvcc")
    a = ap.parse_args()
    t_start = time.time()
    for tool, what in ((a.cmake, "cmake"), (a.c_compiler, "C compiler")):
        if not (os.access(tool, os.X_OK) or shutil.which(tool)):
            print(f"check_guide: SKIP: no {what} at '{tool}'")
            return SKIP

    src = os.path.realpath(a.source)
    with open(os.path.join(src, GUIDE), encoding="utf-8") as f:
        blocks = code_blocks(f.read())
    long_lines = [f"{GUIDE}:{line + 1 + k}" for info, body, line in blocks
                  for k, text in enumerate(body.split("\n")) if len(text) > MAX_LINE]
    if long_lines:
        fail(f"code block lines over {MAX_LINE} characters: {', '.join(long_lines)}")

    work = os.path.realpath(a.work)
    if work == src or src.startswith(work + os.sep):
        fail(f"--work {work}: the source tree or a folder above it, not a scratch folder")
    shutil.rmtree(work, ignore_errors=True)
    root = os.path.join(work, "src")
    copy_tree(src, root)
    print(f"check_guide: copied {src} to {root}")

    commands, applied = [], 0
    for info, body, line in blocks:
        where = f"{GUIDE}:{line}"
        attrs = attributes(info, where)
        if "file" in attrs or "into" in attrs:
            print(f"check_guide: {where}: {apply_block(root, attrs, body, where)}")
            applied += 1
        elif attrs.get("test") == "commands":
            commands.append((where, body))
    if applied < 6 or not commands:
        fail(f"{GUIDE}: {applied} file=/into= blocks and {len(commands)} test=commands blocks; expected at least 6 "
             f"and 1 (the markers changed?)")

    build = os.path.join(root, "build")
    configure = [a.cmake, "-S", root, "-B", build, "-G", a.generator, "-DCMAKE_BUILD_TYPE=Release",
                 "-DHSDR_WERROR=ON", "-DBUILD_TESTING=OFF", "-DHSDR_VULKAN=OFF", "-DHSDR_GBENCH=OFF",
                 "-DHSDR_LIKWID=OFF", f"-DCMAKE_C_COMPILER={a.c_compiler}"]
    if a.make_program:
        configure.append(f"-DCMAKE_MAKE_PROGRAM={a.make_program}")
    if a.cxx_compiler:
        configure.append(f"-DCMAKE_CXX_COMPILER={a.cxx_compiler}")
    if a.nvcc:
        configure += ["-DHSDR_CUDA=ON", f"-DCMAKE_CUDA_COMPILER={a.nvcc}"]
        if a.cuda_arch:
            configure.append(f"-DCMAKE_CUDA_ARCHITECTURES={a.cuda_arch}")
        print(f"check_guide: the CUDA example is compiled with {a.nvcc} and linked into hsdr (not run: that needs a "
              f"device)")
    else:
        configure.append("-DHSDR_CUDA=OFF")
        print(f"check_guide: the CUDA example's .cu file is not compiled ({a.no_cuda_reason}); its registry row, "
              f"cuda.h and stub.c lines are, through kernels/cuda/stub.c")
    run(configure, root, os.path.join(work, "configure.log"), "configure")
    run([a.cmake, "--build", build, "--target", "hsdr", "--parallel", "2"], root, os.path.join(work, "build.log"),
        "build hsdr")
    if a.nvcc:  # the stub line, which a CUDA build does not compile
        run([a.c_compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-Ikernels", "-Ireference",
             "kernels/cuda/stub.c"], root, os.path.join(work, "stub.log"), "compile kernels/cuda/stub.c")

    out = ""
    for where, body in commands:
        print(f"check_guide: {where}: sh -e:\n{body.rstrip()}")
        rc, text = capture(["sh", "-e", "-c", body], root)
        print(text.rstrip())
        if rc != 0:
            fail(f"{where}: the commands exited {rc}")
        out += text

    rc, listing = capture([os.path.join(build, "hsdr"), "list"], root)
    for pattern in (r"^cpu\.example +cpu +exact +fp64 y_exact ", r"^cuda\.example +cuda +baseline +fp32 y_q8_1 "):
        if rc != 0 or not re.search(pattern, listing, re.M):
            fail(f"hsdr list (exit {rc}) has no line matching '{pattern}'")
    m = re.search(r"^([0-9]+) passed, ([0-9]+) failed$", out, re.M)
    if not m or int(m.group(1)) == 0 or int(m.group(2)) != 0:
        fail("hsdr check --variant cpu.example: no 'N passed, 0 failed' line with N > 0")
    rows = []
    results = os.path.join(root, "results", "example", "results.jsonl")
    try:
        with open(results, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        fail(f"{results}: {e}")
    mine = [r for r in rows if r.get("variant") == "cpu.example"]
    if len(mine) != 1:
        fail(f"{results}: {len(mine)} rows of cpu.example, expected 1")
    row = mine[0]
    if row.get("status") != "ok" or not row.get("validation", {}).get("passed"):
        fail(f"{results}: status {row.get('status')}, validation {row.get('validation')}")
    ratio = row.get("ratio_to_production")
    if a.cpu_kernels.upper() in ("ON", "1", "TRUE", "YES"):
        if not isinstance(ratio, (int, float)) or ratio <= 0 or row.get("production_variant") != "cpu.production":
            fail(f"{results}: ratio_to_production {ratio} against {row.get('production_variant')}, expected a "
                 f"positive ratio to cpu.production")
    elif ratio is not None:
        fail(f"{results}: ratio_to_production {ratio} in a build without cpu.production")
    else:
        print("check_guide: no CPU kernels in this build (not x86-64): no cpu.production, the ratio is null")
    if not re.search(r"^variant=cpu\.example .* (FASTER|SLOWER|SAME|AMBIGUOUS) *$", out, re.M):
        fail("hsdr compare: no verdict line for cpu.example")
    print(f"check_guide: OK: {applied} blocks applied, {len(commands)} command blocks run, {m.group(1)} vector checks "
          f"passed, cpu.example {ratio if ratio is None else f'{ratio:.3g}'}x cpu.production, in "
          f"{time.time() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
