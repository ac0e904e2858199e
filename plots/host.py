"""Views of a host study folder (scripts/cpu-host.sh; load.HostDataset) shared by its figures (host_figures.py) and
its report (host_report.py), beside query.py's (context, machine label, variant order): the calls of the script the
folder holds, the timed rows of the threads sweep by variant, shape and thread count, the read ceiling per thread
count and the cache-hot reads, parallel efficiency, and the per-GEMV view of a profile. Every number is computed from
the files; the variant list comes from the rows (registry order), then the profiles."""
import glob
import os
import re
from dataclasses import dataclass

import load
import query as q

# PTQ1_0 as stored: a block of 128 weights is 28 bytes (shared/spec/ptq1_0.md); the bytes of the profile's floor
PTQ1_0_BLOCK_BYTES = 28
PTQ1_0_BLOCK_WEIGHTS = 128
# a GEMV under this share of its read ceiling is flagged in the report
LOW_SHARE_OF_CEILING = 0.60


# ---- the calls of the script ----

# a folder may hold several calls of scripts/cpu-host.sh on one machine: the first call's bandwidth.jsonl,
# handoff.jsonl and cpu-host.log (load.HostDataset), a later call's as bandwidth-N.jsonl, handoff-N.jsonl and
# cpu-host-N.log (N = 2, 3, ..); the profiles and the sweep's rows of every call share the folder's names
CALL_FILE = re.compile(r"^(?:bandwidth|handoff|cpu-host)-(\d+)\.(?:jsonl|log)$")


@dataclass(eq=False)  # one object per call: hashed and compared by identity
class Call:
    """One call of scripts/cpu-host.sh: its number (1: the unnumbered files), its files' suffix ("" or "-N"), its
    read ceilings (bandwidth lines), hand-off lines and log; None where its file is absent."""
    number: int
    suffix: str
    bandwidth: list | None
    handoff: list | None
    log: str | None

    @property
    def label(self):
        return f"call {self.number}"

    def file(self, base):
        """'bandwidth.jsonl' -> this call's name of it ('bandwidth-2.jsonl')."""
        stem, dot, ext = base.partition(".")
        return f"{stem}{self.suffix}{dot}{ext}"

    @property
    def contexts(self):
        lines = (self.bandwidth or []) + (self.handoff or [])
        return [x["context"] for x in lines if isinstance(x.get("context"), dict)]

    @property
    def started(self):
        """The earliest start its files record (their context), None without; the calls' order in time."""
        return min((c["started"] for c in self.contexts if c.get("started")), default=None)


def _read_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _optional(path, reader):
    return reader(path) if os.path.exists(path) else None


def calls(ds):
    """[Call] of the folder: call 1 from the dataset's own files, then every N of a bandwidth-N.jsonl,
    handoff-N.jsonl or cpu-host-N.log, in order of N (read once, kept on ds; load.InputError when one is malformed)."""
    cached = getattr(ds, "_host_calls", None)
    if cached is not None:
        return cached
    numbers = sorted({int(m.group(1)) for m in (CALL_FILE.match(os.path.basename(p))
                                                for p in glob.glob(os.path.join(glob.escape(ds.dir), "*-*")))
                      if m and int(m.group(1)) >= 2})
    out = [Call(1, "", ds.bandwidth, ds.handoff, ds.log)]
    try:
        for n in numbers:
            out.append(Call(n, f"-{n}", _optional(os.path.join(ds.dir, f"bandwidth-{n}.jsonl"), load.load_bandwidth),
                            _optional(os.path.join(ds.dir, f"handoff-{n}.jsonl"), load.load_handoff),
                            _optional(os.path.join(ds.dir, f"cpu-host-{n}.log"), _read_text)))
    except OSError as e:
        raise load.InputError(f"{e.filename}: {e.strerror}") from None
    ds._host_calls = out  # a plain attribute: HostDataset is a dataclass without slots
    return out


def several_calls(ds):
    return len(calls(ds)) > 1


def call_of(ds, context):
    """The Call a file of the folder belongs to by its context: the last call started at or before the context's start
    (its files record when each process started); None with one call, or when the times are not recorded."""
    started = (context or {}).get("started") if isinstance(context, dict) else None
    timed = [c for c in calls(ds) if c.started]
    if len(calls(ds)) < 2 or not started or len(timed) < len(calls(ds)):
        return None
    mine = [c for c in sorted(timed, key=lambda c: c.started) if c.started <= started]
    return mine[-1] if mine else None


def rows_by_call(ds, rows):
    """[(Call, or None where a row records no start time, [rows])]: the rows of each call, in call order, None last."""
    groups = {}
    for r in rows:
        groups.setdefault(call_of(ds, r.get("context")), []).append(r)
    return sorted(groups.items(), key=lambda kv: kv[0].number if kv[0] else float("inf"))


