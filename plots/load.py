"""Read one results directory: results.jsonl (required, unless the directory holds one of the real-model inputs),
breakeven.json, profile-<model>.json, states.jsonl and quality.json (optional), the real-model inputs inspect.json,
states-real.jsonl and quality-real.json (optional), and the columns-<model>.jsonl files that runs before
hsdr-results/2 left; or a host study folder of scripts/cpu-host.sh (load_host_dir: threads/results.jsonl,
handoff.jsonl, bandwidth.jsonl, profile-*.json, cpu-host.log). Every field the plots and the report use is checked
here, once, so that the rest of the code can index without guarding; malformed input raises InputError naming the
file, the line and what was expected.
Schemas: the result rows' fields come from results_schema.json beside this file (`hsdr schema --json`: the one table
of harness/schema.c), read once; breakeven, profile and columns: docs/results-schema.md; `hsdr states --json`;
hsdr-quality/1; `hsdr inspect --json`, `hsdr states --activations --json` and `hsdr quality --gguf --json`:
docs/results-schema.md and docs/real-model.md; hsdr-handoff/1: harness/handoff.c; hsdr-bandwidth/2:
docs/results-schema.md."""
import glob
import gzip
import json
import os
import re
import zlib
from dataclasses import dataclass, field
from typing import NamedTuple

# The command that produces each input (DIR: the results directory), quoted where the input is missing.
PRODUCERS = {
    "results.jsonl": "hsdr run matrix.yaml --out DIR",
    "breakeven.json": "hsdr run matrix.yaml --out DIR",  # when the matrix sweeps R over direct and state-set variants
    "profile": "hsdr profile --model MODEL --json DIR/profile-MODEL.json",
    "states.jsonl": "hsdr states --json > DIR/states.jsonl",
    "quality.json": "hsdr quality --json DIR/quality.json",  # the synthetic accuracy study
    # the real-model inputs (docs/real-model.md): a GGUF file's weights and activations captured for a prompt
    "inspect.json": "hsdr inspect --json FILE.gguf > DIR/inspect.json",
    "states-real.jsonl": "hsdr states --activations ACTS --json > DIR/states-real.jsonl",
    "quality-real.json": "hsdr quality --gguf FILE.gguf --activations ACTS --json DIR/quality-real.json",
    # the host study (scripts/cpu-host.sh, docs/results-schema.md): CPU_HOST_PART=1 writes the ceilings, the hand-off
    # and the profiles, CPU_HOST_PART=2 the threads sweep; unparted, both
    "threads/results.jsonl": "OUT=DIR CPU_HOST_PART=2 scripts/cpu-host.sh BUILD",
    "handoff.jsonl": "hsdr bandwidth --handoff --threads 1,2,4,...,NCPU --json > DIR/handoff.jsonl",
    "bandwidth.jsonl": "hsdr bandwidth --threads 1,2,4,...,NCPU --sizes 256M --mode cold --json > DIR/bandwidth.jsonl",
    "host profile": "OUT=DIR CPU_HOST_PART=1 scripts/cpu-host.sh BUILD [BEFORE_HSDR]",
}
REAL_MODEL_FILES = ("inspect.json", "states-real.jsonl", "quality-real.json")


def how_to_make(key, directory):
    """The command producing input `key` for this directory, as Markdown-style code: `hsdr states --json > d/...`."""
    return "`" + PRODUCERS[key].replace("DIR", directory) + "`"


class InputError(Exception):
    """Malformed input; the message starts with 'FILE:LINE:' (or 'FILE:' for a whole-file problem)."""


@dataclass
class Dataset:
    """Everything read from one results directory; optional inputs are None (or empty) when their file is absent."""
    dir: str
    rows: list                                      # results.jsonl rows, in file order, as hsdr-results/2
    has_results: bool = True                        # False: no results.jsonl (a directory of real-model inputs)
    breakeven: list | None = None                   # breakeven.json "rows"
    profiles: dict = field(default_factory=dict)    # model -> hsdr-profile/1 object
    states: list | None = None                      # states.jsonl lines
    quality: dict | None = None                     # hsdr-quality/1 object
    partial: dict | None = None                     # the "partial" mark of an interrupted run's rows, else None
    # columns-<model>.jsonl of runs before hsdr-results/2 (`hsdr columns`, gone since): their lines as row-like
    # dicts (columns_line_as_row), and model -> lines read. Newer runs write those cases as rows with cols > 1.
    old_column_rows: list = field(default_factory=list)
    old_columns_files: dict = field(default_factory=dict)
    # the real-model inputs (docs/real-model.md), None when absent
    inspect: dict | None = None                     # `hsdr inspect --json` of the model file
    states_real: list | None = None                 # `hsdr states --activations --json` lines
    quality_real: dict | None = None                # `hsdr quality --gguf --json`: hsdr-quality/1, synthetic false
    other_contexts: list = field(default_factory=list)  # none here (a host study's files: HostDataset)


