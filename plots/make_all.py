#!/usr/bin/env python3
"""Regenerate every figure and REPORT.md of one `hsdr run` results directory, from the directory alone.

usage: plots/make_all.py DIR [--out FIGDIR] [--report FILE] [--no-report]

Reads DIR/results.jsonl (required unless DIR holds a real-model input; rows of hsdr-results/2, or /1 converted as
hsdr reads them), DIR/breakeven.json, DIR/profile-<model>.json, DIR/states.jsonl, DIR/quality.json, the real-model
inputs DIR/inspect.json, DIR/states-real.jsonl and DIR/quality-real.json (docs/real-model.md) and the
DIR/columns-<model>.jsonl of older runs (optional); writes DIR/figures/*.png (one line printed per figure) and
DIR/REPORT.md. A host study folder of scripts/cpu-host.sh (no results.jsonl; threads/results.jsonl[.gz],
handoff.jsonl, bandwidth.jsonl, profile-*.json, cpu-host.log: load.is_host_dir; a later call's bandwidth-N.jsonl,
handoff-N.jsonl, cpu-host-N.log beside them: host.calls) gets its own figures
(host_figures.py: thread-scaling.png, parallel-efficiency.png) and report (host_report.py). A figure whose input
is missing is still written, as a labelled "no data" placeholder that names the command producing it.
Exit status: 0 done; 2 bad usage or malformed input (the message names the file and line); 1 a figure failed to
render (its placeholder says so; the traceback is on stderr). Run through plots/run, which picks a Python with
matplotlib."""
import argparse
import os
import signal
import sys
import traceback

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree

import atomic  # noqa: E402
import figures  # noqa: E402 (selects the Agg backend before pyplot loads)
import host  # noqa: E402
import host_figures  # noqa: E402
import host_report  # noqa: E402
import load  # noqa: E402
import query  # noqa: E402
import report  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="plots/make_all.py", description=__doc__.split("\n")[0])
    ap.add_argument("dir", metavar="DIR", help="results directory of `hsdr run` (holds results.jsonl), of the "
                                               "real-model inputs, or of scripts/cpu-host.sh")
    ap.add_argument("--out", metavar="FIGDIR", help="where the PNG files go (default DIR/figures)")
    ap.add_argument("--report", metavar="FILE", help="the Markdown report (default DIR/REPORT.md)")
    ap.add_argument("--no-report", action="store_true", help="figures only")
    return ap.parse_args(argv)


def render_all(ds, fig_dir, host_study=False):
    """Write every figure (a host study's own, when host_study); returns ({name: None, or why it is a placeholder},
    whether one failed to render)."""
    variants = host.all_variants(ds) if host_study else all_variants(ds)
    palette = figures.Palette(variants, query.family_of(ds.rows), query.backend_of(ds.rows))
    status, failed = {}, False
    if host_study:
        listed = host_figures.HOST_FIGURES
    else:
        listed = figures.FIGURES + (figures.REAL_FIGURES if report.has_real_model(ds) else [])
    for name, subject, make in listed:
        path = os.path.join(fig_dir, name)
        try:
            fig, status[name] = make(ds, palette), None
        except figures.NoData as e:
            fig, status[name] = figures.placeholder(ds, subject, str(e)), str(e)
        except Exception as e:  # a bug, or data this code did not foresee: keep going, but fail the run
            traceback.print_exc()
            failed = True
            status[name] = f"rendering failed ({type(e).__name__}: {e}); see the traceback of plots/make_all.py"
            fig = figures.placeholder(ds, subject, status[name])
        atomic.save_figure(fig, path, figures.DPI)
        figures.plt.close(fig)
        print(f"{path}" + (f"  (placeholder: {status[name]})" if status[name] else ""))
    return status, failed


def all_variants(ds):
    """Every variant named anywhere in the inputs, registry order first (results), so colours agree across figures."""
    names = query.variant_order(ds.rows)
    names += [v["variant"] for p in ds.profiles.values() for v in p["variants"]]
    names += [p.get("variant") or p["name"] for p in (ds.quality or {}).get("paths", [])]
    return query.unique(names)


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` is not an error
    args = parse_args(argv)
    fig_dir = args.out or os.path.join(args.dir, "figures")
    report_path = args.report or os.path.join(args.dir, "REPORT.md")
    host_study = load.is_host_dir(args.dir)
    try:
        ds = load.load_host_dir(args.dir) if host_study else load.load_dir(args.dir)
        if host_study:
            host.calls(ds)  # a later call's files (bandwidth-N.jsonl, handoff-N.jsonl), checked before any drawing
    except load.InputError as e:
        print(f"plots/make_all.py: {e}", file=sys.stderr)
        return 2
    if ds.partial:
        rows_file = ds.rows_file if host_study else f"{args.dir}/results.jsonl"
        print(f"plots/make_all.py: note: {rows_file} holds an interrupted run ({ds.partial['done']} of "
              f"{ds.partial['total']} cases); REPORT.md says so", file=sys.stderr)
    for directory in (fig_dir, os.path.dirname(os.path.abspath(report_path))):
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            print(f"plots/make_all.py: {directory}: {e.strerror}", file=sys.stderr)
            return 2
    status, failed = render_all(ds, fig_dir, host_study)
    if not args.no_report:
        render = host_report.render if host_study else report.render
        atomic.write_text(report_path, render(ds, status, fig_dir, report_path))
        print(report_path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