def bandwidth_lines(ds):
    """Every call's bandwidth lines, in call order."""
    return [x for c in calls(ds) for x in c.bandwidth or []]


def all_variants(ds):
    """Every variant named in the folder, the rows' (registry) order first, so colours agree across figures."""
    return q.unique(q.variant_order(ds.rows) + [v["variant"] for p in ds.profiles for v in p.doc["variants"]])


# ---- the threads sweep ----

def timed(ds):
    """The timed rows of the sweep: status ok, R = 1, one column."""
    return [r for r in q.one_column(q.ok_rows(ds.rows)) if r["R"] == 1]


def shapes(rows):
    """The GEMVs (shape, else 'K=.. N=..') of rows in first-seen order."""
    return q.unique(shape_of(r) for r in rows)


def shape_of(row):
    return row["shape"] or f"K={row['K']} N={row['N']}"


def short_shape(shape):
    """'bonsai2-27b/ffn_gate' -> 'ffn_gate'."""
    return shape.split("/")[-1]


def thread_counts(rows):
    return sorted({r["threads"] for r in rows})


def by_cell(rows):
    """(variant, shape, threads) -> row (the first, should a case repeat)."""
    out = {}
    for r in rows:
        out.setdefault((r["variant"], shape_of(r), r["threads"]), r)
    return out


def gb_per_s(row):
    """Achieved GB/s of PTQ1_0 weight bytes: weight_bytes / median time (a converting variant reads its own
    layout, but the floor and this figure count the PTQ1_0 bytes)."""
    return row["weight_bytes"] / q.median_ns(row)


def share_of_ceiling(row):
    """bytes floor / median time: the row's % of the read ceiling measured beside it, as a fraction; None without."""
    floor = row["bytes_floor_ns"]
    return floor / q.median_ns(row) if floor else None


def efficiency(cells, variant, shape, n):
    """Parallel efficiency E(n) = T(1) / (n T(n)) of one variant on one GEMV; None without both times."""
    one, many = cells.get((variant, shape, 1)), cells.get((variant, shape, n))
    if not one or not many:
        return None
    return q.median_ns(one) / (n * q.median_ns(many))


def speedup(cells, variant, shape, n):
    """T(1) / T(n); None without both times."""
    e = efficiency(cells, variant, shape, n)
    return None if e is None else e * n


# ---- read ceilings per thread count ----

def read_ceilings(ds, mode=None, lines=None):
    """threads -> the median bytes_per_s of the bandwidth lines of that thread count (of `mode` when given and
    measured; else of every mode): `lines`, else every call's (bandwidth.jsonl, bandwidth-N.jsonl); {} without."""
    lines = bandwidth_lines(ds) if lines is None else lines
    if mode and any(x["mode"] == mode for x in lines):
        lines = [x for x in lines if x["mode"] == mode]
    out = {}
    for x in lines:
        out.setdefault(x["threads"], []).append(x["bytes_per_s"])
    return {t: q.median(v) for t, v in sorted(out.items())}


# a hot read whose share per thread is at most this stays in each core's own cache (without the context's L2 size)
CORE_CACHE_BYTES = 1 << 20


@dataclass
class HotSeries:
    """Cache-hot reads of one call across thread counts. per_thread: each thread read `size` bytes (the working set
    grew with the count: the cores' own scaling); else `size` bytes in all, split over the threads by `hsdr bandwidth`
    (size / n each: the fixed cost of a pass grows in share, so its ratios are not the cores' scaling)."""
    call: Call
    per_thread: bool
    size: int
    gb_per_s: dict  # threads -> median GB/s

    def ratio(self, n):
        """B(n) / B(1), None without both."""
        one, many = self.gb_per_s.get(1), self.gb_per_s.get(n)
        return many / one if one and many else None


def hot_series(ds):
    """[HotSeries] of every call's hot reads that fit each core's own cache (a share per thread of at most the
    context's L2, else CORE_CACHE_BYTES): lines of one size per thread at 1 thread and at least one more count form
    a per-thread series (scripts/cpu-host.sh since the 16 KiB-per-thread probe); lines of one total size at 1 thread
    and more, a split series (its earlier probe: one 16 KiB over all the threads). Per call, per-thread first."""
    out = []
    for c in calls(ds):
        l2 = next((ctx["caches"].get("L2") for ctx in c.contexts if (ctx.get("caches") or {}).get("L2")), None)
        lines = [x for x in c.bandwidth or [] if x["mode"] == "hot"
                 and x["bytes"] / x["threads"] <= (l2 or CORE_CACHE_BYTES)]
        for per_thread in (True, False):
            groups = {}
            for x in lines:
                size = round(x["bytes"] / x["threads"]) if per_thread else x["bytes"]
                groups.setdefault(size, {}).setdefault(x["threads"], []).append(x["bytes_per_s"] / 1e9)
            for size, by_n in sorted(groups.items()):
                if 1 in by_n and len(by_n) > 1:
                    out.append(HotSeries(c, per_thread, size, {n: q.median(v) for n, v in sorted(by_n.items())}))
    return out


