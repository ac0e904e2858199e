#!/usr/bin/env python3
"""check_resume.py: interrupted and resumed `hsdr run` (standard library only).

  check_resume.py interrupt HSDR MATRIX WORK --signal INT|TERM [--hard-stop] [-- RUN_ARGS...]
      WORK/full: an uninterrupted run. WORK/cut: the same run, sent the signal once the journal
      (results.partial.jsonl) holds a few rows: exit 128 + the signal number, results.jsonl (+ .csv) holds only
      whole rows, each marked partial, the first cases of the expansion in order and whole configurations (a run
      times the cases of one (inputs, threads, mode) together in rounds and stops between configurations), no
      breakeven.json. --hard-stop: then `--resume`, stopped by the signal twice (the second ends the process at once),
      a torn row appended to the journal as a process killed inside a write leaves it. Finally `--resume` completes
      the run: the result equals WORK/full in everything but timings (the same keys in the same order, the same
      deterministic fields), and every row the journal held before it is kept as measured, timings and paired ratios
      included (a resumed run times only the cases not done).
  check_resume.py mismatch HSDR MATRIX WORK
      `--resume` on a directory of another matrix file or other axes (--set K), another seed (--set seed) or other
      settings (--stages) is refused with exit 2, a message naming the file, line and key, and the directory left as
      it was; `--resume` with the same options on a complete directory runs nothing and rewrites the same rows.

The child processes start with SIGINT and SIGTERM at their default action: a shell starts background jobs with
SIGINT ignored, and hsdr keeps an ignored signal ignored."""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # leave no __pycache__ in plots/
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "plots"))
import load  # noqa: E402 (plots/load.py: the row check against the schema table; standard library only)

# fields that do not depend on timing: equal between an uninterrupted run and an interrupted + resumed one
DETERMINISTIC = ("schema", "key", "variant", "backend", "family", "K", "N", "R", "cols", "threads", "distribution",
                 "mode", "flns_F", "flns_b", "shape", "seed", "weight_bytes", "status", "validation", "occupancy",
                 "error", "error_message", "critical_path_depth", "production_variant", "device")
CONTEXT_DETERMINISTIC = ("matrix", "matrix_seed", "shard", "settings")
SCHEMA = None  # the row schema of the binary under test (`hsdr schema --json`), set by main


def fail(msg):
    print("check_resume: FAIL: " + msg)
    sys.exit(1)


def default_signals():
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def run(cmd, want_rc=None):
    """Run to the end; the exit status and stdout + stderr."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=default_signals)
    if want_rc is not None and p.returncode != want_rc:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, expected {want_rc}\n{p.stdout[-3000:]}")
    return p.returncode, p.stdout


def whole_lines(path):
    """Rows of a journal written so far: lines ended by a newline."""
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def run_until(cmd, journal, rows, sig, twice=False, timeout_s=300):
    """Start cmd, wait until journal holds `rows` whole rows, send sig; twice: again once hsdr has said that it
    stops at the next case boundary (two signals sent at once would merge into one pending signal). The exit status
    and the output (stdout + stderr)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_signals)
    deadline = time.monotonic() + timeout_s
    while whole_lines(journal) < rows:
        if p.poll() is not None:
            out, err = p.communicate()
            fail(f"{' '.join(cmd)}: ended (exit {p.returncode}) before {journal} held {rows} rows\n"
                 f"{(out + err).decode()[-3000:]}")
        if time.monotonic() > deadline:
            p.kill()
            fail(f"{journal}: not {rows} rows after {timeout_s} s")
        time.sleep(0.005)
    p.send_signal(sig)
    err = b""
    if twice:
        # --quiet: stdout holds a few lines until the end, stderr the handler's message
        while b"stopping after the current case" not in err:
            chunk = os.read(p.stderr.fileno(), 4096)
            if not chunk:
                break
            err += chunk
        p.send_signal(sig)
    out, rest = p.communicate(timeout=timeout_s)
    return p.returncode, (out + err + rest).decode()


