"""Read one results directory: results.jsonl (required), breakeven.json, profile-<model>.json, states.jsonl and
quality.json (optional). Every field the plots and the report use is checked here, once, so that the rest of the code
can index without guarding; malformed input raises InputError naming the file, the line and what was expected.
Schemas: docs/results-schema.md (results, breakeven, profile), `hsdr states --json` and hsdr-quality/1."""
import glob
import json
import os
from dataclasses import dataclass, field

# The command that produces each input (DIR: the results directory), quoted where the input is missing.
PRODUCERS = {
    "results.jsonl": "hsdr run matrix.yaml --out DIR",
    "breakeven.json": "hsdr run matrix.yaml --out DIR",  # when the matrix sweeps R over direct and state-set variants
    "profile": "hsdr profile --model MODEL --json DIR/profile-MODEL.json",
    "states.jsonl": "hsdr states --json > DIR/states.jsonl",
    "quality.json": "hsdr quality --json DIR/quality.json",  # the synthetic accuracy study
}


def how_to_make(key, directory):
    """The command producing input `key` for this directory, as Markdown-style code: `hsdr states --json > d/...`."""
    return "`" + PRODUCERS[key].replace("DIR", directory) + "`"


class InputError(Exception):
    """Malformed input; the message starts with 'FILE:LINE:' (or 'FILE:' for a whole-file problem)."""


@dataclass
class Dataset:
    """Everything read from one results directory; optional inputs are None (or empty) when their file is absent."""
    dir: str
    rows: list                                      # results.jsonl rows, in file order
    breakeven: list | None = None                   # breakeven.json "rows"
    profiles: dict = field(default_factory=dict)    # model -> hsdr-profile/1 object
    states: list | None = None                      # states.jsonl lines
    quality: dict | None = None                     # hsdr-quality/1 object
    partial: dict | None = None                     # the "partial" mark of an interrupted run's rows, else None
    columns: dict = field(default_factory=dict)     # model -> hsdr-columns/1 lines (1..8-column CUDA kernel)


# ---- field checks ----

def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_KINDS = {
    "num": _is_num,
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "dict": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
}


def check(obj, spec, where):
    """Check obj against spec {dotted.key: kind}; kind is a _KINDS name, with '?' appended when null or absent is
    allowed. Raises InputError(where + the first bad field)."""
    for key, kind in spec.items():
        optional = kind.endswith("?")
        kind = kind.rstrip("?")
        value, present = obj, True
        for part in key.split("."):
            if isinstance(value, dict) and part in value:
                value = value[part]
            else:
                present = False
                break
        if (not present or value is None) and optional:
            continue
        if not present:
            raise InputError(f"{where}: missing field '{key}'")
        if not _KINDS[kind](value):
            raise InputError(f"{where}: field '{key}' should be {kind}, got {json.dumps(value)[:60]}")


def _expect_schema(obj, schema, where):
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object")
    if obj.get("schema") != schema:
        raise InputError(f"{where}: schema {obj.get('schema')!r}, expected {schema!r}")


# ---- readers ----

