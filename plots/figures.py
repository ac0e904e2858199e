"""The figures, one function each: figure(ds, palette) -> matplotlib Figure, or raise NoData(what is missing and
which command produces it); FIGURES lists them in report order. Every title names the machine, the timing mode and
the thread count (or says why they do not apply)."""
import math
import textwrap

import matplotlib

matplotlib.use("Agg")  # headless: never open a window
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator  # noqa: E402

import query as q  # noqa: E402
from load import how_to_make  # noqa: E402
from numfmt import duration, pct, sci, sig, time_unit  # noqa: E402

DPI = 120
FIGSIZE = (10, 6)


class NoData(Exception):
    """The figure's input is absent; the message says what is missing and which command produces it."""


# ---- shared helpers ----

class Palette:
    """One colour per variant, the same in every figure. The fast (non-reference) variants get distinct colours in
    registry order; a reference variant takes the colour of the fast variant of its family (they never share a
    panel), or the next free colour."""

    def __init__(self, variants, family_of, backend_of):
        fast = [v for v in variants if backend_of.get(v) != "reference"]
        cmap = plt.get_cmap("tab10" if len(fast) <= 10 else "tab20")
        # tab10's grey (index 7) last: grey reads as "unimportant"
        order = ([i for i in range(10) if i != 7] + [7]) if cmap.N == 10 else list(range(cmap.N))
        self.colors = {v: cmap(order[i % cmap.N]) for i, v in enumerate(fast)}
        free = len(fast)
        for v in variants:
            if v in self.colors:
                continue
            twin = next((f for f in fast if family_of.get(f) == family_of.get(v)), None)
            if twin:
                self.colors[v] = self.colors[twin]
            else:
                self.colors[v], free = cmap(order[free % cmap.N]), free + 1

    def __call__(self, variant):
        return self.colors.get(variant, "0.4")


def distribution_colors(ds):
    """One colour per activation distribution, the same in the error and states figures."""
    names = q.unique([s["distribution"] for s in ds.states or []] + [r["distribution"] for r in ds.rows])
    cmap = plt.get_cmap("Dark2")
    return {d: cmap(i % cmap.N) for i, d in enumerate(names)}


def stage_colors(stages):
    cmap = plt.get_cmap("Set2")
    return {s: cmap(i % cmap.N) for i, s in enumerate(stages)}


def new_figure(nrows=1, ncols=1, size=FIGSIZE, **kw):
    fig, axes = plt.subplots(nrows, ncols, figsize=size, dpi=DPI, squeeze=False, **kw)
    return fig, [ax for row in axes for ax in row]


def scope(rows):
    """'hot/cold, threads 1, 2' from the rows' modes and thread counts."""
    modes = "/".join(q.unique(r["mode"] for r in rows)) or "-"
    threads = sorted({r["threads"] for r in rows})
    t = f"{threads[0]}" if len(threads) == 1 else ", ".join(map(str, threads))
    return f"{modes}, threads {t}"


def set_title(fig, ds, subject, detail):
    """Figure title: subject and its scope (wrapped when long), then the machine."""
    text = "\n".join(textwrap.wrap(f"{subject} — {detail}", 120))
    fig.suptitle(f"{text}\n{q.machine_label(ds)}", fontsize=11)


