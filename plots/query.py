"""Views of the results shared by the figures and the report: the run context and machine label, the orders of
variants and stages, the configurations (shape or K, N, threads, mode, distribution) and the selections the figures
plot. Variant and stage lists come from the rows themselves (in the order `hsdr run` writes them, which is the
registry's), never from a second list kept here."""
import math
import os
from collections import Counter
from typing import NamedTuple


def ok_rows(rows):
    """The timed rows (validation passed, a median exists)."""
    return [r for r in rows if r["status"] == "ok"]


def one_column(rows):
    """The rows of one activation column (cols = 1), the GEMV that every variant computes: what the figures and the
    answers compare. Rows with cols > 1 have a section of their own (multi_column_rows)."""
    return [r for r in rows if r["cols"] == 1]


def multi_column_rows(ds):
    """The rows of the columns section: every row (any status) of a variant that results.jsonl holds with cols > 1,
    then the lines of columns-<model>.jsonl files of older runs as rows (load.columns_line_as_row)."""
    several = {r["variant"] for r in ds.rows if r["cols"] > 1}
    return [r for r in ds.rows if r["variant"] in several] + ds.old_column_rows


def median_ns(row):
    return row["time_ns"]["median"]


def over_floor(row):
    """Median time / bytes floor of a timed row (1 = at the floor), None without a floor."""
    floor = row["bytes_floor_ns"]
    return median_ns(row) / floor if floor is not None and floor > 0 else None


def ratio_ci(row):
    """(lo, hi) of a row's ratio_to_production (95% bootstrap over the timing rounds), or None: absent on rows of
    hsdr-results/1 and wherever the ratio is null."""
    ci = row.get("ratio_to_production_ci")
    return tuple(ci) if ci else None


def unique(values):
    """values without repeats, in first-seen order."""
    return list(dict.fromkeys(values))


def median(values):
    values = sorted(values)
    n = len(values)
    return None if not n else (values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2)


def geomean(values):
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


# ---- run context and labels ----

def context(ds):
    """The run's context block (identical on every row); else the first of the other inputs' (the quality studies',
    a host study's other files'); {} when none carries one."""
    for r in ds.rows:
        if r.get("context"):
            return r["context"]
    others = [(ds.quality or {}).get("context"), (ds.quality_real or {}).get("context")] + ds.other_contexts
    return next((c for c in others if c), {})


def devices(ds):
    """The accelerators the rows ran on (their "device" field), in order of first appearance."""
    return unique(r["device"] for r in ds.rows if r.get("device"))


def machine_label(ds):
    """Short machine name for titles: the results directory's name and the CPU model, or the device of device
    rows (its name: the text up to the first comma)."""
    name = os.path.basename(os.path.normpath(os.path.abspath(ds.dir)))
    devs = devices(ds)
    if devs:
        return f"{name} ({', '.join(d.split(',')[0] for d in devs)})"
    cpu = context(ds).get("cpu_model")
    cores = context(ds).get("cores")
    if cpu and cores:
        return f"{name} ({cpu}, {cores} cores)"
    return f"{name} ({cpu})" if cpu else name


def variant_order(rows):
    return unique(r["variant"] for r in rows)


def backend_of(rows):
    """variant -> backend."""
    return {r["variant"]: r["backend"] for r in rows}


def family_of(rows):
    """variant -> family."""
    return {r["variant"]: r["family"] for r in rows}


def stage_order(rows):
    """Every stage name seen, in the canonical order the rows list them (each row's stages are a sub-sequence of
    the canonical list: a name new to the merged list is placed right after its predecessor in that row)."""
    order = []
    for r in rows:
        previous = None
        for stage in r.get("stages") or {}:
            if stage not in order:
                order.insert(order.index(previous) + 1 if previous else 0, stage)
            previous = stage
    return order


def bytes_per_weight(rows):
    """PTQ1_0 bytes per weight, from the rows' weight_bytes / (N K) (1.75 bits: 28 bytes per 128 weights)."""
    for r in ok_rows(rows):
        return r["weight_bytes"] / (r["N"] * r["K"])
    return None


def cache_crossing_K(cache_bytes, n_rows, bytes_per_weight_):
    """The K at which an n_rows x K PTQ1_0 matrix fills cache_bytes."""
    return cache_bytes / (n_rows * bytes_per_weight_)