def load_rows(path):
    """Every line must be one whole row of the schema, with its context."""
    rows = []
    with open(path) as f:
        text = f.read()
    if text and not text.endswith("\n"):
        fail(f"{path}: the last line has no newline (a half-written row)")
    for n, line in enumerate(text.splitlines(), 1):
        try:
            r = json.loads(line)
            load.check_row(r, f"{path}:{n}", SCHEMA)
        except json.JSONDecodeError as e:
            fail(f"{path}:{n}: not JSON: {e}")
        except load.InputError as e:
            fail(str(e))
        if r["schema"] != SCHEMA.name or not isinstance(r.get("context"), dict):
            fail(f"{path}:{n}: schema {r['schema']} or no context")
        rows.append(r)
    return rows


def whole_rows(path):
    """The rows of a journal up to a torn last line (what --resume keeps)."""
    with open(path) as f:
        lines = f.read().split("\n")
    rows = []
    for line in lines[:-1]:  # the text after the last newline is a torn row, or nothing
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return rows


def configuration(r):
    """The cases a run times together in rounds: same inputs, threads and mode."""
    return (r["shape"], r["K"], r["N"], r["distribution"], r["seed"], r["threads"], r["mode"])


def check_cut(d, full, sig_name, out):
    """The directory of an interrupted run: whole rows, each marked, the first cases in order."""
    rows = load_rows(os.path.join(d, "results.jsonl"))
    done, total = len(rows), len(full)
    if not 0 < done < total:
        fail(f"{d}: {done} rows after the interruption, expected between 1 and {total - 1}")
    want_mark = {"done": done, "total": total, "interrupted_by": sig_name}
    for r in rows:
        if r.get("partial") != want_mark:
            fail(f"{d}: {r['key']}: partial mark {r.get('partial')!r}, expected {want_mark!r}")
    if [r["key"] for r in rows] != [r["key"] for r in full[:done]]:
        fail(f"{d}: the rows are not the first {done} cases of the expansion, in order")
    if configuration(full[done - 1]) == configuration(full[done]):
        fail(f"{d}: the run stopped inside a configuration: {full[done - 1]['key']} was timed, {full[done]['key']} "
             f"(same inputs, threads and mode: the same rounds) was not")
    with open(os.path.join(d, "results.csv"), newline="") as f:
        crows = list(csv.DictReader(f))
    if [c["key"] for c in crows] != [r["key"] for r in rows] or \
            any(c["partial.done"] != str(done) or c["partial.interrupted_by"] != sig_name for c in crows):
        fail(f"{d}/results.csv does not mirror the marked rows")
    if os.path.exists(os.path.join(d, "breakeven.json")):
        fail(f"{d}: breakeven.json left beside a partial run")
    left = [f for f in os.listdir(d) if f.endswith(".tmp")]
    if left:
        fail(f"{d}: temporary files left: {left}")
    journal = load_rows(os.path.join(d, "results.partial.jsonl"))
    if [r["key"] for r in journal] != [r["key"] for r in rows]:
        fail(f"{d}: the journal does not hold the same rows as results.jsonl")
    if f"interrupted by {sig_name} after {done} of {total} cases" not in out or "--resume" not in out:
        fail(f"the message lacks 'interrupted by {sig_name} after {done} of {total} cases' and the --resume line:\n"
             f"{out[-2000:]}")
    return done


