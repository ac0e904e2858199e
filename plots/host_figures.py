"""The figures of a host study folder (scripts/cpu-host.sh), one function each, as in figures.py: figure(ds, palette)
-> matplotlib Figure, or raise figures.NoData; HOST_FIGURES lists them in report order. Every title names the machine,
the timing mode and the thread counts."""
import math
import textwrap

from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

import host as h
import query as q
from figures import NoData, figure_legend, footnote, log2_axis, new_figure, plain_log_y, set_title
from load import how_to_make


def sweep_rows(ds):
    """The timed rows of the sweep, or NoData naming the command that makes them."""
    rows = h.timed(ds)
    if not rows:
        what = "holds no timed row" if ds.rows_file else "is missing"
        raise NoData(f"threads/results.jsonl {what} ({how_to_make('threads/results.jsonl', ds.dir)})")
    return rows


def scope(rows):
    """'cold, R = 1, threads 1, 2, 4' of the sweep's rows."""
    return (f"{'/'.join(q.unique(r['mode'] for r in rows))}, R = 1, threads "
            f"{', '.join(str(t) for t in h.thread_counts(rows))}")


def ceiling_lines(ds, rows):
    """[(threads, GB/s), style, label] of the read ceilings per thread count: bandwidth.jsonl's (the median over the
    calls' bandwidth files where the folder holds several), and the one `hsdr run` measured beside the rows."""
    mode = rows[0]["mode"]
    out = []
    measured = h.read_ceilings(ds, mode)
    if measured:
        lines = h.bandwidth_lines(ds)
        drawn = [x for x in lines if x["mode"] == mode] or lines  # read_ceilings falls back to every mode
        sizes = sorted({q.fmt_bytes(x["bytes"]) for x in drawn})
        calls = [c for c in h.calls(ds) if c.bandwidth]
        source = f"median of {len(calls)} calls' bandwidth files" if len(calls) > 1 else "bandwidth.jsonl"
        out.append(([(t, b / 1e9) for t, b in measured.items()], {"color": "k", "ls": "--", "lw": 1.6},
                    f"read ceiling, {source} ({', '.join(sizes)}, {'/'.join(q.unique(x['mode'] for x in drawn))})"))
    beside = h.row_ceilings(rows)
    if beside:
        out.append(([(t, b / 1e9) for t, b in beside.items()], {"color": "0.45", "ls": ":", "lw": 1.6},
                    "read ceiling measured beside the rows (their % of ceiling)"))
    return out


def thread_scaling(ds, palette):
    """Achieved GB/s (PTQ1_0 weight bytes / median time) of every variant against the thread count, one panel per
    GEMV, with the read ceiling at each thread count dashed (bandwidth.jsonl; of several calls, the median of their
    bandwidth files) and the one `hsdr run` measured beside the rows dotted."""
    rows = sweep_rows(ds)
    gemvs = h.shapes(rows)
    ncols = min(3, len(gemvs))
    nrows = math.ceil(len(gemvs) / ncols)
    fig, axes = new_figure(nrows, ncols, size=(max(10, 4.4 * ncols + 1.2), 3.7 * nrows + 1.8))
    ceilings = ceiling_lines(ds, rows)
    threads = h.thread_counts(rows)
    for i, (ax, shape) in enumerate(zip(axes, gemvs)):
        mine = [r for r in rows if h.shape_of(r) == shape]
        for v in q.variant_order(mine):
            pts = sorted((r["threads"], h.gb_per_s(r)) for r in mine if r["variant"] == v)
            ax.plot(*zip(*pts), marker="o", ms=3.5, lw=1.3, color=palette(v))
        for pts, style, _ in ceilings:
            ax.plot(*zip(*pts), **style)
        r0 = mine[0]
        ax.set_title(f"{h.short_shape(shape)} ({r0['K']} x {r0['N']}, {q.fmt_bytes(r0['weight_bytes'])})",
                     fontsize=9)
        log2_axis(ax, threads, "threads")
        plain_log_y(ax)
        ax.grid(alpha=0.3)
        if i % ncols == 0:
            ax.set_ylabel("GB/s of PTQ1_0 weights")
    for ax in axes[len(gemvs):]:
        ax.axis("off")
    handles = [Line2D([], [], color=palette(v), marker="o", ms=4, label=v) for v in q.variant_order(rows)]
    handles += [Line2D([], [], label=textwrap.fill(label, 44), **style) for _, style, label in ceilings]
    set_title(fig, ds, "Thread scaling: achieved GB/s per GEMV", scope(rows))
    footnote(fig, "GB/s = the GEMV's PTQ1_0 weight bytes / median time (a converting variant reads its own layout; "
                  "its figure still counts the PTQ1_0 bytes, as the bytes floor does)")
    if len(axes) > len(gemvs):  # a spare panel holds the legend
        axes[len(gemvs)].legend(handles=handles, loc="center", fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0.04, 1, 0.96))
        return fig
    ncol = min(4, len(handles))
    figure_legend(fig, handles, ncol=ncol, bottom=0.035)
    fig.tight_layout(rect=(0, 0.05 + 0.03 * math.ceil(len(handles) / ncol), 1, 0.96))
    return fig


