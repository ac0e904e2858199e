#!/bin/sh
# real_model_report.sh HSDR SRC_DIR OUT_DIR: REPORT.md's "Real model" section (issue 21 item 5) from the three
# real-model inputs of the synthetic 2-layer GGUF (tests/real_model.sh writes them: inspect.json, states-real.jsonl,
# quality-real.json), through plots/run in three directories: the three files alone (no results.jsonl); the same
# beside a small `hsdr run --gguf` (the section comes last, the timed rows' weight hashes agree with inspect.json);
# and inspect.json with `hsdr quality --gguf` on drawn activations (labelled SYNTHETIC). Needs matplotlib (plots/run
# finds it). Prints "real_model_report: OK" at the end; any failure says which check and exits 1.
set -eu
HSDR=$1
SRC=$2
OUT=$3
G=$SRC/tests/data/gguf/model.gguf
rm -rf "$OUT"
mkdir -p "$OUT"
fail() { echo "real_model_report: FAILED: $*"; exit 1; }
has() { # has DIR TEXT: REPORT.md of DIR holds the fixed string TEXT
    grep -qF -- "$2" "$1/REPORT.md" || fail "$1/REPORT.md lacks: $2"
}

"$SRC/tests/real_model.sh" "$HSDR" "$SRC" "$OUT/inputs" >"$OUT/inputs.log" ||
    fail "tests/real_model.sh (see $OUT/inputs.log)"
TENSORS="blk.0.attn_q.weight blk.0.ffn_gate.weight blk.0.ffn_down.weight blk.1.attn_q.weight blk.1.ffn_gate.weight
blk.1.ffn_down.weight output.weight"

# 1. the three files alone
A=$OUT/only
mkdir -p "$A"
cp "$OUT/inputs/inspect.json" "$OUT/inputs/states-real.jsonl" "$OUT/inputs/quality-real.json" "$A/"
"$SRC/plots/run" "$A" >"$A/plots.log" 2>&1 || fail "plots/run on the three files alone (see $A/plots.log)"
has "$A" "The directory holds no results.jsonl"
has "$A" "## Real model"
has "$A" "### Weights of the model file"
has "$A" '`model.gguf` (name Synthetic-Ternary-2L, architecture qwen3; GGUF v3'
has "$A" "### Occupied LNS8 states: real activations vs modelled"
has "$A" "**Do real activations contain a sufficiently small number of active states?** Over all 7 sets"
has "$A" "for the modelled bonsai distribution at the same widths"
has "$A" "| **all** | 128, 256 | 56 | 72 |"
has "$A" "### Quality per family: real weights x real activations"
has "$A" "Both read the same activations: the data hashes of the 7 sets they share agree."
has "$A" "](figures/states-real.png)"
[ -s "$A/figures/states-real.png" ] || fail "figures/states-real.png was not drawn"
for t in $TENSORS; do
    # the weights table, the states table and the per-tensor quality table: one row each
    [ "$(grep -c "^| $t | " "$A/REPORT.md")" = 3 ] || fail "tensor $t: expected 3 table rows in $A/REPORT.md"
done
grep -q '^| blk\.0\.ffn_down\.weight | PQ2_0 | 256 x 128 | 256 | [0-9.]*% | ' "$A/REPORT.md" ||
    fail "weights table: no PQ2_0 row for blk.0.ffn_down.weight"
for f in production direct flns q1516; do
    grep -q "^| $f | cpu\.$f | [^|]* | 7 x 8 | [0-9.e-]* | " "$A/REPORT.md" || fail "quality table: no row of family $f"
done
grep -q "^## Answers\|^## Best variant" "$A/REPORT.md" && fail "a report without results.jsonl shows the timing answers"

# 2. beside a small timed run on the file's tensors: the section comes after the timing sections
B=$OUT/with-run
"$HSDR" run "$SRC/tests/data/run/gguf.yaml" --gguf "$G" --set variants=ref.q8_0,cpu.production --set R=1 \
    --stages none --quiet --out "$B" >"$OUT/run.log" 2>&1 || fail "hsdr run --gguf (see run.log)"
cp "$OUT/inputs/inspect.json" "$OUT/inputs/states-real.jsonl" "$OUT/inputs/quality-real.json" "$B/"
"$SRC/plots/run" "$B" >"$B/plots.log" 2>&1 || fail "plots/run beside results.jsonl (see $B/plots.log)"
has "$B" "The rows of \`results.jsonl\` timed the same weights: the data hashes of their 7 tensors agree"
[ "$(grep -n '^## ' "$B/REPORT.md" | tail -n 1 | cut -d: -f2-)" = "## Real model" ] ||
    fail "with results.jsonl the Real model section should come last"

# 3. quality on drawn activations: labelled SYNTHETIC; the missing states file named with its command
C=$OUT/modelled
mkdir -p "$C"
cp "$OUT/inputs/inspect.json" "$C/"
"$HSDR" quality --gguf "$G" --tensors 'blk.0.*' --tokens 2 --threads 1 --json "$C/quality-real.json" >/dev/null ||
    fail "hsdr quality --gguf without --activations"
"$SRC/plots/run" "$C" >"$C/plots.log" 2>&1 || fail "plots/run with modelled activations (see $C/plots.log)"
has "$C" "### Quality per family: real weights x SYNTHETIC activations"
has "$C" "the activations of \`quality-real.json\`: SYNTHETIC, drawn from the bonsai distribution"
has "$C" "_No data: states-real.jsonl is missing; produce it with \`hsdr states --activations ACTS --json >"
[ -e "$C/figures/states-real.png" ] && ! grep -q "states-real.png  (placeholder" "$C/plots.log" &&
    fail "states-real.png drawn without states-real.jsonl"
echo "real_model_report: OK (three files alone, beside hsdr run --gguf, quality on modelled activations)"
