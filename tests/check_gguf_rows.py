#!/usr/bin/env python3
"""check_gguf_rows.py HSDR FILE.gguf DIR [ACTIVATIONS TOKEN]: the rows of `hsdr run --gguf FILE.gguf --out DIR`
cover every PTQ1_0 / PQ2_0 tensor of the file (as `hsdr inspect --json` lists them) with every variant of the run:
shape "gguf:NAME", K and N the tensor's ne0 and ne1, gguf_file its base name, gguf_data_hash inspect's data_hash,
status ok (validated on the real weights, then timed); with ACTIVATIONS, each row names them and the token.
Standard library only."""
import json
import os
import subprocess
import sys


def main(argv):
    if len(argv) not in (4, 6):
        print(__doc__, file=sys.stderr)
        return 2
    hsdr, gguf, out = argv[1:4]
    acts = argv[4:6]
    info = json.loads(subprocess.run([hsdr, "inspect", "--json", gguf], stdout=subprocess.PIPE, check=True).stdout)
    tensors = {t["name"]: t for t in info["tensors"] if t["type"] in ("PTQ1_0", "PQ2_0")}
    rows = [json.loads(line) for line in open(os.path.join(out, "results.jsonl"))]
    errors, seen = [], {}
    for r in rows:
        key = r["key"]
        if not r["shape"].startswith("gguf:"):
            errors.append("%s: shape %r is not a gguf tensor" % (key, r["shape"]))
            continue
        name = r["shape"][5:]
        t = tensors.get(name)
        if t is None:
            errors.append("%s: %s is not a ternary tensor of %s" % (key, name, gguf))
            continue
        seen.setdefault(name, set()).add(r["variant"])
        want = {"K": t["shape"][0], "N": t["shape"][1], "gguf_file": os.path.basename(gguf),
                "gguf_data_hash": t["data_hash"], "status": "ok"}
        if acts:
            want.update({"activations": acts[0], "token": int(acts[1])})
        for field, value in want.items():
            if r.get(field) != value:
                errors.append("%s: field %s is %r, expected %r" % (key, field, r.get(field), value))
    variants = set().union(*seen.values()) if seen else set()
    for name in tensors:
        if seen.get(name) != variants or not variants:
            errors.append("tensor %s: rows of %s, expected every variant of the run %s"
                          % (name, sorted(seen.get(name, ())), sorted(variants)))
    for e in errors[:30]:
        print("check_gguf_rows: " + e)
    if errors:
        print("check_gguf_rows: %d errors" % len(errors))
        return 1
    print("check_gguf_rows: %d rows cover the %d ternary tensors x %d variants" % (len(rows), len(tensors),
                                                                                 len(variants)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