# ---- field checks ----

def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_integer(v):
    """An integral number, as the C reader has it (1e3 and 1000.0 count; JSON has one number type)."""
    return _is_num(v) and (isinstance(v, int) or v.is_integer())


# the type names of results_schema.json, used by every spec below
_KINDS = {
    "number": _is_num,
    "integer": _is_integer,
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _bad_type(where, key, kind, value):
    return InputError(f"{where}: field '{key}' should be {kind}, got {json.dumps(value)[:60]}")


def check(obj, spec, where):
    """Check obj against spec {dotted.key: kind}; kind is a _KINDS name, with '?' appended when null or absent is
    allowed. Raises InputError(where + the first bad field). (The inputs other than result rows.)"""
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
            raise _bad_type(where, key, kind, value)


def _expect_schema(obj, schema, where):
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object")
    if obj.get("schema") != schema:
        raise InputError(f"{where}: schema {obj.get('schema')!r}, expected {schema!r}")


# ---- the result rows' schema (results_schema.json) ----

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results_schema.json")
RESULTS_SCHEMA_V1 = "hsdr-results/1"  # the rows before cols, the paired ratios and the ceiling object
_PRESENCES = ("always", "ok", "optional")


class Field(NamedTuple):
    """One row field of results_schema.json. presence: 'always' (on every row; for a member: whenever its parent
    is there), 'ok' (on rows with status ok) or 'optional' (checked only when present)."""
    path: str            # dotted; '*' = any stage name (stages.*.alone_ns)
    kind: str            # a _KINDS name
    presence: str
    nullable: bool       # null allowed in place of the value
    open: bool           # an object whose members are not all listed (context, context.caches)
    since_2: bool        # new in hsdr-results/2: not required on rows converted from /1


@dataclass
class RowSchema:
    """results_schema.json, arranged for checking: each object's declared members by the object's path."""
    name: str            # "hsdr-results/2"
    stages: tuple        # the canonical stage names, the members that "stages.*" stands for
    members: dict        # parent path ("" for the row) -> [Field] of its direct members


def parse_row_schema(doc, source):
    """The RowSchema of a parsed `hsdr schema --json` document; InputError naming `source` when it is malformed."""
    _expect_schema(doc, "hsdr-schema/1", source)
    check(doc, {"results_schema": "string", "stages": "array", "fields": "array"}, source)
    members = {"": []}
    for i, f in enumerate(doc["fields"]):
        where = f"{source}: fields[{i}]"
        if not isinstance(f, dict):
            raise InputError(f"{where} should be an object")
        check(f, {"path": "string", "type": "string", "presence": "string", "nullable": "boolean", "open": "boolean",
                  "since_2": "boolean"}, where)
        if f["type"] not in _KINDS or f["presence"] not in _PRESENCES:
            raise InputError(f"{where}: type {f['type']!r} or presence {f['presence']!r} unknown")
        parent, _, _ = f["path"].rpartition(".")
        if parent not in members:
            raise InputError(f"{where}: '{f['path']}' comes before its parent '{parent}'")
        fld = Field(f["path"], f["type"], f["presence"], f["nullable"], f["open"], f["since_2"])
        members[parent].append(fld)
        if fld.kind == "object":
            members[fld.path] = []
    return RowSchema(doc["results_schema"], tuple(doc["stages"]), members)


_row_schema = None


def row_schema():
    """The RowSchema of SCHEMA_FILE, read on first use."""
    global _row_schema
    if _row_schema is None:
        try:
            _row_schema = parse_row_schema(read_json(SCHEMA_FILE), SCHEMA_FILE)
        except OSError as e:
            raise InputError(f"{SCHEMA_FILE}: {e.strerror} (it is `hsdr schema --json`)") from None
    return _row_schema


def _check_members(obj, parent, schema, status_ok, converted, where, shown):
    """The members of object obj (at schema path `parent`; `shown`: its path in messages, with the stage's name
    for '*') against their Fields: every required one present, each present one of its type, or null where
    nullable; objects recursively. A member the schema does not list is an error unless the object is open."""
    declared = schema.members[parent]
    names = {f.path.rpartition(".")[2]: f for f in declared}
    for name, value in obj.items():
        path = f"{shown}.{name}" if shown else name
        if "*" in names:  # stages: any canonical stage name
            if name not in schema.stages:
                raise InputError(f"{where}: field '{path}' is not a stage of {schema.name} "
                                 f"({', '.join(schema.stages)})")
            _check_value(value, names["*"], schema, status_ok, converted, where, path)
        elif name in names:
            _check_value(value, names[name], schema, status_ok, converted, where, path)
        elif not (parent and _field(schema, parent).open):
            raise InputError(f"{where}: field '{path}' is not in the schema {schema.name}")
    for name, f in names.items():
        required = f.presence == "always" or (f.presence == "ok" and status_ok)
        if name != "*" and name not in obj and required and not (converted and f.since_2):
            raise InputError(f"{where}: missing field '{f'{shown}.{name}' if shown else name}'")


def _check_value(value, f, schema, status_ok, converted, where, shown):
    if value is None and f.nullable:
        return
    if not _KINDS[f.kind](value):
        raise _bad_type(where, shown, f.kind, value)
    if f.kind == "object":
        _check_members(value, f.path, schema, status_ok, converted, where, shown)


def _field(schema, path):
    parent = path.rpartition(".")[0]
    return next(f for f in schema.members[parent] if f.path == path)


def upgrade_row(row, where):
    """An hsdr-results/1 row as /2, in place, as the C reader converts it (hsdr_schema_upgrade_row in
    harness/schema.c): schema -> /2, converted_from = "hsdr-results/1", a string `error` (an error row's message in
    /1) -> error_message, cols = 1 when absent. Fields new in /2 stay missing. A /2 row is left as it is."""
    schema = row_schema().name
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected a JSON object")
    if row.get("schema") == schema:
        return row
    if row.get("schema") != RESULTS_SCHEMA_V1:
        raise InputError(f"{where}: schema {row.get('schema')!r}, expected {schema!r} (or {RESULTS_SCHEMA_V1!r}, "
                         f"converted)")
    row["schema"] = schema
    row["converted_from"] = RESULTS_SCHEMA_V1
    if isinstance(row.get("error"), str):
        row["error_message"] = row.pop("error")
    row.setdefault("cols", 1)
    return row


def check_row(row, where, schema=None):
    """Check one /2 result row against the schema (row_schema() by default). A row converted from an older schema
    (converted_from set) need not have the fields new in /2."""
    schema = schema or row_schema()
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected a JSON object")
    _check_members(row, "", schema, row.get("status") == "ok", "converted_from" in row, where, "")


# the members of each context.ceilings[] entry that the report reads (results_schema.json describes the entries in
# words only: {backend, threads, bytes, mode, bytes_per_s, rel_spread, reps})
CEILING_FIELDS = {"threads": "integer", "mode": "string", "bytes": "number?", "bytes_per_s": "number"}


def check_context(ctx, where):
    """A context block outside a row (quality.json's) against the schema's context.* fields, then its entries."""
    _check_value(ctx, _field(row_schema(), "context"), row_schema(), False, False, where, "context")
    _check_context_entries(ctx, where)


def _check_context_entries(ctx, where):
    """What the schema leaves open in a context block that the figures and the report compute with: the cache sizes
    and the ceilings' entries."""
    for name, size in (ctx.get("caches") or {}).items():
        if size is not None and not _is_num(size):
            raise _bad_type(where, f"context.caches.{name}", "number", size)
    for i, c in enumerate(ctx.get("ceilings") or []):
        if not isinstance(c, dict):
            raise InputError(f"{where}: context.ceilings[{i}] should be an object")
        check(c, CEILING_FIELDS, f"{where}: context.ceilings[{i}]")


# ---- readers ----

def _read_text(path):
    """The text of a UTF-8 file; a name ending in .gz is read through gzip."""
    try:
        if path.endswith(".gz"):
            try:
                with gzip.open(path, "rt", encoding="utf-8") as f:
                    return f.read()
            except (gzip.BadGzipFile, EOFError, zlib.error) as e:
                raise InputError(f"{path}: not a whole gzip file ({e})") from None
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


def load_results(path):
    """The rows of a results.jsonl, each as hsdr-results/2 (upgrade_row) and checked against the schema."""
    rows = []
    for n, row in read_json_lines(path):
        where = f"{path}:{n}"
        check_row(upgrade_row(row, where), where)
        if row.get("context"):
            _check_context_entries(row["context"], where)
        rows.append(row)
    return rows


BREAKEVEN_FIELDS = {"K": "integer", "N": "integer", "threads": "integer", "distribution": "string", "mode": "string",
                    "shape": "string?", "stateset": "string", "direct": "string", "fit": "object?",
                    "break_even_R": "number?", "note": "string?"}
# when a fit exists
FIT_FIELDS = {"a_ns_per_row": "number", "b_ns_per_tile_row": "number", "direct_ns_per_row": "number"}


def load_breakeven(path):
    doc = read_json(path)
    _expect_schema(doc, "hsdr-breakeven/1", path)
    check(doc, {"rows": "array"}, path)
    for i, r in enumerate(doc["rows"]):
        if not isinstance(r, dict):
            raise InputError(f"{path}: rows[{i}] should be an object")
        check(r, BREAKEVEN_FIELDS, f"{path}: rows[{i}]")
        if r.get("fit"):
            check(r["fit"], FIT_FIELDS, f"{path}: rows[{i}].fit")
        r["shape"] = r.get("shape") or ""
    return doc["rows"]


PROFILE_FIELDS = {"model": "string", "layers_measured": "integer", "layers_model": "integer", "tokens": "integer",
                  "threads": "integer", "cold": "boolean?", "host_ceiling_bytes_per_s": "number?",
                  "ceiling_bytes_per_s": "number?", "variants": "array"}  # ceiling_bytes_per_s: files before 2026-12
PROFILE_VARIANT_FIELDS = {"variant": "string", "ms_per_token_measured": "number", "tokens_per_s_measured": "number",
                          "floor_ms_per_token_measured": "number", "ms_per_token_full_model_extrapolated": "number?",
                          "tokens_per_s_full_model_extrapolated": "number?", "convert_ms": "number?",
                          "per_gemv": "array?"}


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


# the statistics of one line of `hsdr states --json`, with or without --activations
STATES_STAT_FIELDS = {"states128_mean": "number", "states128_p5": "number", "states128_p95": "number",
                      "states64_mean": "number", "states64_p5": "number", "states64_p95": "number",
                      "lns8_rel_rms_error": "number", "q8_0_rel_rms_error": "number", "hist128": "array?",
                      "hist64": "array?"}
STATES_FIELDS = {"distribution": "string", "K": "integer", "vectors": "integer", **STATES_STAT_FIELDS}


def _objects(path):
    """(where, object) for each line of a JSON Lines file; InputError for a line that is not an object."""
    for n, obj in read_json_lines(path):
        where = f"{path}:{n}"
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a JSON object")
        yield where, obj


def _check_histograms(obj, where):
    for key in ("hist128", "hist64"):
        if obj.get(key) is not None and not all(_KINDS["integer"](c) and c >= 0 for c in obj[key]):
            raise InputError(f"{where}: field '{key}' should hold non-negative integers")


def load_states(path):
    lines = []
    for where, obj in _objects(path):
        check(obj, STATES_FIELDS, where)
        _check_histograms(obj, where)
        lines.append(obj)
    return lines


QUALITY_FIELDS = {"synthetic": "boolean", "model": "string", "layers": "integer", "seeds": "integer",
                  "tokens": "integer", "threads": "integer?", "pipeline": "string?", "paths": "array"}
QUALITY_PATH_FIELDS = {"name": "string", "variant": "string?", "family": "string", "activations": "string?",
                       "per_layer": "array", "final": "object", "final.nmse_mean": "number",
                       "final.nmse_max": "number?", "final.kl_mean": "number", "final.kl_max": "number?",
                       "final.cos_mean": "number?", "final.top1_agreement": "number"}
QUALITY_LAYER_FIELDS = {"layer": "integer", "nmse_mean": "number", "nmse_max": "number?", "cos_mean": "number?"}


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


# columns-<model>.jsonl (hsdr-columns/1): `hsdr columns` before hsdr-results/2 made the 1..8-column kernel a
# variant of `hsdr run` (cols > 1 rows in results.jsonl)
COLUMNS_FIELDS = {"variant": "string", "model": "string", "tensor": "string", "K": "integer", "N": "integer",
                  "cols": "integer", "mode": "string", "weight_bytes": "number", "read_bytes_per_s": "number",
                  "floor_ns": "number", "status": "string", "median_ns": "number?", "per_column_ns": "number?",
                  "pct_of_floor": "number?"}
# its statuses, as result rows have them: a count that failed validation was never timed; one the device could not
# stage did not run
COLUMNS_STATUS = {"ok": "ok", "failed validation": "failed", "unsupported": "error"}


def columns_line_as_row(line, path):
    """One hsdr-columns/1 line as the row hsdr-results/2 would hold for that case, as far as the line tells:
        shape = "MODEL/TENSOR"; K, N, cols, mode, variant, weight_bytes, seed, device as they are
        status: ok -> ok, "failed validation" -> failed (validation.detail: its first_mismatch), "unsupported"
            (or any other) -> error (error_message: its reason)
        ceiling_bytes_per_s = read_bytes_per_s (the device's read of the same bytes, measured in the same run)
        bytes_floor_ns = floor_ns; time_ns = {median: median_ns, p10: p10_ns, p90: p90_ns, reps} on ok lines
        pct_of_ceiling = pct_of_floor (both 100 * floor / median)
        backend "cuda" (the only kernel `hsdr columns` ran), threads 1 (the launching host thread)
        distribution None: `hsdr columns` did not record one
        converted_from = "hsdr-columns/1", columns_file = the file read.
    per_column_ns is median_ns / cols, which the report computes from the row."""
    status = COLUMNS_STATUS.get(line["status"], "error")
    row = {"schema": row_schema().name, "converted_from": "hsdr-columns/1", "columns_file": path,
           "variant": line["variant"], "backend": "cuda", "shape": f"{line['model']}/{line['tensor']}",
           "K": line["K"], "N": line["N"], "R": 1, "cols": line["cols"], "threads": 1, "distribution": None,
           "mode": line["mode"], "seed": line.get("seed"), "status": status, "weight_bytes": line["weight_bytes"],
           "ceiling_bytes_per_s": line["read_bytes_per_s"], "bytes_floor_ns": line["floor_ns"]}
    if line.get("device"):
        row["device"] = line["device"]
    if status == "ok":
        row["time_ns"] = {"median": line["median_ns"], "p10": line.get("p10_ns"), "p90": line.get("p90_ns"),
                          "reps": line.get("reps")}
        row["pct_of_ceiling"] = line.get("pct_of_floor")
    elif status == "failed":
        row["validation"] = {"passed": False, "detail": line.get("first_mismatch") or "failed validation"}
    else:
        row["error_message"] = line.get("reason") or line["status"]
    return row


def load_columns(path):
    """The lines of an old columns-<model>.jsonl, each as a row-like dict (columns_line_as_row)."""
    rows = []
    for where, obj in _objects(path):
        _expect_schema(obj, "hsdr-columns/1", where)
        check(obj, COLUMNS_FIELDS, where)
        if obj["status"] == "ok" and obj.get("median_ns") is None:
            raise InputError(f"{where}: a row with status ok needs 'median_ns'")
        rows.append(columns_line_as_row(obj, path))
    return rows


# ---- the real-model inputs (docs/real-model.md) ----

INSPECT_FIELDS = {"file": "string", "file_bytes": "integer", "version": "integer", "tensor_count": "integer",
                  "metadata": "object", "tensors": "array"}
INSPECT_TENSOR_FIELDS = {"name": "string", "type": "string", "shape": "array", "bytes": "integer",
                         "data_hash": "string"}
TERNARY_TYPES = ("PTQ1_0", "PQ2_0")  # the tensors inspect gives statistics for
INSPECT_TERNARY_FIELDS = {"blocks": "integer", "zero_trit_fraction": "number", "all_zero_block_fraction": "number",
                          "scales": "object", "scales.min": "number?", "scales.p5": "number?",
                          "scales.median": "number?", "scales.p95": "number?", "scales.max": "number?",
                          "scales.subnormal": "integer", "scales.zero": "integer", "scales.nan": "integer"}


def load_inspect(path):
    """`hsdr inspect --json FILE.gguf`: the file's metadata and tensors; each PTQ1_0 / PQ2_0 tensor with its
    statistics (zero trits, all-zero blocks, fp16 scales)."""
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object (`hsdr inspect --json FILE.gguf`)")
    check(doc, INSPECT_FIELDS, path)
    for i, t in enumerate(doc["tensors"]):
        where = f"{path}: tensors[{i}]"
        if not isinstance(t, dict):
            raise InputError(f"{where} should be an object")
        check(t, INSPECT_TENSOR_FIELDS, where)
        if not t["shape"] or not all(_is_integer(d) and d > 0 for d in t["shape"]):
            raise InputError(f"{where}: field 'shape' should hold positive integers, got {json.dumps(t['shape'])}")
        if t["type"] in TERNARY_TYPES:
            check(t, INSPECT_TERNARY_FIELDS, f"{where} ({t['name']}, {t['type']})")
    if not any(t["type"] in TERNARY_TYPES for t in doc["tensors"]):
        raise InputError(f"{path}: no PTQ1_0 or PQ2_0 tensor: not a ternary model file")
    return doc


STATES_SOURCES = ("real", "modelled")
STATES_REAL_FIELDS = {"set": "string", "path": "string", **STATES_STAT_FIELDS}
STATES_SET_FIELDS = {"T": "integer", "K": "integer", "data_hash": "string"}  # a line of one set
STATES_ALL_FIELDS = {"sets": "integer", "vectors": "integer"}       # the line over every set ("set": "all")
STATES_MODELLED_FIELDS = {"distribution": "string", "K": "integer", "drawn_K": "integer", "vectors": "integer",
                          "seed": "integer", **STATES_STAT_FIELDS}


def load_states_real(path):
    """`hsdr states --activations PATH --json`: a line per set and one over all sets ("source": "real"), then the
    modelled distribution at each width ("source": "modelled")."""
    lines = []
    for where, obj in _objects(path):
        check(obj, {"source": "string"}, where)
        if obj["source"] not in STATES_SOURCES:
            raise InputError(f"{where}: field 'source' is {obj['source']!r}, expected 'real' or 'modelled'")
        if obj["source"] == "real":
            check(obj, STATES_REAL_FIELDS, where)
            check(obj, STATES_ALL_FIELDS if obj["set"] == "all" else STATES_SET_FIELDS, where)
        else:
            check(obj, STATES_MODELLED_FIELDS, where)
        _check_histograms(obj, where)
        lines.append(obj)
    real = [s for s in lines if s["source"] == "real"]
    if not any(s["set"] != "all" for s in real):
        raise InputError(f"{path}: no line of a real activation set (\"source\": \"real\"); produce it with "
                         f"{how_to_make('states-real.jsonl', os.path.dirname(path) or '.')}")
    if sum(s["set"] == "all" for s in real) > 1:
        raise InputError(f"{path}: more than one line with \"set\": \"all\" (one run of `hsdr states` per file)")
    return lines


QUALITY_REAL_FIELDS = {"synthetic": "boolean", "threads": "integer?", "real": "object", "real.gguf": "string",
                       "real.activations": "string", "real.activations_source": "string",
                       "real.tensor_globs": "string?", "real.exact": "string?", "real.tensors": "array",
                       "real.families": "array"}
QUALITY_REAL_TENSOR_FIELDS = {"name": "string", "type": "string", "layer": "integer", "K": "integer", "N": "integer",
                              "T": "integer", "activations": "string", "activations_hash": "string?",
                              "paths": "array"}
QUALITY_REAL_ERROR_FIELDS = {"variant": "string", "family": "string", "tokens": "integer", "nmse": "number",
                             "max_rel_error": "number", "cos_mean": "number", "cos_min": "number"}
QUALITY_REAL_FAMILY_FIELDS = {"activations": "string", "tensors": "integer", **QUALITY_REAL_ERROR_FIELDS}


def load_quality_real(path):
    """`hsdr quality --gguf FILE [--activations PATH] --json`: hsdr-quality/1 with "synthetic": false and the "real"
    section (per tensor and path, and per path over every tensor)."""
    doc = read_json(path)
    _expect_schema(doc, "hsdr-quality/1", path)
    if doc.get("synthetic") is True:
        raise InputError(f"{path}: \"synthetic\": true is the synthetic study (it belongs in quality.json); this file "
                         f"holds `hsdr quality --gguf` (\"synthetic\": false)")
    check(doc, QUALITY_REAL_FIELDS, path)
    if isinstance(doc.get("context"), dict):
        check_context(doc["context"], path)
    real = doc["real"]
    for i, t in enumerate(real["tensors"]):
        where = f"{path}: real.tensors[{i}]"
        if not isinstance(t, dict):
            raise InputError(f"{where} should be an object")
        check(t, QUALITY_REAL_TENSOR_FIELDS, where)
        for j, p in enumerate(t["paths"]):
            if not isinstance(p, dict):
                raise InputError(f"{where}.paths[{j}] should be an object")
            check(p, QUALITY_REAL_ERROR_FIELDS, f"{where} ({t['name']}).paths[{j}]")
    for i, f in enumerate(real["families"]):
        if not isinstance(f, dict):
            raise InputError(f"{path}: real.families[{i}] should be an object")
        check(f, QUALITY_REAL_FAMILY_FIELDS, f"{path}: real.families[{i}]")
    if not real["tensors"] or not real["families"]:
        raise InputError(f"{path}: real.tensors and real.families should not be empty")
    return doc


def _optional(path, reader):
    """reader(path) when the file exists, else None."""
    return reader(path) if os.path.exists(path) else None


def load_dir(directory):
    """The Dataset of one results directory. InputError when any input is malformed, or when results.jsonl is
    missing from a directory that holds none of the real-model inputs (REAL_MODEL_FILES)."""
    results = os.path.join(directory, "results.jsonl")
    has_results = os.path.exists(results)
    if not has_results and not any(os.path.exists(os.path.join(directory, f)) for f in REAL_MODEL_FILES):
        raise InputError(f"{results}: missing; produce it with {how_to_make('results.jsonl', directory)}")
    try:
        ds = Dataset(dir=directory, rows=load_results(results) if has_results else [], has_results=has_results)
        ds.partial = next((r["partial"] for r in ds.rows if r.get("partial")), None)
        ds.breakeven = _optional(os.path.join(directory, "breakeven.json"), load_breakeven)
        ds.states = _optional(os.path.join(directory, "states.jsonl"), load_states)
        ds.quality = _optional(os.path.join(directory, "quality.json"), load_quality)
        ds.inspect = _optional(os.path.join(directory, "inspect.json"), load_inspect)
        ds.states_real = _optional(os.path.join(directory, "states-real.jsonl"), load_states_real)
        ds.quality_real = _optional(os.path.join(directory, "quality-real.json"), load_quality_real)
        for path in sorted(glob.glob(os.path.join(glob.escape(directory), "profile-*.json"))):
            profile = load_profile(path)
            ds.profiles[profile["model"]] = profile
        for path in sorted(glob.glob(os.path.join(glob.escape(directory), "columns-*.jsonl"))):
            rows = load_columns(path)
            if rows:
                ds.old_columns_files[rows[0]["shape"].split("/")[0]] = len(rows)
                ds.old_column_rows += rows
    except OSError as e:
        raise InputError(f"{e.filename}: {e.strerror}") from None
    return ds


# ---- the host study (scripts/cpu-host.sh) ----

# a folder holds a host study when it has one of these and no results.jsonl of its own (which makes it an ordinary
# results directory, read by load_dir as before); cpu-host.log alone: a call that ran only profiles
HOST_MARKERS = ("handoff.jsonl", "bandwidth.jsonl", os.path.join("threads", "results.jsonl"),
                os.path.join("threads", "results.jsonl.gz"), "cpu-host.log")


@dataclass
class HostProfile:
    """One profile-*.json of a host study: its name (the file's without .json), which build ran it ('after': this
    build, profile-N.json and profile-auto.json; 'before': the older build, profile-before-*.json), the split rule
    ("all", or "auto" for --split auto; files before the rule have no "split" and ran "all") and the document."""
    name: str
    path: str
    build: str
    split: str
    doc: dict


@dataclass
class HostDataset:
    """Everything read from a host study folder; optional inputs are None (or empty) when their file is absent."""
    dir: str
    rows: list                                      # threads/results.jsonl(.gz) rows, as hsdr-results/2
    rows_file: str | None = None                    # the file they came from
    handoff: list | None = None                     # handoff.jsonl lines (hsdr-handoff/1), by thread count
    bandwidth: list | None = None                   # bandwidth.jsonl lines (hsdr-bandwidth/2)
    profiles: list = field(default_factory=list)    # [HostProfile], by name
    log: str | None = None                          # cpu-host.log
    partial: dict | None = None                     # the "partial" mark of an interrupted sweep's rows, else None
    # the context blocks of the files other than the rows, for query.context: the profiles' (this build's first),
    # the read ceilings', the hand-off's
    other_contexts: list = field(default_factory=list)
    quality: dict | None = None                     # never (query.context looks here)
    quality_real: dict | None = None


def is_host_dir(directory):
    """True for a folder of scripts/cpu-host.sh: one of HOST_MARKERS and no results.jsonl."""
    if os.path.exists(os.path.join(directory, "results.jsonl")):
        return False
    return any(os.path.exists(os.path.join(directory, m)) for m in HOST_MARKERS)


HANDOFF_FIELDS = {"threads": "integer", "pinning": "string?", "task": "string?", "calls": "array",
                  "barriers_per_call": "integer?", "barrier_ns": "object", "barrier_ns.median": "number",
                  "barrier_ns.p90": "number"}
HANDOFF_CALL_FIELDS = {"held": "boolean", "gap_us": "number", "time_ns": "object", "time_ns.median": "number",
                       "time_ns.p90": "number"}


def _once_per_thread_count(obj, where, seen, path):
    """A thread count >= 1, not on an earlier line of the file (seen: threads -> line)."""
    if obj["threads"] < 1:
        raise InputError(f"{where}: field 'threads' should be at least 1, got {obj['threads']}")
    if obj["threads"] in seen:
        raise InputError(f"{where}: threads {obj['threads']} again (line {seen[obj['threads']]} of {path} has it)")
    seen[obj["threads"]] = where.rpartition(":")[2]


def _no_lines(path, key):
    return InputError(f"{path}: no line (expected one per thread count, as "
                      f"{how_to_make(key, os.path.dirname(path) or '.')} writes)")


def load_handoff(path):
    """`hsdr bandwidth --handoff --json`: one line per thread count, the pool's hand-off (an empty task per call,
    free or held workers, after a gap of caller-only work) and one barrier; sorted by thread count."""
    lines, seen = [], {}
    for where, obj in _objects(path):
        _expect_schema(obj, "hsdr-handoff/1", where)
        check(obj, HANDOFF_FIELDS, where)
        _once_per_thread_count(obj, where, seen, path)
        for i, c in enumerate(obj["calls"]):
            if not isinstance(c, dict):
                raise InputError(f"{where}: calls[{i}] should be an object")
            check(c, HANDOFF_CALL_FIELDS, f"{where}: calls[{i}]")
        if isinstance(obj.get("context"), dict):
            check_context(obj["context"], where)
        lines.append(obj)
    if not lines:
        raise _no_lines(path, "handoff.jsonl")
    return sorted(lines, key=lambda x: x["threads"])


BANDWIDTH_FIELDS = {"backend": "string", "device": "string?", "threads": "integer", "bytes": "number",
                    "mode": "string", "bytes_per_s": "number", "time_ns": "object?", "buffers": "integer?",
                    "footprint_bytes": "number?", "note": "string?", "kernel": "string?", "pinning": "string?"}


def load_bandwidth(path):
    """`hsdr bandwidth --json`: one line per measurement (thread count, size, mode); file order."""
    lines = []
    for where, obj in _objects(path):
        _expect_schema(obj, "hsdr-bandwidth/2", where)
        check(obj, BANDWIDTH_FIELDS, where)
        if obj["threads"] < 1 or obj["bytes_per_s"] <= 0:
            raise InputError(f"{where}: threads {obj['threads']} and bytes_per_s {obj['bytes_per_s']} should be "
                             f"positive")
        if isinstance(obj.get("context"), dict):
            check_context(obj["context"], where)
        lines.append(obj)
    if not lines:
        raise _no_lines(path, "bandwidth.jsonl")
    return lines


# what a host study reads of a profile beyond load_profile's fields; newer fields optional (an older build's file)
HOST_PROFILE_FIELDS = {"split": "string?", "rotation": "object?", "rotation.label": "string?",
                       "host_ceiling_threads": "integer?"}
PROFILE_GEMV_FIELDS = {"tensor": "string", "layer": "integer", "K": "integer", "N": "integer", "mean_ns": "number",
                       "threads": "integer?"}
HOST_PROFILE_NAME = re.compile(r"profile-(before-)?(.*)\.json$")


def load_host_profile(path):
    """A profile-*.json of a host study as a HostProfile, its per-GEMV entries checked."""
    doc = load_profile(path)
    check(doc, HOST_PROFILE_FIELDS, path)
    for i, v in enumerate(doc["variants"]):
        for j, g in enumerate(v.get("per_gemv") or []):
            check(g, PROFILE_GEMV_FIELDS, f"{path}: variants[{i}].per_gemv[{j}]")
            if g["K"] <= 0 or g["N"] <= 0:
                raise InputError(f"{path}: variants[{i}].per_gemv[{j}]: K and N should be positive")
    m = HOST_PROFILE_NAME.match(os.path.basename(path))
    before, rest = m.group(1), m.group(2)
    split = doc.get("split") or ("auto" if rest == "auto" else "all")
    return HostProfile(m.group(0)[:-len(".json")], path, "before" if before else "after", split, doc)


def _read_log(path):
    """cpu-host.log: free text (what the steps printed), read as UTF-8 with any stray byte replaced."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def load_host_dir(directory):
    """The HostDataset of a host study folder (is_host_dir). InputError when an input is malformed."""
    threads = os.path.join(directory, "threads", "results.jsonl")
    rows_file = threads if os.path.exists(threads) else threads + ".gz" if os.path.exists(threads + ".gz") else None
    try:
        ds = HostDataset(dir=directory, rows=load_results(rows_file) if rows_file else [], rows_file=rows_file)
        ds.partial = next((r["partial"] for r in ds.rows if r.get("partial")), None)
        ds.handoff = _optional(os.path.join(directory, "handoff.jsonl"), load_handoff)
        ds.bandwidth = _optional(os.path.join(directory, "bandwidth.jsonl"), load_bandwidth)
        ds.log = _optional(os.path.join(directory, "cpu-host.log"), _read_log)
        for path in sorted(glob.glob(os.path.join(glob.escape(directory), "profile-*.json"))):
            ds.profiles.append(load_host_profile(path))
    except OSError as e:
        raise InputError(f"{e.filename}: {e.strerror}") from None
    others = [p.doc for p in sorted(ds.profiles, key=lambda p: p.build != "after")]
    others += (ds.bandwidth or [])[:1] + (ds.handoff or [])[:1]
    ds.other_contexts = [x["context"] for x in others if isinstance(x.get("context"), dict)]
    return ds