def log2_axis(ax, values, label):
    """Log2 x axis with a tick at every value measured (K, thread counts)."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(sorted(values)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:.0f}"))
    ax.set_xlabel(label)
    ax.margins(x=0.08)


def log2_k_axis(ax, ks):
    log2_axis(ax, ks, "K (weights per row)")


def plain_log_y(ax, scientific=False):
    """Log y axis with labelled ticks at 1, 2 and 5 of each decade (every integer multiple when the data spans
    about a decade or less): plain numbers (0.5, 2, 100), or 2e-5 style. Call after plotting."""
    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    narrow = 0 < lo and hi < 15 * lo
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=range(1, 10) if narrow else (1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: sci(y) if scientific else sig(y, 2)))


def log_bars_y(ax, values, scientific=False):
    """Log y axis for bars (which start at 0): limits from the positive values shown, then labelled ticks."""
    positive = [v for v in values if v and v > 0]
    ax.set_yscale("log")
    if positive:
        ax.set_ylim(min(positive) / 2.5, max(positive) * 2.5)
    plain_log_y(ax, scientific)


def figure_legend(fig, handles, ncol=4, bottom=0.0):
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8, frameon=False, bbox_to_anchor=(0.5, bottom))


def footnote(fig, text):
    """Small grey text along the bottom edge of the figure (wrapped to its width)."""
    if text:
        width = int(fig.get_figwidth() * 17)  # characters of 7.5 pt text per inch, roughly
        fig.text(0.5, 0.005, "\n".join(textwrap.wrap(text, width)), ha="center", va="bottom", fontsize=7.5,
                 color="0.3")


def placeholder(ds, subject, message):
    """A figure that says plainly that its data is missing and how to produce it."""
    fig, (ax,) = new_figure()
    ax.axis("off")
    fig.suptitle(f"{subject}: no data\n{q.machine_label(ds)}", fontsize=13)
    ax.text(0.5, 0.5, "\n".join(textwrap.wrap(f"no data: {message}", 70)), ha="center", va="center", fontsize=12,
            transform=ax.transAxes, bbox={"boxstyle": "round", "facecolor": "#fff3cd", "edgecolor": "#c9a227"})
    return fig


def fast_rows_or_all(rows):
    """(rows of the non-reference backends, note on what was left out); all rows when there are no others."""
    backends = set(q.fast_backends(rows))
    fast = [r for r in rows if r["backend"] in backends]
    if not fast:
        return rows, ""
    left = q.unique(r["variant"] for r in rows if r["backend"] not in backends)
    return fast, (f"scalar reference variants not shown ({len(left)}: slow by design, they check correctness)"
                  if left else "")


# ---- 1. stages ----

def stages(ds, palette):
    """Per-stage isolated times (stacked) and the measured full-kernel median per variant, at the model shapes (or,
    when the run has none, at the largest K swept; the title says which)."""
    focus = q.focus(ds.rows)
    if not focus.rows:
        raise NoData(f"no timed R = 1 rows in results.jsonl ({how_to_make('results.jsonl', ds.dir)})")
    rows, note = fast_rows_or_all(focus.rows)
    order = q.stage_order(ds.rows)
    colors = stage_colors(order)
    cfgs = q.configs(rows)
    ncols = 2 if len(cfgs) > 1 else 1
    nrows = math.ceil(len(cfgs) / ncols)
    fig, axes = new_figure(nrows, ncols, size=(12, 3.6 * nrows + 1.6))
    div, unit = time_unit(max(q.median_ns(r) for r in rows))
    clipped = False
    for ax, cfg in zip(axes, cfgs):
        clipped |= stage_panel(ax, [r for r in rows if q.config_of(r) == cfg], order, colors, div, unit)
        ax.set_title(cfg.label(), fontsize=9)
    for ax in axes[len(cfgs):]:
        ax.axis("off")
    shown = [s for s in order if any(q.stage_alone_ns(r, [s]) for r in rows)]
    handles = [Patch(color=colors[s], label=f"{s} (alone)") for s in shown]
    handles += [Line2D([], [], color="k", marker="o", ls="", label="full kernel median (p10-p90)")]
    if clipped:
        handles += [Line2D([], [], color="k", marker="^", ls="", label="off scale (median and largest stage written)")]
    figure_legend(fig, handles, ncol=min(len(handles), 5), bottom=0.035)
    missing_shapes = "" if focus.model_shapes else " (this run has no model-shape cases)"
    set_title(fig, ds, f"Stage times at the {focus.label}{missing_shapes}", scope(rows))
    footnote(fig, "; ".join(x for x in ("stages timed alone need not sum to the full kernel", "conv = one-off weight "
                                        "conversion, not stacked", note) if x))
    fig.tight_layout(rect=(0, 0.1, 1, 0.97))
    return fig


def stage_panel(ax, rows, order, colors, div, unit):
    """Stacked alone times per variant; the median as a dot; bars far above the rest are clipped and labelled.
    Returns whether a bar was clipped."""
    heights = [max(sum(t for _, t in q.stage_alone_ns(r, order)), q.median_ns(r)) / div for r in rows]
    cap = clip_height(heights)
    # room for the p90 whiskers of the bars shown, within reason
    cap = max([cap] + [min(1.3 * cap, 1.05 * r["time_ns"]["p90"] / div) for r, h in zip(rows, heights) if h <= cap])
    for x, r in enumerate(rows):
        bottom = 0.0
        for stage, t in q.stage_alone_ns(r, order):
            ax.bar(x, t / div, bottom=bottom, color=colors[stage], width=0.7, edgecolor="white", linewidth=0.4)
            bottom += t / div
        t = r["time_ns"]
        median = t["median"] / div
        if heights[x] <= cap:
            ax.errorbar(x, median, yerr=[[median - t["p10"] / div], [t["p90"] / div - median]], fmt="o", color="k",
                        markersize=4, capsize=2, zorder=5)
            continue
        # off the scale: an arrow at the top, and the numbers written up the clipped bar
        stage, share = q.dominant_stage(r, order)
        ax.plot(x, cap, "^", color="k", ms=6, zorder=5, clip_on=False)
        ax.text(x, cap * 0.5, f"median {sig(median)} {unit}, {stage} {share:.0%}", rotation=90, ha="center",
                va="center", fontsize=7, zorder=6,
                bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "none", "pad": 1.5})
    ax.set_ylim(0, cap)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([tick_label(r) for r in rows], rotation=35, ha="right", fontsize=7.5)
    ax.set_ylabel(f"time per GEMV ({unit})")
    ax.grid(axis="y", alpha=0.3)
    return any(h > cap for h in heights)


def clip_height(heights):
    """y limit: the tallest bar, unless some bars are over 4x the panel's median bar; then just above the rest."""
    typical = sorted(heights)[len(heights) // 2]
    normal = [h for h in heights if h <= 4 * typical]
    return 1.12 * max(normal if len(normal) < len(heights) else heights)


def tick_label(row):
    conv = row.get("convert") or {}
    if conv.get("time_ns") is None:
        return row["variant"]
    return f"{row['variant']}\nconv {duration(conv['time_ns'])}"


# ---- 2. break-even ----

def breakeven(ds, palette):
    """State-set time per row against row reuse R (fit a + b/R) beside the direct variant, per backend."""
    if ds.breakeven is None:
        raise NoData(f"breakeven.json is missing; {how_to_make('breakeven.json', ds.dir)} writes it when the matrix "
                     "sweeps R (two or more values) over direct and state-set variants")
    fitted = [b for b in ds.breakeven if b.get("fit")]
    if not fitted:
        raise NoData("breakeven.json holds no fit: the matrix needs an R axis of two or more values over direct "
                     f"and state-set variants ({how_to_make('breakeven.json', ds.dir)})")
    backend = q.backend_of(ds.rows)
    panels = []  # (backend, config, its breakeven rows)
    for b in q.unique(backend.get(f["stateset"], "?") for f in fitted):
        mine = [f for f in fitted if backend.get(f["stateset"], "?") == b]
        cfg = pick_breakeven_config(mine)
        panels.append((b, cfg, [f for f in mine if q.config_of(f) == cfg]))
    panels.sort(key=lambda p: p[0] == "reference")  # the fast backends first
    fig, axes = new_figure(1, len(panels), size=(max(10, 6.5 * len(panels)), 6))
    for ax, (b, cfg, fits) in zip(axes, panels):
        breakeven_panel(ax, ds, fits, cfg, palette)
        ax.set_title(f"{b} backend: {cfg.label()}", fontsize=9)
    set_title(fig, ds, "State sets vs direct: time per output row against row reuse R",
              "; ".join(f"{b}: {cfg.mode}, threads {cfg.threads}" for b, cfg, _ in panels))
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


def pick_breakeven_config(fits):
    """The most realistic configuration fitted: a model shape, fewest threads, cold, then the largest K."""
    return max((q.config_of(f) for f in fits),
               key=lambda c: (bool(c.shape), -c.threads, c.mode == "cold", c.K, -c.N))


def breakeven_panel(ax, ds, fits, cfg, palette):
    """The fits of one configuration: measured time per row against R, the fitted curves, the direct lines."""
    involved = {f["stateset"] for f in fits} | {f["direct"] for f in fits}
    rows = [r for r in q.ok_rows(ds.rows) if q.config_of(r) == cfg and r["variant"] in involved]
    per_row = {v: sorted((r["R"], q.median_ns(r) / r["N"]) for r in rows if r["variant"] == v)
               for v in q.unique(r["variant"] for r in rows)}
    ymax = max([y for pts in per_row.values() for _, y in pts] + [f["fit"]["direct_ns_per_row"] for f in fits]
               + [f["fit"]["a_ns_per_row"] + max(f["fit"]["b_ns_per_tile_row"], 0) for f in fits])
    div, unit = time_unit(ymax)
    r_max = max([R for pts in per_row.values() for R, _ in pts] + [1])
    crossings = [f["break_even_R"] for f in fits if f.get("break_even_R")]
    r_hi = 2 * max([r_max] + crossings)
    grid = [math.exp(math.log(r_hi) * i / 200) for i in range(201)]
    for direct in q.unique(f["direct"] for f in fits):
        c = next(f["fit"]["direct_ns_per_row"] for f in fits if f["direct"] == direct)
        ax.axhline(c / div, color=palette(direct), lw=2, label=f"{direct} (R-independent): {sig(c / div)} {unit}/row")
    drawn = set()  # a state-set variant fitted against several direct variants: one curve, every verdict
    for f in fits:
        v, fit = f["stateset"], f["fit"]
        a, b = fit["a_ns_per_row"], fit["b_ns_per_tile_row"]
        if v not in drawn:
            drawn.add(v)
            pts = per_row.get(v, [])
            verdicts = "; ".join(f"vs {g['direct']}: {breakeven_text(g)}" for g in fits if g["stateset"] == v)
            ax.plot([R for R, _ in pts], [y / div for _, y in pts], "o", color=palette(v), ms=6)
            ax.plot(grid, [(a + b / R) / div for R in grid], "-", color=palette(v), alpha=0.8,
                    label=f"{v}: a + b/R, a={sig(a / div)}, b={sig(b / div)} {unit}; {verdicts}")
            ax.axhline(a / div, color=palette(v), ls=":", lw=1)
        if f.get("break_even_R"):
            R = f["break_even_R"]
            ax.axvline(R, color=palette(v), ls="--", lw=1)
            ax.annotate(f"R* = {sig(R)}", (R, (a + b / R) / div), xytext=(5, 8), textcoords="offset points",
                        fontsize=8, color=palette(v))
    ax.set_xscale("log", base=2)
    ax.set_xlim(0.8, r_hi)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.set_ylim(0, None)
    ax.set_xlabel("R (weight rows sharing one activation state set)")
    ax.set_ylabel(f"time per output row ({unit})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper right", title="points: measured; dotted: a (R → ∞)", title_fontsize=7.5)


def breakeven_text(f):
    R = f.get("break_even_R")
    return f"break-even R* = {sig(R)}" if R is not None else "never breaks even"


# ---- 3. roofline ----

def roofline(ds, palette):
    """Effective weight bandwidth against K per variant, hot and cold, with the measured ceiling and cache sizes."""
    sweep = q.sweep(ds.rows)
    shapes = [r for r in q.focus(ds.rows).rows if r["shape"]]
    if not sweep and not shapes:
        raise NoData(f"no timed R = 1 rows in results.jsonl ({how_to_make('results.jsonl', ds.dir)})")
    dist = q.sweep_distribution(sweep)
    sweep, note = fast_rows_or_all([r for r in sweep if r["distribution"] == dist] or sweep)
    shapes = [r for r in shapes if r["backend"] in {s["backend"] for s in sweep}] if sweep else shapes
    modes = q.unique(r["mode"] for r in sweep + shapes)
    fig, axes = new_figure(1, len(modes), size=(max(10, 7 * len(modes)), 6.5), sharey=True)
    notes = [note]
    for ax, mode in zip(axes, modes):
        notes.append(roofline_panel(ax, ds, [r for r in sweep if r["mode"] == mode],
                                    [r for r in shapes if r["mode"] == mode], palette))
        ax.set_title(f"{mode}: K sweep" + (f" (N={sweep[0]['N']}, {dist})" if sweep else "")
                     + (" + model shapes (hollow)" if any(r["mode"] == mode for r in shapes) else ""), fontsize=9)
    handles = [Line2D([], [], color=palette(v), marker="o", label=v) for v in q.variant_order(sweep + shapes)]
    handles += [Line2D([], [], color="k", ls="--", marker="_", ms=10, label="measured read ceiling")]
    for t in sorted({r["threads"] for r in shapes}):
        handles.append(Line2D([], [], color="0.3", marker=thread_marker(t), ls="", mfc="none",
                              label=f"model shape, {t} thread{'s' if t > 1 else ''} (right of its K)"))
    set_title(fig, ds, "Effective PTQ1_0 weight bandwidth", scope(sweep + shapes))
    footnote(fig, "; ".join(n for n in q.unique(notes) if n))
    figure_legend(fig, handles, ncol=min(6, len(handles)), bottom=0.02)
    fig.tight_layout(rect=(0, 0.1, 1, 0.97))
    return fig


def thread_marker(threads):
    return {1: "o", 2: "s", 4: "^"}.get(threads, "D")


def roofline_panel(ax, ds, sweep, shapes, palette):
    """One mode's K sweep, model-shape points and ceilings; returns the note on caches off the K range."""
    for (v, t) in q.unique((r["variant"], r["threads"]) for r in sweep):
        pts = sorted((r["K"], r["gb_per_s"]) for r in sweep if r["variant"] == v and r["threads"] == t)
        ax.plot(*zip(*pts), marker="o", color=palette(v), ms=3.5, lw=1.3, ls=threads_style(t))
    for t in q.unique(r["threads"] for r in sweep):
        ceil = {}
        for r in sweep:
            if r["threads"] == t and r["ceiling_bytes_per_s"] is not None:  # null: the ceiling was not measured
                ceil.setdefault(r["K"], []).append(r["ceiling_bytes_per_s"] / 1e9)
        ks = sorted(ceil)
        ax.plot(ks, [sum(ceil[k]) / len(ceil[k]) for k in ks], "k--", lw=1.5)
    # model shapes: hollow markers just right of their K (one column per thread count), with their own ceilings
    thread_counts = sorted({r["threads"] for r in shapes})
    for r in shapes:
        x = r["K"] * 2 ** (0.25 * (1 + thread_counts.index(r["threads"])))
        ax.plot(x, r["gb_per_s"], thread_marker(r["threads"]), color=palette(r["variant"]), mfc="none", ms=7,
                mew=1.5)
        if r["ceiling_bytes_per_s"] is not None:
            ax.plot(x, r["ceiling_bytes_per_s"] / 1e9, "_", color="k", ms=14, mew=1.5)
    ks = {r["K"] for r in sweep + shapes}
    log2_k_axis(ax, ks)
    if shapes:
        ax.set_xlim(min(ks) / 1.3, max(ks) * 2 ** (0.25 * len(thread_counts) + 0.25))
    plain_log_y(ax)
    ax.set_ylabel("effective bandwidth (GB/s of PTQ1_0 weights)")
    ax.grid(alpha=0.3)
    return cache_markers(ax, ds, sweep[0]["N"], min(ks), max(ks)) if sweep else ""


def cache_markers(ax, ds, n_rows, k_lo, k_hi):
    """Vertical lines where the N x K weight footprint equals each cache size; returns a note naming those off
    the K range."""
    caches = q.context(ds).get("caches") or {}
    bpw = q.bytes_per_weight(ds.rows)
    off = []
    for name, size in caches.items():
        if not size:
            continue
        k = q.cache_crossing_K(size, n_rows, bpw)
        label = f"{name} {q.fmt_bytes(size)}"
        if k_lo / 1.5 <= k <= k_hi * 1.5:
            ax.axvline(k, color="0.5", ls=":", lw=1.2)
            ax.text(k, 0.98, f" {label}\n K≈{k:.0f}", transform=ax.get_xaxis_transform(), fontsize=7.5,
                    va="top", color="0.3")
        else:
            off.append(f"{label} at K≈{sig(k)}")
    return f"the N={n_rows} weights fill " + ", ".join(off) + " (beyond the K range)" if off else ""


# ---- 4. speedup ----

def speedup(ds, palette):
    """Speedup against the production kernel of the same backend across K, per variant and thread count."""
    sweep, note = fast_rows_or_all(q.sweep(ds.rows))
    dist = q.sweep_distribution(sweep)
    compared = [r for r in sweep if r["distribution"] == dist and r.get("ratio_to_production")]
    shapes = [r for r in fast_rows_or_all([r for r in q.focus(ds.rows).rows if r["shape"]])[0]
              if r.get("ratio_to_production")]
    production = q.unique(r["production_variant"] for r in compared + shapes if r.get("production_variant"))
    sweep = [r for r in compared if r["variant"] not in production]
    shapes = [r for r in shapes if r["variant"] not in production]
    panels = [(f"{m}: K sweep (N={sweep[0]['N']}, {dist})", [r for r in sweep if r["mode"] == m])
              for m in q.unique(r["mode"] for r in sweep)]
    if shapes:
        panels.append((f"model shapes ({scope(shapes)}, {'/'.join(q.unique(r['distribution'] for r in shapes))})",
                       shapes))
    if not panels:
        raise NoData("no timed row has a production row to compare with (ratio_to_production is null everywhere): "
                     "include the production variant of the backend in the matrix")
    fig, axes = new_figure(1, len(panels), size=(max(10, 5.2 * len(panels) + 1), 6.5), sharey=True)
    intervals = False
    for ax, (title, rows) in zip(axes, panels):
        intervals |= speedup_panel(ax, rows, palette)
        ax.set_title(title, fontsize=9)
    if shapes:  # name the tensors under their K
        names = {r["K"]: r["shape"].split("/")[-1] for r in shapes}
        axes[-1].xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{names.get(round(x), '')}\nK={x:.0f}"))
        axes[-1].margins(x=0.15)  # room for the two-line labels at the ends
    axes[0].set_ylabel("speedup vs production (production time / variant time)")
    production = ", ".join(production)
    variants = q.variant_order(sweep + shapes)
    handles = [Line2D([], [], color=palette(v), marker="o", label=v) for v in variants]
    handles += [Line2D([], [], color="0.3", ls=threads_style(t), label=f"{t} thread{'s' if t > 1 else ''}")
                for t in sorted({r["threads"] for r in sweep + shapes})]
    figure_legend(fig, handles, ncol=min(7, len(handles)), bottom=0.02)
    set_title(fig, ds, f"Speedup against {production} (the line at 1; > 1: faster)", scope(sweep + shapes))
    footnote(fig, "; ".join(x for x in ("bars: 95% bootstrap interval over the timing rounds (production timed in the "
                                        "same rounds)" if intervals else "", note) if x))
    fig.tight_layout(rect=(0, 0.1, 1, 0.97))
    return fig


def threads_style(threads):
    return {1: "-", 2: "--", 4: "-."}.get(threads, ":")


def speedup_panel(ax, rows, palette):
    """Speedup (1 / ratio_to_production) against K, a line per variant and thread count, with the interval of
    each ratio as a bar where the rows carry one. Returns whether a bar was drawn."""
    intervals = False
    for v, t in q.unique((r["variant"], r["threads"]) for r in rows):
        mine = sorted((r for r in rows if r["variant"] == v and r["threads"] == t),
                      key=lambda r: (r["K"], -r["ratio_to_production"]))
        ks, speedups = [r["K"] for r in mine], [1 / r["ratio_to_production"] for r in mine]
        ax.plot(ks, speedups, marker="o", ms=3.5, color=palette(v), ls=threads_style(t), lw=1.3)
        bars = [(k, s, q.ratio_ci(r)) for k, s, r in zip(ks, speedups, mine) if q.ratio_ci(r)]
        if bars:  # the ratio's interval [lo, hi] is the speedup's [1/hi, 1/lo]
            ax.errorbar([k for k, _, _ in bars], [s for _, s, _ in bars],
                        yerr=[[max(0.0, s - 1 / hi) for _, s, (_, hi) in bars],
                              [max(0.0, 1 / lo - s) for _, s, (lo, _) in bars]],
                        fmt="none", ecolor=palette(v), elinewidth=1, capsize=2)
            intervals = True
    ax.axhline(1, color="k", lw=1.2)
    log2_k_axis(ax, {r["K"] for r in rows})
    plain_log_y(ax)
    ax.grid(alpha=0.3)
    return intervals


# ---- 5. error ----

def error(ds, palette):
    """Output NMSE against the fp64 exact result per family and distribution, beside production Q8_0's."""
    rows = [r for r in q.one_column(q.ok_rows(ds.rows)) if (r.get("error") or {}).get("nmse") is not None]
    if not rows:
        raise NoData(f"no timed row carries error.nmse ({how_to_make('results.jsonl', ds.dir)})")
    # identical inputs give identical errors: one point per (variant, K, N, distribution, R)
    seen = {}
    for r in rows:
        seen.setdefault((r["variant"], r["K"], r["N"], r["distribution"], r["R"]), r)
    rows = list(seen.values())
    tiny = [f for f in q.unique(r["family"] for r in rows)
            if max(r["error"]["nmse"] for r in rows if r["family"] == f) < 1e-12]
    families = [f for f in q.unique(r["family"] for r in rows) if f not in tiny]
    if not families:
        raise NoData(f"only {', '.join(tiny)} rows carry an error, all below 1e-12 (fp64 rounding): nothing to compare")
    dists = q.unique(r["distribution"] for r in rows)
    fig, (ax,) = new_figure(size=(11, 6))
    width = 0.8 / len(dists)
    colors = distribution_colors(ds)
    # production's reference marker in the production variant's colour, as in the other figures
    production = [r["variant"] for r in rows if r["family"] == "production"]
    prod_color = palette(production[0]) if production else "k"
    for j, d in enumerate(dists):
        for i, f in enumerate(families):
            mine = [r for r in rows if r["family"] == f and r["distribution"] == d]
            if mine:
                error_group(ax, i + (j - (len(dists) - 1) / 2) * width, width, mine, colors[d], prod_color)
    ax.set_xticks(range(len(families)))
    ax.set_xticklabels(families)
    ax.set_xlabel("variant family")
    ax.set_ylabel("output NMSE vs fp64 exact (Σ(y-y*)² / Σy*²)")
    plain_log_y(ax, scientific=True)
    ax.grid(axis="y", alpha=0.3)
    handles = [Patch(color=colors[d], label=f"{d} activations") for d in dists]
    handles += [Line2D([], [], color="k", marker="_", ls="", ms=14, mew=2, label="median of the points"),
                Line2D([], [], color=prod_color, marker="D", ls="", ms=6, mfc="none", mew=1.5,
                       label="production Q8_0 on the same inputs (median)")]
    figure_legend(fig, handles, ncol=len(handles), bottom=0.04)
    detail = f"every K, N, R and variant (points); {len(rows)} distinct inputs; timing mode and threads do not apply"
    set_title(fig, ds, "Output error per family", detail)
    if tiny:
        footnote(fig, f"not shown: {', '.join(tiny)} (NMSE below 1e-12: fp64 rounding only)")
    fig.tight_layout(rect=(0, 0.08, 1, 0.97))
    return fig


def error_group(ax, x, width, rows, color, prod_color):
    """Jittered points of one (family, distribution), their median, and production's median on the same rows."""
    values = sorted(r["error"]["nmse"] for r in rows)
    n = len(values)
    xs = [x + width * 0.6 * ((i + 0.5) / n - 0.5) for i in range(n)]
    ax.scatter(xs, values, s=12, color=color, alpha=0.7, edgecolors="none")
    ax.plot([x - width * 0.4, x + width * 0.4], [values[n // 2]] * 2, color="k", lw=2)
    prod = sorted(r["error"]["production_nmse"] for r in rows if r["error"].get("production_nmse") is not None)
    if prod:
        ax.plot(x, prod[len(prod) // 2], "D", color=prod_color, ms=6, mfc="none", mew=1.5)


# ---- 6. states ----

def states(ds, palette):
    """Histogram of occupied LNS8 states per 128-lane and 64-lane tile, per activation distribution."""
    if ds.states is None:
        raise NoData(f"states.jsonl is missing; produce it with {how_to_make('states.jsonl', ds.dir)}")
    lines = [s for s in ds.states if sum(s.get("hist128") or []) and sum(s.get("hist64") or [])]
    if not lines:
        raise NoData("states.jsonl has no non-empty hist128/hist64 arrays (written by a newer `hsdr states --json`; "
                     f"{how_to_make('states.jsonl', ds.dir)})")
    fig, axes = new_figure(1, 2, size=(12, 5.5))
    for ax, lanes in zip(axes, (128, 64)):
        states_panel(ax, lines, lanes, distribution_colors(ds))
    s = lines[0]
    detail = f"K={s['K']}, {s['vectors']} vectors per distribution (activations only: no timing mode or threads)"
    set_title(fig, ds, "Occupied LNS8 states per tile", detail)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


def states_panel(ax, lines, lanes, colors):
    """Share of tiles against occupied states (hist<lanes>[n] = tiles with n states), one step line per
    distribution, trimmed to the occupied range."""
    key = f"hist{lanes}"
    nonzero = [n for s in lines for n, c in enumerate(s[key]) if c]
    lo, hi = max(0, min(nonzero) - 3), max(nonzero) + 3
    for s in lines:
        color = colors[s["distribution"]]
        total = sum(s[key]) or 1
        mean = s[f"states{lanes}_mean"]
        label = (f"{s['distribution']}: mean {mean:.1f} (p5 {s[f'states{lanes}_p5']:g}, "
                 f"p95 {s[f'states{lanes}_p95']:g}), {total} tiles")
        ax.step(range(len(s[key])), [100 * c / total for c in s[key]], where="mid", color=color, label=label)
        ax.axvline(mean, color=color, ls=":", lw=1)
    ax.set_xlim(lo, hi)
    peak = max(100 * c / (sum(s[key]) or 1) for s in lines for c in s[key])
    ax.set_ylim(0, peak * (1.2 + 0.07 * len(lines)))  # headroom for the legend
    ax.set_xlabel(f"occupied LNS8 states in a {lanes}-lane tile (distinct nonzero magnitudes, of 127)")
    ax.set_ylabel("share of tiles (%)")
    ax.set_title(f"{lanes}-lane tiles (dotted: mean)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper right")


def states_real(ds, palette):
    """Occupied LNS8 states per 128-lane and 64-lane tile on real captured activations (every set together) beside
    the modelled bonsai distribution at each width of the sets (`hsdr states --activations`)."""
    if ds.states_real is None:
        raise NoData(f"states-real.jsonl is missing; produce it with {how_to_make('states-real.jsonl', ds.dir)}")
    every = [s for s in ds.states_real if s["source"] == "real" and s["set"] == "all"]
    modelled = [s for s in ds.states_real if s["source"] == "modelled"]
    lines = ([dict(s, distribution=f"real, {s['sets']} set{'s' if s['sets'] > 1 else ''}") for s in every]
             + [dict(s, distribution=f"modelled bonsai, K={s['K']}") for s in modelled])
    lines = [s for s in lines if sum(s.get("hist128") or []) and sum(s.get("hist64") or [])]
    if not any(s["source"] == "real" for s in lines):
        raise NoData("states-real.jsonl has no line over all real sets with non-empty hist128/hist64 arrays "
                     f"({how_to_make('states-real.jsonl', ds.dir)})")
    cmap = plt.get_cmap("Dark2")
    colors = {s["distribution"]: "k" if s["source"] == "real" else cmap(i % cmap.N) for i, s in enumerate(lines)}
    fig, axes = new_figure(1, 2, size=(12, 5.5))
    for ax, lanes in zip(axes, (128, 64)):
        states_panel(ax, lines, lanes, colors)
    real = lines[0]
    seeds = ", ".join(str(x) for x in q.unique(s["seed"] for s in modelled)) or "-"
    detail = (f"{real['vectors']} real vectors (every token of every set); modelled: "
              f"{', '.join(str(s['vectors']) for s in modelled[:1]) or 0} vectors per width, seed {seeds} "
              f"(activations only: no timing mode or threads)")
    set_title(fig, ds, "Occupied LNS8 states per tile: real activations vs modelled", detail)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


# ---- 7. profile ----

def profile(ds, palette):
    """GEMV-only tokens/s of `hsdr profile` per variant and model, measured and full-model extrapolated."""
    if not ds.profiles:
        raise NoData(f"no profile-<model>.json in the directory; produce one per model with "
                     f"{how_to_make('profile', ds.dir)}")
    models = sorted(ds.profiles, reverse=True)  # by name, reversed: bonsai2-27b, bonsai-8b, bonsai-4b
    fig, axes = new_figure(1, len(models), size=(max(10, 4.5 * len(models)), 6.2), sharey=True)
    for ax, model in zip(axes, models):
        profile_panel(ax, ds.profiles[model], palette)
    axes[0].set_ylabel("tokens per second (GEMVs only)")
    variants = [v for p in ds.profiles.values() for v in p["variants"]]
    extrapolated = any(v.get("tokens_per_s_full_model_extrapolated") for v in variants)
    log_bars_y(axes[0], [v.get(k) for v in variants for k in ("tokens_per_s_measured",
                                                                 "tokens_per_s_full_model_extrapolated")]
               + [q.floor_tokens_per_s(v) for v in variants])
    handles = [Patch(color="0.5", label="measured layers")]
    if extrapolated:
        handles.append(Patch(facecolor="white", edgecolor="0.5", hatch="///", label="full model, extrapolated"))
    handles.append(Line2D([], [], color="k", ls="--", label="bytes floor of the measured layers (weights / ceiling)"))
    if extrapolated:
        handles.append(Line2D([], [], color="k", ls=":", label="bytes floor of the full model"))
    figure_legend(fig, handles, ncol=4)
    threads = sorted({p["threads"] for p in ds.profiles.values()})
    set_title(fig, ds, "hsdr profile: decode tokens/s from GEMVs alone",
              f"threads {', '.join(map(str, threads))}; cold/hot per panel")
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    return fig


def profile_panel(ax, prof, palette):
    """One model: measured (solid) and extrapolated (hatched) tokens/s per variant, the floors as lines."""
    variants = prof["variants"]
    pair = any(v.get("tokens_per_s_full_model_extrapolated") for v in variants)
    offset, width = (0.2, 0.38) if pair else (0.0, 0.6)
    for x, v in enumerate(variants):
        color = palette(v["variant"])
        measured = v["tokens_per_s_measured"]
        ax.bar(x - offset, measured, width, color=color)
        ax.text(x - offset, measured, sig(measured), ha="center", va="bottom", fontsize=7)
        full = v.get("tokens_per_s_full_model_extrapolated")
        if full:
            ax.bar(x + offset, full, width, facecolor="white", edgecolor=color, hatch="///")
            ax.text(x + offset, full, sig(full), ha="center", va="bottom", fontsize=7)
    # the floors depend on the weights and the one ceiling of the run, not on the variant: one line each
    floor = q.floor_tokens_per_s(variants[0]) if variants else None
    full_ms = variants[0].get("floor_ms_per_token_full_model") if variants and pair else None
    for value, style, what in ((floor, "--", "measured layers"), (1000.0 / full_ms if full_ms else None, ":",
                                                                  "full model")):
        if value:
            ax.axhline(value, color="k", ls=style, lw=1.3)
            ax.text(len(variants) - 0.5, value, f"floor, {what}: {sig(value)}", ha="right", va="bottom", fontsize=7)
    ax.set_xticks(range(len(variants)))
    ax.set_xticklabels([v["variant"] for v in variants], rotation=30, ha="right", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    head = " + head" if any(g.get("layer") == -1 for v in variants for g in v.get("per_gemv") or []) else ""
    cold = {True: "cold", False: "not cold (partly cache-resident)", None: "mode unknown"}[prof.get("cold")]
    ax.set_title(f"{prof['model']}: {prof['layers_measured']} of {prof['layers_model']} layers{head} measured\n"
                 f"{cold}, {prof['threads']} thread{'s' if prof['threads'] > 1 else ''}, {prof['tokens']} "
                 f"token{'s' if prof['tokens'] > 1 else ''}", fontsize=9)


# ---- 8. quality ----

def quality(ds, palette):
    """SYNTHETIC model accuracy study: per-layer output NMSE per path, and the final-logits KL divergence."""
    qd = ds.quality
    if qd is None:
        raise NoData(f"quality.json (the synthetic accuracy study) is missing; produce it with "
                     f"{how_to_make('quality.json', ds.dir)}")
    if not qd["paths"]:
        raise NoData("quality.json lists no paths")
    fig, axes = new_figure(1, 2, size=(13, 6), gridspec_kw={"width_ratios": [3, 2]})
    quality_layers(axes[0], qd, palette)
    quality_kl(axes[1], qd, palette)
    handles = [Line2D([], [], color=path_color(p, palette), marker="o", label=path_label(p)) for p in qd["paths"]]
    figure_legend(fig, handles, ncol=min(len(handles), 3))
    synthetic = "SYNTHETIC network (not a trained model)" if qd["synthetic"] else "Model"
    shapes = qd.get("shapes") or {}
    size = ", ".join(f"{k} {shapes[k]}" for k in ("hidden", "ffn", "vocab") if k in shapes)
    if shapes.get("vocab_model") not in (None, shapes.get("vocab")):
        size += f" of {shapes['vocab_model']}"  # a sub-vocabulary head
    detail = (f"{qd['model']} shapes ({size}), {qd['layers']} layers, {qd['seeds']} seeds x {qd['tokens']} tokens, "
              f"threads {qd.get('threads', '?')}; accuracy only, no timing mode")
    set_title(fig, ds, f"{synthetic} accuracy vs exact activations", detail)
    fig.tight_layout(rect=(0, 0.08, 1, 0.96))
    return fig


def path_color(path, palette):
    return palette(path.get("variant") or path["name"])


def path_label(path):
    """'direct (cpu.direct, LNS8 activations)'."""
    what = ", ".join(x for x in (path.get("variant"), path.get("activations") and f"{path['activations']} activations")
                     if x)
    return f"{path['name']} ({what})" if what else path["name"]


def quality_layers(ax, qd, palette):
    n_layers = max((len(p["per_layer"]) for p in qd["paths"]), default=0)
    for p in qd["paths"]:
        layers = sorted(p["per_layer"], key=lambda x: x["layer"])
        xs = [x["layer"] for x in layers] + [n_layers]
        mean = [x["nmse_mean"] for x in layers] + [p["final"]["nmse_mean"]]
        top = [x.get("nmse_max") or m for x, m in zip(layers + [p["final"]], mean)]
        ax.errorbar(xs, mean, yerr=[[0] * len(mean), [t - m for t, m in zip(top, mean)]], marker="o", ms=4,
                    capsize=3, color=path_color(p, palette), label=path_label(p))
    ax.set_xticks(range(n_layers + 1))
    ax.set_xticklabels([str(i) for i in range(n_layers)] + ["logits"])
    ax.set_xlabel("layer output (last: final logits)")
    ax.set_ylabel("NMSE vs exact activations (mean; bar to max)")
    plain_log_y(ax, scientific=True)
    ax.grid(alpha=0.3)
    ax.set_title("per-layer output error", fontsize=9)


def quality_kl(ax, qd, palette):
    paths = qd["paths"]
    for x, p in enumerate(paths):
        f = p["final"]
        kl = f["kl_mean"]
        err = [[0], [(f.get("kl_max") or kl) - kl]]
        ax.bar(x, kl, color=path_color(p, palette), yerr=err, capsize=3)
    ax.set_xticks(range(len(paths)))
    ax.set_xticklabels([f"{p['name']}\ntop-1 {pct(p['final']['top1_agreement'], 3)}" for p in paths], fontsize=8)
    log_bars_y(ax, [p["final"]["kl_mean"] for p in paths] + [p["final"].get("kl_max") for p in paths],
               scientific=True)
    ax.set_ylabel("KL(p_exact || p_path) of the final softmax (nats)")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("final logits: KL mean (bar to max); top-1 agreement with the exact path", fontsize=9)


# name, subject (placeholder titles, report captions), function; in report order
FIGURES = [
    ("stages.png", "Stage attribution", stages),
    ("breakeven.png", "State-set break-even against row reuse", breakeven),
    ("roofline.png", "Effective bandwidth and the measured ceiling", roofline),
    ("speedup.png", "Speedup against production", speedup),
    ("error.png", "Output error per family", error),
    ("states.png", "Occupied LNS8 states per tile", states),
    ("profile.png", "Model decode profile (GEMVs only)", profile),
    ("quality.png", "Synthetic model accuracy", quality),
]
# drawn only when the directory holds a real-model input (docs/real-model.md); shown in the report's Real model section
REAL_FIGURES = [
    ("states-real.png", "Occupied LNS8 states: real activations vs modelled", states_real),
]