def compare(full, resumed, kept):
    """Everything but timings: keys and order, deterministic fields, field and stage names, run settings; the rows
    kept from the journal: everything but the partial mark and the context (a row's measurements, its ceiling and
    its paired ratios included, are not measured again)."""
    if [r["key"] for r in full] != [r["key"] for r in resumed]:
        fail("the resumed run's keys or their order differ from the uninterrupted run's")
    for a, b in zip(full, resumed):
        k = a["key"]
        for f in DETERMINISTIC:
            if a.get(f) != b.get(f):
                fail(f"{k}: field {f}: {a.get(f)!r} uninterrupted, {b.get(f)!r} resumed")
        if set(a) != set(b):
            fail(f"{k}: fields differ: {sorted(set(a) ^ set(b))}")
        if set(a.get("stages") or {}) != set(b.get("stages") or {}):
            fail(f"{k}: stage names differ")
        if (a.get("convert") or {}).get("footprint_bytes") != (b.get("convert") or {}).get("footprint_bytes"):
            fail(f"{k}: convert.footprint_bytes differs")
        for f in CONTEXT_DETERMINISTIC:
            if a["context"].get(f) != b["context"].get(f):
                fail(f"{k}: context.{f}: {a['context'].get(f)!r} vs {b['context'].get(f)!r}")
    now = {r["key"]: r for r in resumed}
    for before in kept:
        after = now[before["key"]]
        for f in sorted((set(before) | set(after)) - {"partial", "context"}):
            if before.get(f) != after.get(f):
                fail(f"{before['key']}: field {f} of a row kept from the journal changed on --resume: "
                     f"{json.dumps(before.get(f))[:200]} before, {json.dumps(after.get(f))[:200]} after")


def check_results(hsdr, d, n):
    rc, out = run([sys.executable, os.path.join(HERE, "check_results.py"), hsdr, d, "--expect-cases", str(n)])
    if rc != 0:
        fail(f"{d}: {out}")


def interrupt(hsdr, matrix, work, sig_name, hard_stop, run_args):
    sig = getattr(signal, "SIG" + sig_name)
    name = "SIG" + sig_name
    base = [hsdr, "run", matrix, "--quiet"] + run_args
    full_dir, cut_dir = os.path.join(work, "full"), os.path.join(work, "cut")
    full_rc, _ = run(base + ["--out", full_dir])
    if full_rc not in (0, 1):
        fail(f"the uninterrupted run exited {full_rc}")
    full = load_rows(os.path.join(full_dir, "results.jsonl"))
    journal = os.path.join(cut_dir, "results.partial.jsonl")

    rc, out = run_until(base + ["--out", cut_dir], journal, 3, sig)
    if rc != 128 + sig:
        fail(f"interrupted run: exit {rc}, expected {128 + sig} (128 + {name})\n{out[-2000:]}")
    done = check_cut(cut_dir, full, name, out)
    print(f"check_resume: {name}: exit {rc}, {done} of {len(full)} whole rows, each marked partial")

    if hard_stop:
        # resume, then two signals: the first asks for the case boundary, the second ends the process at once
        rc, out = run_until(base + ["--out", cut_dir, "--resume"], journal, done + 3, sig, twice=True)
        # -sig: the second signal ended the process inside a case; 128 + sig: the case ended first and hsdr was
        # writing its results, which it does not let a signal cut short (a race the test cannot rule out)
        if rc not in (-sig, 128 + sig):
            fail(f"resumed run stopped by two {name}: exit {rc}, expected {-sig} or {128 + sig}\n{out[-2000:]}")
        kept = whole_lines(journal)  # a kill inside a write may have left a torn last line already
        with open(journal, "a") as f:
            f.write('{"schema":"hsdr-results/2","key":"a row cut off by a ki')  # what a kill inside write() leaves
        print(f"check_resume: {name} twice: {'killed by the signal' if rc < 0 else f'exit {rc}'}, the journal holds "
              f"{kept} whole rows (+ a torn one appended)")

    kept_rows = whole_rows(journal)
    rc, out = run(base + ["--out", cut_dir, "--resume"])
    if rc != full_rc:
        fail(f"resumed run: exit {rc}, the uninterrupted run's was {full_rc}\n{out[-2000:]}")
    if hard_stop and "bytes after the last complete row dropped" not in out:
        fail(f"the resumed run did not report the torn journal row:\n{out[-2000:]}")
    check_results(hsdr, cut_dir, len(full))
    resumed = load_rows(os.path.join(cut_dir, "results.jsonl"))
    compare(full, resumed, kept_rows)
    print(f"check_resume: {name} then --resume: {len(full)} cases, identical to the uninterrupted run in every "
          f"deterministic field; the {len(kept_rows)} rows done before kept as measured")