def row_ceilings(rows):
    """threads -> the median ceiling_bytes_per_s of the rows of that thread count (the read `hsdr run` measured
    beside them, against which their pct_of_ceiling is taken)."""
    out = {}
    for r in rows:
        if r.get("ceiling_bytes_per_s"):
            out.setdefault(r["threads"], []).append(r["ceiling_bytes_per_s"])
    return {t: q.median(v) for t, v in sorted(out.items())}


# ---- profiles ----

# (build, split) -> what the group is, in report order
PROFILE_GROUPS = {("before", "all"): "before (the older build)", ("after", "all"): "after (this build)",
                  ("before", "auto"): "before, --split auto", ("after", "auto"): "after, --split auto",
                  ("after", "tune"): "after, --split tune"}
# the splits other than "all" that a profile may have run (profile --split), in report order
OTHER_SPLITS = ("auto", "tune")


def profile_groups(ds):
    """[((build, split), label, [HostProfile])] in PROFILE_GROUPS order, then any other (build, split) seen."""
    keys = list(PROFILE_GROUPS) + q.unique((p.build, p.split) for p in ds.profiles)
    out = []
    for key in q.unique(keys):
        mine = [p for p in ds.profiles if (p.build, p.split) == key]
        if mine:
            out.append((key, PROFILE_GROUPS.get(key, f"{key[0]} build, split {key[1]}"), mine))
    return out


def host_ceiling(doc):
    """The host CPU's read ceiling of a profile (bytes/s): host_ceiling_bytes_per_s, or ceiling_bytes_per_s in files
    before 2026-12; None when neither."""
    return doc.get("host_ceiling_bytes_per_s") or doc.get("ceiling_bytes_per_s")


def rotation_label(doc):
    """How cold the token was, as the file says: rotation.label; an older file's "cold" flag; else unknown."""
    label = (doc.get("rotation") or {}).get("label")
    if label:
        return label
    return {True: "cold (older file: no rotation label)", False: "not cold (older file: no rotation label)"}.get(
        doc.get("cold"), "cold/hot not recorded")


def variant_of(doc, name):
    return next((v for v in doc["variants"] if v["variant"] == name), None)


def ptq1_0_bytes(gemv):
    """A GEMV's PTQ1_0 weight bytes as stored: K N / 128 blocks of 28 bytes."""
    return gemv["K"] * gemv["N"] // PTQ1_0_BLOCK_WEIGHTS * PTQ1_0_BLOCK_BYTES


def per_tensor(doc, variant):
    """One profile variant's GEMVs summed per tensor over the measured layers, in first-seen order:
    [{tensor, K, N, gemvs, bytes, ns, threads (sorted thread counts, [] in older files), floor_ns, share}]; floor_ns =
    bytes / the variant's ceiling in the file (the host's read for a CPU variant; older files: the profile's one) and
    share = floor_ns / ns (None without a ceiling); [] without per_gemv."""
    v = variant_of(doc, variant)
    ceiling = (v or {}).get("ceiling_bytes_per_s") or host_ceiling(doc)
    out = {}
    for g in (v or {}).get("per_gemv") or []:
        t = out.setdefault(g["tensor"], {"tensor": g["tensor"], "K": g["K"], "N": g["N"], "gemvs": 0, "bytes": 0,
                                         "ns": 0.0, "threads": set()})
        t["gemvs"] += 1
        t["bytes"] += ptq1_0_bytes(g)
        t["ns"] += g["mean_ns"]
        if g.get("threads") is not None:
            t["threads"].add(g["threads"])
    for t in out.values():
        t["threads"] = sorted(t["threads"])
        t["floor_ns"] = t["bytes"] / ceiling * 1e9 if ceiling else None
        t["share"] = t["floor_ns"] / t["ns"] if t["floor_ns"] and t["ns"] > 0 else None
    return list(out.values())


def best_baseline(ds, profiles):
    """(variant, whether families were known) of the lowest median ms/token over `profiles` among the baseline
    families (from the rows); every variant when the rows name no family for them."""
    family = q.family_of(ds.rows)  # profiles carry no family
    names = q.unique(v["variant"] for p in profiles for v in p.doc["variants"])
    baselines = [n for n in names if family.get(n) in q.BASELINE_FAMILIES]
    candidates = baselines or names
    if not candidates:
        return None, bool(baselines)

    def ms(name):
        return q.median([variant_of(p.doc, name)["ms_per_token_measured"] for p in profiles
                         if variant_of(p.doc, name)]) or float("inf")

    return min(candidates, key=ms), bool(baselines)