def offsets(n, spread=0.03):
    """Multiplicative x offsets (log2 axis) that keep n series' error bars apart."""
    return [2 ** (spread * (i - (n - 1) / 2)) for i in range(n)]


def parallel_efficiency(ds, palette):
    """Speedup T(1) / T(n) and parallel efficiency E(n) = T(1) / (n T(n)) of every variant against the thread count:
    the median over the GEMVs, the bar from the lowest to the highest GEMV; dashed, the read ceiling's own
    B(n) / B(1) and B(n) / (n B(1)) from bandwidth.jsonl (of several calls, the median of their bandwidth files): what
    a kernel at the ceiling on one thread could reach."""
    rows = sweep_rows(ds)
    threads = h.thread_counts(rows)
    if len(threads) < 2 or threads[0] != 1:
        raise NoData(f"threads/results.jsonl holds thread counts {', '.join(map(str, threads))}: efficiency needs "
                     f"1 thread and at least one more ({how_to_make('threads/results.jsonl', ds.dir)})")
    cells = h.by_cell(rows)
    gemvs = h.shapes(rows)
    variants = q.variant_order(rows)
    fig, axes = new_figure(1, 2, size=(13, 6.2))
    for ax, measure, ideal, ylabel in ((axes[0], h.speedup, lambda n: n, "speedup T(1) / T(n)"),
                                       (axes[1], h.efficiency, lambda n: 1.0,
                                        "parallel efficiency E(n) = T(1) / (n T(n))")):
        for v, dx in zip(variants, offsets(len(variants))):
            pts = []
            for n in threads:
                values = [x for x in (measure(cells, v, s, n) for s in gemvs) if x is not None]
                if values:
                    pts.append((n * dx, q.median(values), min(values), max(values)))
            if not pts:
                continue
            xs, mid, lo, hi = zip(*pts)
            ax.errorbar(xs, mid, yerr=[[m - a for m, a in zip(mid, lo)], [b - m for m, b in zip(mid, hi)]],
                        marker="o", ms=4, lw=1.3, capsize=2, color=palette(v))
        ax.plot(threads, [ideal(n) for n in threads], color="0.6", lw=1, ls="-.")
        ceiling = h.read_ceilings(ds, rows[0]["mode"])
        if 1 in ceiling and len(ceiling) > 1:
            ts = sorted(ceiling)
            scale = (lambda n: 1.0) if measure is h.speedup else (lambda n: float(n))
            ax.plot(ts, [ceiling[n] / ceiling[1] / scale(n) for n in ts], "k--", lw=1.6)
        log2_axis(ax, threads, "threads")
        ax.set_ylabel(ylabel)
        if measure is h.speedup:  # log2 as x: ideal scaling is the diagonal
            ax.set_yscale("log", base=2)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        else:
            ax.set_ylim(0, None)
        ax.grid(alpha=0.3)
    axes[0].set_title("speedup over 1 thread (median over the GEMVs; bar: lowest to highest)", fontsize=9)
    axes[1].set_title("parallel efficiency (1 = ideal)", fontsize=9)
    handles = [Line2D([], [], color=palette(v), marker="o", ms=4, label=v) for v in variants]
    handles += [Line2D([], [], color="0.6", lw=1, ls="-.", label="ideal (n, 1)")]
    if len(h.read_ceilings(ds, rows[0]["mode"])) > 1:
        several = len([c for c in h.calls(ds) if c.bandwidth]) > 1
        handles += [Line2D([], [], color="k", ls="--", lw=1.6,
                           label="read ceiling: B(n) / B(1), B(n) / (n B(1)) ("
                                 + ("median over the calls' bandwidth files" if several else "bandwidth.jsonl") + ")")]
    figure_legend(fig, handles, ncol=min(5, len(handles)), bottom=0.02)
    set_title(fig, ds, "Parallel efficiency per variant",
              f"{scope(rows)}; {len(gemvs)} GEMV{'s' if len(gemvs) > 1 else ''} "
              f"({', '.join(h.short_shape(s) for s in gemvs)})")
    rows_of_legend = math.ceil(len(handles) / min(5, len(handles)))
    fig.tight_layout(rect=(0, 0.03 + 0.03 * rows_of_legend, 1, 0.95))
    return fig


# name, subject (placeholder titles, report captions), function; in report order
HOST_FIGURES = [
    ("thread-scaling.png", "Thread scaling per GEMV against the read ceiling", thread_scaling),
    ("parallel-efficiency.png", "Parallel efficiency per variant", parallel_efficiency),
]