def fmt_bytes(n):
    """1.5 MiB style size."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


# the families a "best baseline" is chosen from
BASELINE_FAMILIES = ("production", "baseline")


def floor_share(token):
    """A profile variant's token as a fraction of its floor (floor time / measured time)."""
    return token["floor_ms_per_token_measured"] / token["ms_per_token_measured"]


def floor_tokens_per_s(profile_variant):
    """The tokens/s of the bytes floor of an `hsdr profile` variant's measured layers (None without a floor)."""
    ms = profile_variant["floor_ms_per_token_measured"]
    return 1000 / ms if ms > 0 else None


# ---- configurations ----

class Config(NamedTuple):
    """One input configuration: what every variant of a comparison shares."""
    shape: str
    K: int
    N: int
    threads: int
    mode: str
    distribution: str

    def label(self, short=False):
        """'ffn_gate (5120x17408), 1 thread, cold, bonsai' or 'K=1024 N=64, 1 thread, hot, gaussian'; short
        leaves out the distribution and a shape's size: 'ffn_gate, 1 thread, cold'."""
        what = self.shape.split("/")[-1] if self.shape else f"K={self.K} N={self.N}"
        if self.shape and not short:
            what += f" ({self.K}x{self.N})"
        text = f"{what}, {self.threads} thread{'s' if self.threads > 1 else ''}, {self.mode}"
        return text if short else f"{text}, {self.distribution}"


def config_of(row):
    """The configuration of a results row (or of a breakeven.json row: same fields)."""
    return Config(row["shape"], row["K"], row["N"], row["threads"], row["mode"], row["distribution"])


def configs(rows):
    """The configurations of rows, in first-seen order of shape then threads, mode, distribution."""
    found = unique(config_of(r) for r in rows)
    shape_rank = {s: i for i, s in enumerate(unique(c.shape for c in found))}
    return sorted(found, key=lambda c: (shape_rank[c.shape], c.K, c.threads, c.mode, c.distribution))


class Focus(NamedTuple):
    """The rows the per-variant answers use: the model-shape cases, or (when the run has none) the largest K swept."""
    rows: list
    configs: list
    model_shapes: bool
    label: str  # what the selection is, for titles and the report


def focus(rows):
    """R = 1, one-column rows at the model shapes; failing that, at the largest K of the sweep (labelled as such)."""
    timed = [r for r in one_column(ok_rows(rows)) if r["R"] == 1]
    shaped = [r for r in timed if r["shape"]]
    if shaped:
        models = ", ".join(unique(r["shape"] for r in shaped))
        return Focus(shaped, configs(shaped), True, f"model shapes ({models})")
    if not timed:
        return Focus([], [], False, "no timed rows")
    k = max(r["K"] for r in timed)
    chosen = [r for r in timed if r["K"] == k]
    return Focus(chosen, configs(chosen), False, f"largest K swept (K={k})")


def sweep(rows):
    """The K-sweep rows: timed, no model shape, R = 1, one column, the sweep's (most common) N."""
    timed = [r for r in one_column(ok_rows(rows)) if r["R"] == 1 and not r["shape"]]
    if not timed:
        return []
    n = Counter(r["N"] for r in timed).most_common(1)[0][0]
    return [r for r in timed if r["N"] == n]


def sweep_distribution(rows):
    """The distribution that covers the most K values of rows (the first seen on a tie)."""
    ks = {}
    for r in rows:
        ks.setdefault(r["distribution"], set()).add(r["K"])
    return max(ks, key=lambda d: len(ks[d])) if ks else None


def fast_backends(rows):
    """The backends other than the scalar reference (the ones whose speed is the question), in first-seen order."""
    return [b for b in unique(r["backend"] for r in rows) if b != "reference"]


def stage_alone_ns(row, order):
    """[(stage, alone_ns)] of a row's measured stages, in canonical order; 'convert' is one-off and never listed."""
    stages = row.get("stages") or {}
    return [(s, stages[s]["alone_ns"]) for s in order if s in stages and stages[s].get("alone_ns") is not None
            and s != "convert"]


def dominant_stage(row, order):
    """(stage, share of the sum of alone times) of the largest isolated stage, or (None, None)."""
    times = stage_alone_ns(row, order)
    total = sum(t for _, t in times)
    if not times or total <= 0:
        return None, None
    stage, t = max(times, key=lambda st: st[1])
    return stage, t / total
