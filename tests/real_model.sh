#!/bin/sh
# real_model.sh HSDR SRC_DIR OUT_DIR: issue 21's Done-when round trip on the synthetic 2-layer GGUF
# (tests/data/gguf/model.gguf) and its activation sets (tests/data/acts/): the capture dump converted by
# scripts/acts-to-npy.py (must equal the committed sets byte for byte), then hsdr inspect --json, hsdr states
# --activations --json, hsdr quality --gguf --activations --json and hsdr profile --gguf, each output checked.
# A few seconds. Prints "real_model: OK" at the end; any failure says which step and exits 1.
set -eu
HSDR=$1
SRC=$2
OUT=$3
G=$SRC/tests/data/gguf/model.gguf
A=$SRC/tests/data/acts
rm -rf "$OUT"
mkdir -p "$OUT"
fail() { echo "real_model: FAILED: $*"; exit 1; }

python3 "$SRC/scripts/acts-to-npy.py" "$A/capture.bin" "$OUT/acts" >/dev/null || fail "acts-to-npy.py"
diff -r "$OUT/acts" "$A/model" >/dev/null || fail "acts-to-npy.py output differs from tests/data/acts/model"

"$HSDR" inspect --json "$G" >"$OUT/inspect.json" || fail "hsdr inspect"
grep -q '"zero_trit_fraction"' "$OUT/inspect.json" || fail "inspect.json lacks zero_trit_fraction"

"$HSDR" states --activations "$OUT/acts" --vectors 8 --json >"$OUT/states-real.jsonl" || fail "hsdr states"
[ "$(grep -c '"source":"real"' "$OUT/states-real.jsonl")" = 8 ] || fail "states: expected 7 sets + all"
[ "$(grep -c '"source":"modelled"' "$OUT/states-real.jsonl")" = 2 ] || fail "states: expected 2 modelled widths"

"$HSDR" quality --gguf "$G" --activations "$OUT/acts" --threads 2 --json "$OUT/quality-real.json" \
    >"$OUT/quality.txt" || fail "hsdr quality (exit $?)"
python3 - "$OUT/quality-real.json" <<'PY' || fail "quality-real.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "hsdr-quality/1" and d["synthetic"] is False, "schema"
r = d["real"]
assert len(r["tensors"]) == 7 and all(t["T"] == 8 for t in r["tensors"]), "7 tensors x 8 tokens"
fam = {f["family"]: f for f in r["families"]}
assert "production" in fam and "direct" in fam, "families %s" % sorted(fam)
for f in fam.values():
    assert 0 <= f["nmse"] < 1e-2 and f["cos_min"] > 0.99, "%s: nmse %g cos_min %g" % (f["variant"], f["nmse"],
                                                                                       f["cos_min"])
assert fam["production"]["nmse"] < fam["direct"]["nmse"], "Q8_0 should beat LNS8 on NMSE"
PY

"$HSDR" profile --gguf "$G" --tokens 2 --variants 'ref.q8_0,cpu.production' --json "$OUT/profile.json" \
    >"$OUT/profile.txt" || fail "hsdr profile --gguf"
grep -q "model.gguf" "$OUT/profile.txt" || fail "profile output does not name the file"
echo "real_model: OK (inspect, acts-to-npy, states --activations, quality --gguf --activations, profile --gguf)"