def mismatch(hsdr, matrix, work):
    d = os.path.join(work, "k128")
    base = [hsdr, "run", matrix, "--quiet", "--stages", "none", "--filter", "K=128 "]
    run(base + ["--out", d], want_rc=0)
    results = os.path.join(d, "results.jsonl")
    with open(results, "rb") as f:
        before = f.read()
    first_key = json.loads(before.splitlines()[0])["key"]
    other_matrix = os.path.join(os.path.dirname(HERE), "matrix.yaml")
    no_stages = [a for a in base if a not in ("--stages", "none")]
    not_here = f"results.jsonl:1: key '{first_key}' is not a case of this run"
    cases = [  # (what, the command without --out and --resume, what the message must say)
        ("another matrix file (matrix.yaml)", [hsdr, "run", other_matrix, "--quiet", "--stages", "none"], not_here),
        ("other axes (--set K=1024)", base + ["--set", "K=1024"], not_here),
        ("another seed (--set seed=8)", base + ["--set", "seed=8"], f"results.jsonl:1: key '{first_key}': field "
                                                                    "'seed' is"),
        ("other settings (--stages both)", no_stages + ["--stages", "both"], f"results.jsonl:1: key '{first_key}': "
                                                                            "field 'context.settings'"),
    ]
    for what, args, want in cases:
        rc, out = run(args + ["--out", d, "--resume"])
        if rc != 2 or want not in out:
            fail(f"--resume on {what}: exit {rc}, expected 2 and '{want}' in:\n{out[-2000:]}")
        with open(results, "rb") as f:
            if f.read() != before or sorted(os.listdir(d)) != ["breakeven.json", "results.csv", "results.jsonl"]:
                fail(f"--resume on {what} changed {d}")
        message = next(line for line in out.splitlines() if "--resume:" in line)
        print(f"check_resume: --resume on {what}: refused, exit 2: {message[:200]}")
    # the same options: nothing to run, the same rows
    rc, out = run(base + ["--out", d, "--resume"], want_rc=0)
    n = len(before.splitlines())
    if f"{n} of {n} cases already done" not in out:
        fail(f"--resume on a complete directory: expected '{n} of {n} cases already done' in:\n{out[-2000:]}")
    with open(results, "rb") as f:
        if [json.loads(x)["key"] for x in f.read().splitlines()] != [json.loads(x)["key"] for x in before.splitlines()]:
            fail("--resume on a complete directory changed its rows")
    print("check_resume: mismatched directories refused, a complete one resumed as it was")


def main(argv):
    if len(argv) < 4 or argv[0] not in ("interrupt", "mismatch"):
        sys.exit(__doc__)
    mode, hsdr, matrix, work = argv[:4]
    rest = argv[4:]
    global SCHEMA
    out = subprocess.run([hsdr, "schema", "--json"], check=True, capture_output=True, text=True).stdout
    SCHEMA = load.parse_row_schema(json.loads(out), "hsdr schema --json")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if mode == "mismatch":
        mismatch(hsdr, matrix, work)
        return
    run_args = rest[rest.index("--") + 1:] if "--" in rest else []
    opts = rest[:rest.index("--")] if "--" in rest else rest
    if "--signal" not in opts or opts[opts.index("--signal") + 1] not in ("INT", "TERM"):
        sys.exit("check_resume.py interrupt: --signal INT|TERM is required")
    interrupt(hsdr, matrix, work, opts[opts.index("--signal") + 1], "--hard-stop" in opts, run_args)


if __name__ == "__main__":
    main(sys.argv[1:])
