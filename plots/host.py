"""Views of a host study folder (scripts/cpu-host.sh; load.HostDataset) shared by its figures (host_figures.py) and
its report (host_report.py), beside query.py's (context, machine label, variant order): the timed rows of the threads
sweep by variant, shape and thread count, the read ceiling per thread count, parallel efficiency, and the per-GEMV
view of a profile. Every number is computed from the files; the variant list comes from the rows (registry order),
then the profiles."""
import query as q

# PTQ1_0 as stored: a block of 128 weights is 28 bytes (shared/spec/ptq1_0.md); the bytes of the profile's floor
PTQ1_0_BLOCK_BYTES = 28
PTQ1_0_BLOCK_WEIGHTS = 128
# a GEMV under this share of its read ceiling is flagged in the report
LOW_SHARE_OF_CEILING = 0.60


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

def read_ceilings(ds, mode=None):
    """threads -> the median bytes_per_s of bandwidth.jsonl's lines of that thread count (of `mode` when given and
    measured; else of every mode); {} without the file."""
    lines = ds.bandwidth or []
    if mode and any(x["mode"] == mode for x in lines):
        lines = [x for x in lines if x["mode"] == mode]
    out = {}
    for x in lines:
        out.setdefault(x["threads"], []).append(x["bytes_per_s"])
    return {t: q.median(v) for t, v in sorted(out.items())}


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
