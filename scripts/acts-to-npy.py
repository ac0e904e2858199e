#!/usr/bin/env python3
"""acts-to-npy.py CAPTURE OUT_DIR: the activation dump of the capture callback (docs/real-model.md) -> one NumPy .npy
file per weight tensor in OUT_DIR (NAME.npy, shape (T, K), '<f4'), the format `hsdr states --activations` and
`hsdr quality --gguf FILE --activations OUT_DIR` read (harness/activations.h). Standard library only.

CAPTURE holds records, each a text line "hsdr-act name=NAME ne0=K ne1=T type=f32\\n" followed by K * T little-endian
float32 values (T token rows of K values: the src1 of one MUL_MAT whose src0 is the ternary weight NAME). Records of
one NAME (prompt processing, then each decoded token) are concatenated along the tokens in file order; every record
of a NAME must have the same K. A malformed record stops the conversion with its byte offset (exit 2), and nothing
is written unless the whole file converts (each .npy is written to a temporary name, then renamed).
"""
import os
import struct
import sys


def fail(msg):
    print("acts-to-npy: " + msg, file=sys.stderr)
    sys.exit(2)


def npy_header(t, k):
    text = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (t, k)
    pad = (64 - (10 + len(text) + 1) % 64) % 64
    h = (text + " " * pad + "\n").encode()
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h


def read_records(path, data):
    sets, order, pos = {}, [], 0
    while pos < len(data):
        end = data.find(b"\n", pos, pos + 1024)
        if end < 0:
            fail("%s: offset %d: record header: no line end within 1024 bytes" % (path, pos))
        fields = data[pos:end].decode("ascii", "replace").split(" ")
        if fields[0] != "hsdr-act":
            fail("%s: offset %d: record header: expected 'hsdr-act', found %r" % (path, pos, fields[0][:20]))
        kv = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        for key in ("name", "ne0", "ne1", "type"):
            if key not in kv:
                fail("%s: offset %d: record header: no %s=" % (path, pos, key))
        if kv["type"] != "f32":
            fail("%s: offset %d: record header: type=%s, expected f32" % (path, pos, kv["type"]))
        try:
            k, t = int(kv["ne0"]), int(kv["ne1"])
        except ValueError:
            fail("%s: offset %d: record header: ne0/ne1 are not integers" % (path, pos))
        if k <= 0 or t <= 0:
            fail("%s: offset %d: record header: ne0=%d ne1=%d, expected positive sizes" % (path, pos, k, t))
        body = end + 1
        if len(data) - body < 4 * k * t:
            fail("%s: offset %d: record '%s': needs %d bytes of data, %d left (truncated)"
                 % (path, body, kv["name"], 4 * k * t, len(data) - body))
        name = kv["name"]
        if name not in sets:
            sets[name] = [k, 0, []]
            order.append(name)
        if sets[name][0] != k:
            fail("%s: offset %d: record '%s': ne0=%d, but an earlier record has %d" % (path, pos, name, k,
                                                                                       sets[name][0]))
        sets[name][1] += t
        sets[name][2].append(data[body:body + 4 * k * t])
        pos = body + 4 * k * t
    if not order:
        fail("%s: no record" % path)
    return sets, order


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], "rb") as f:
        data = f.read()
    sets, order = read_records(argv[1], data)
    os.makedirs(argv[2], exist_ok=True)
    for name in order:
        if "/" in name or name.startswith("."):
            fail("%s: tensor name %r cannot be a file name" % (argv[1], name))
    for name in order:
        k, t, chunks = sets[name]
        path = os.path.join(argv[2], name + ".npy")
        with open(path + ".tmp", "wb") as f:
            f.write(npy_header(t, k) + b"".join(chunks))
        os.replace(path + ".tmp", path)
        print("acts-to-npy: %s: %d tokens x %d" % (path, t, k))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