def _read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_json_lines(path):
    """[(line number, object)] of a JSON Lines file; blank lines are skipped."""
    out = []
    for n, line in enumerate(_read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{n}: not JSON: {e.msg} (column {e.colno})") from None
    return out


def read_json(path):
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not JSON: {e.msg} (column {e.colno})") from None


ROW_FIELDS = {"key": "str", "variant": "str", "backend": "str", "family": "str", "K": "int", "N": "int", "R": "int",
              "threads": "int", "distribution": "str", "mode": "str", "shape": "str?", "status": "str",
              "context": "dict?", "partial": "dict?"}
# the mark on every row of an interrupted run (`hsdr run` stopped by a signal; `--resume` completes it)
PARTIAL_FIELDS = {"done": "int", "total": "int", "interrupted_by": "str"}
# fields of a row whose status is ok (timed)
TIMED_FIELDS = {"weight_bytes": "num", "ceiling_bytes_per_s": "num", "bytes_floor_ns": "num",
                "time_ns.median": "num", "time_ns.p10": "num", "time_ns.p90": "num", "gb_per_s": "num",
                "pct_of_ceiling": "num", "ratio_to_production": "num?", "production_variant": "str?",
                "stages": "dict?", "dominant_stage": "str?", "convert": "dict?", "convert.time_ns": "num?",
                "occupancy": "dict?", "occupancy.mean": "num?",
                "error": "dict?", "error.nmse": "num?", "error.production_nmse": "num?"}


CONTEXT_FIELDS = {"cpu_model": "str?", "cores": "int?", "caches": "dict?", "ceilings": "list?", "commit": "str?",
                  "dirty": "bool?", "threads_pinned": "bool?"}
CEILING_FIELDS = {"threads": "int", "mode": "str", "bytes": "num?", "bytes_per_s": "num"}


def check_context(ctx, where):
    """The context block's fields that the figures and the report compute with."""
    check(ctx, CONTEXT_FIELDS, f"{where}: context")
    for name, size in (ctx.get("caches") or {}).items():
        if size is not None and not _is_num(size):
            raise InputError(f"{where}: context.caches.{name} should be num, got {json.dumps(size)[:60]}")
    for i, c in enumerate(ctx.get("ceilings") or []):
        if not isinstance(c, dict):
            raise InputError(f"{where}: context.ceilings[{i}] should be an object")
        check(c, CEILING_FIELDS, f"{where}: context.ceilings[{i}]")


def load_results(path):
    rows = []
    for n, row in read_json_lines(path):
        where = f"{path}:{n}"
        _expect_schema(row, "hsdr-results/1", where)
        check(row, ROW_FIELDS, where)
        if row.get("context"):
            check_context(row["context"], where)
        if row.get("partial"):
            check(row["partial"], PARTIAL_FIELDS, f"{where}: partial")
        if row["status"] == "ok":
            check(row, TIMED_FIELDS, where)
            for stage, times in (row.get("stages") or {}).items():
                check({"s": times}, {"s": "dict", "s.alone_ns": "num?"}, f"{where}: stage '{stage}'")
        row.setdefault("shape", "")
        row["shape"] = row["shape"] or ""
        rows.append(row)
    return rows


BREAKEVEN_FIELDS = {"K": "int", "N": "int", "threads": "int", "distribution": "str", "mode": "str", "shape": "str?",
                    "stateset": "str", "direct": "str", "fit": "dict?", "break_even_R": "num?", "note": "str?"}
FIT_FIELDS = {"a_ns_per_row": "num", "b_ns_per_tile_row": "num", "direct_ns_per_row": "num"}  # when a fit exists


def load_breakeven(path):
    doc = read_json(path)
    _expect_schema(doc, "hsdr-breakeven/1", path)
    check(doc, {"rows": "list"}, path)
    for i, r in enumerate(doc["rows"]):
        if not isinstance(r, dict):
            raise InputError(f"{path}: rows[{i}] should be an object")
        check(r, BREAKEVEN_FIELDS, f"{path}: rows[{i}]")
        if r.get("fit"):
            check(r["fit"], FIT_FIELDS, f"{path}: rows[{i}].fit")
        r["shape"] = r.get("shape") or ""
    return doc["rows"]


PROFILE_FIELDS = {"model": "str", "layers_measured": "int", "layers_model": "int", "tokens": "int", "threads": "int",
                  "cold": "bool?", "ceiling_bytes_per_s": "num?", "variants": "list"}
PROFILE_VARIANT_FIELDS = {"variant": "str", "ms_per_token_measured": "num", "tokens_per_s_measured": "num",
                          "floor_ms_per_token_measured": "num", "ms_per_token_full_model_extrapolated": "num?",
                          "tokens_per_s_full_model_extrapolated": "num?", "convert_ms": "num?",
                          "per_gemv": "list?"}


def load_profile(path):
    doc = read_json(path)
    _expect_schema(doc, "hsdr-profile/1", path)
    check(doc, PROFILE_FIELDS, path)
    for i, v in enumerate(doc["variants"]):
        if not isinstance(v, dict):
            raise InputError(f"{path}: variants[{i}] should be an object")
        check(v, PROFILE_VARIANT_FIELDS, f"{path}: variants[{i}]")
        if not all(isinstance(g, dict) for g in v.get("per_gemv") or []):
            raise InputError(f"{path}: variants[{i}].per_gemv should hold objects")
    return doc


STATES_FIELDS = {"distribution": "str", "K": "int", "vectors": "int", "states128_mean": "num",
                 "states128_p5": "num", "states128_p95": "num", "states64_mean": "num", "states64_p5": "num",
                 "states64_p95": "num", "lns8_rel_rms_error": "num", "q8_0_rel_rms_error": "num",
                 "hist128": "list?", "hist64": "list?"}


def _objects(path):
    """(where, object) for each line of a JSON Lines file; InputError for a line that is not an object."""
    for n, obj in read_json_lines(path):
        where = f"{path}:{n}"
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a JSON object")
        yield where, obj


def load_states(path):
    lines = []
    for where, obj in _objects(path):
        check(obj, STATES_FIELDS, where)
        for key in ("hist128", "hist64"):
            if obj.get(key) is not None and not all(_KINDS["int"](c) and c >= 0 for c in obj[key]):
                raise InputError(f"{where}: field '{key}' should hold non-negative integers")
        lines.append(obj)
    return lines


QUALITY_FIELDS = {"synthetic": "bool", "model": "str", "layers": "int", "seeds": "int", "tokens": "int",
                  "threads": "int?", "pipeline": "str?", "paths": "list"}
QUALITY_PATH_FIELDS = {"name": "str", "variant": "str?", "family": "str", "activations": "str?",
                       "per_layer": "list", "final": "dict", "final.nmse_mean": "num", "final.nmse_max": "num?",
                       "final.kl_mean": "num", "final.kl_max": "num?", "final.cos_mean": "num?",
                       "final.top1_agreement": "num"}
QUALITY_LAYER_FIELDS = {"layer": "int", "nmse_mean": "num", "nmse_max": "num?", "cos_mean": "num?"}


def load_quality(path):
    doc = read_json(path)
    _expect_schema(doc, "hsdr-quality/1", path)
    check(doc, QUALITY_FIELDS, path)
    if isinstance(doc.get("context"), dict):
        check_context(doc["context"], path)
    for i, p in enumerate(doc["paths"]):
        where = f"{path}: paths[{i}]"
        if not isinstance(p, dict):
            raise InputError(f"{where} should be an object")
        check(p, QUALITY_PATH_FIELDS, where)
        for j, layer in enumerate(p["per_layer"]):
            if not isinstance(layer, dict):
                raise InputError(f"{where}.per_layer[{j}] should be an object")
            check(layer, QUALITY_LAYER_FIELDS, f"{where}.per_layer[{j}]")
    return doc


COLUMNS_FIELDS = {"variant": "str", "model": "str", "tensor": "str", "K": "int", "N": "int", "cols": "int",
                  "mode": "str", "weight_bytes": "num", "read_bytes_per_s": "num", "floor_ns": "num", "status": "str",
                  "median_ns": "num?", "per_column_ns": "num?", "pct_of_floor": "num?"}


def load_columns(path):
    lines = []
    for where, obj in _objects(path):
        _expect_schema(obj, "hsdr-columns/1", where)
        check(obj, COLUMNS_FIELDS, where)
        if obj["status"] == "ok" and obj.get("median_ns") is None:
            raise InputError(f"{where}: a row with status ok needs 'median_ns'")
        lines.append(obj)
    return lines


def _optional(path, reader):
    """reader(path) when the file exists, else None."""
    return reader(path) if os.path.exists(path) else None


def load_dir(directory):
    """The Dataset of one results directory. InputError when results.jsonl is missing or any input is malformed."""
    results = os.path.join(directory, "results.jsonl")
    if not os.path.exists(results):
        raise InputError(f"{results}: missing; produce it with {how_to_make('results.jsonl', directory)}")
    try:
        ds = Dataset(dir=directory, rows=load_results(results))
        ds.partial = next((r["partial"] for r in ds.rows if r.get("partial")), None)
        ds.breakeven = _optional(os.path.join(directory, "breakeven.json"), load_breakeven)
        ds.states = _optional(os.path.join(directory, "states.jsonl"), load_states)
        ds.quality = _optional(os.path.join(directory, "quality.json"), load_quality)
        for path in sorted(glob.glob(os.path.join(glob.escape(directory), "profile-*.json"))):
            profile = load_profile(path)
            ds.profiles[profile["model"]] = profile
        for path in sorted(glob.glob(os.path.join(glob.escape(directory), "columns-*.jsonl"))):
            lines = load_columns(path)
            if lines:
                ds.columns[lines[0]["model"]] = lines
    except OSError as e:
        raise InputError(f"{e.filename}: {e.strerror}") from None
    return ds
