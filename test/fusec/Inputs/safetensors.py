"""Reads (and edits) safetensors files (as `fusec train` checkpoints them)
for tests.

usage: safetensors.py header FILE
         Checks the layout (an 8-byte little-endian header length, a JSON
         header, tensors' data exactly covering the rest of the file) and
         prints the metadata (sorted) and each tensor's dtype and shape.
       safetensors.py compare A B [NAME...]
         Prints whether the named tensors (all of them when none are named)
         hold the same bytes in A and B; the metadata is not compared.
       safetensors.py close A B ATOL [NAME...]
         Prints, per F32 tensor (all of them when none are named), whether
         every element of A and B differs by at most ATOL ("close"), else the
         largest difference and where.
       safetensors.py set-metadata IN OUT KEY VALUE
         Writes IN to OUT with metadata KEY set to VALUE (the tensors kept).
       safetensors.py drop IN OUT NAME...
         Writes IN to OUT without the named tensors (the metadata kept).
"""

import json
import struct
import sys

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4,
         "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        sys.exit(f"{path}: shorter than the 8-byte header length")
    (length,) = struct.unpack("<Q", data[:8])
    if 8 + length > len(data):
        sys.exit(f"{path}: header length {length} exceeds the file")
    header = json.loads(data[8:8 + length])
    metadata = header.pop("__metadata__", {})
    body = data[8 + length:]
    tensors, covered = {}, 0
    for name, entry in sorted(header.items(),
                              key=lambda e: e[1]["data_offsets"][0]):
        begin, end = entry["data_offsets"]
        count = 1
        for d in entry["shape"]:
            count *= d
        if begin != covered or end - begin != count * SIZES[entry["dtype"]]:
            sys.exit(f"{path}: tensor '{name}' has data bytes {begin} to "
                     f"{end}, expected {covered} to "
                     f"{covered + count * SIZES[entry['dtype']]}")
        covered = end
        tensors[name] = (entry["dtype"], entry["shape"], body[begin:end])
    if covered != len(body):
        sys.exit(f"{path}: tensors cover {covered} of {len(body)} data bytes")
    return metadata, tensors


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "header":
        metadata, tensors = load(sys.argv[2])
        for key in sorted(metadata):
            print(f"metadata {key}: {metadata[key]}")
        for name, (dtype, shape, _) in tensors.items():
            print(f"tensor {name} {dtype} {shape}")
    elif len(sys.argv) == 6 and sys.argv[1] == "set-metadata":
        with open(sys.argv[2], "rb") as f:
            data = f.read()
        (length,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8:8 + length])
        header.setdefault("__metadata__", {})[sys.argv[4]] = sys.argv[5]
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)
        with open(sys.argv[3], "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + data[8 + length:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "drop":
        metadata, tensors = load(sys.argv[2])
        header, body = {"__metadata__": metadata} if metadata else {}, b""
        for name, (dtype, shape, data) in tensors.items():
            if name in sys.argv[4:]:
                continue
            header[name] = {"dtype": dtype, "shape": shape,
                            "data_offsets": [len(body), len(body) + len(data)]}
            body += data
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)
        with open(sys.argv[3], "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + body)
    elif len(sys.argv) >= 5 and sys.argv[1] == "close":
        (_, a), (_, b) = load(sys.argv[2]), load(sys.argv[3])
        tolerance = float(sys.argv[4])
        for name in sys.argv[5:] or list(a):
            if a[name][0] != "F32" or a[name][:2] != b[name][:2]:
                print(f"{name}: not two F32 tensors of one shape")
                continue
            count = len(a[name][2]) // 4
            x = struct.unpack(f"<{count}f", a[name][2])
            y = struct.unpack(f"<{count}f", b[name][2])
            worst, where = max((abs(p - q), i) for i, (p, q) in
                               enumerate(zip(x, y))) if count else (0.0, 0)
            if worst <= tolerance:
                print(f"{name}: close")
            else:
                print(f"{name}: differs by {worst:g} at element {where}")
    elif len(sys.argv) >= 4 and sys.argv[1] == "compare":
        (_, a), (_, b) = load(sys.argv[2]), load(sys.argv[3])
        names = sys.argv[4:]
        if names:
            for name in names:
                same = a[name][2] == b[name][2]
                print(f"{name} {'same' if same else 'different'}")
        else:
            same = sorted(a) == sorted(b) and all(
                a[n][2] == b[n][2] for n in a)
            print(f"data {'same' if same else 'different'}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
