"""What the committed-fixture writers (tests/make_gguf.py, tests/make_acts.py) share: fp32 rounding, the data hash
of `hsdr inspect`, and their `write DIR` / `check DIR` commands. Python standard library only."""
import os
import struct


def f32(x):
    """x rounded to the nearest fp32, as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def data_hash(data):
    """FNV-1a 64 over little-endian 64-bit words (last one zero-padded), then the byte count (harness/inspect.c)."""
    h, prime, mask = 0xcbf29ce484222325, 0x100000001b3, (1 << 64) - 1
    for i in range(0, len(data), 8):
        h = ((h ^ int.from_bytes(data[i:i + 8].ljust(8, b"\0"), "little")) * prime) & mask
    return "%016x" % (((h ^ len(data)) * prime) & mask)


def write_or_check(tool, command, directory, files):
    """`write DIR`: every file of files (name relative to DIR -> bytes) written, folders made; `check DIR`: each
    compared with what is there. The exit code (0, or 1 when a file differs); None for another command."""
    if command == "write":
        for name, data in files.items():
            path = os.path.join(directory, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        print("%s: %d files written to %s" % (tool, len(files), directory))
        return 0
    if command == "check":
        bad = 0
        for name, data in files.items():
            path = os.path.join(directory, name)
            if not os.path.exists(path) or open(path, "rb").read() != data:
                print("%s: %s differs from what the writer produces (run: %s.py write DIR)" % (tool, path, tool))
                bad += 1
        print("%s: %d files checked, %d differ" % (tool, len(files), bad))
        return 1 if bad else 0
    return None
