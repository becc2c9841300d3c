"""Writes a tiny, easy IDX image set for testing `fusec train`.

usage: make-idx.py DIR TRAIN_COUNT TEST_COUNT SEED [--plain]

DIR gets train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (without the .gz and
uncompressed with --plain): 28x28 unsigned-byte images of 10 classes, where
an image of label L has a bright horizontal band on rows 2L+4 to 2L+5 over
low noise, so that a small model learns the classes within an epoch or two.
The same arguments always write the same bytes.
"""

import gzip
import os
import random
import struct
import sys


# Random bytes mapped to the noise (0-59) and band (180-255) ranges.
NOISE = bytes(v * 60 // 256 for v in range(256))
BAND = bytes(180 + v * 76 // 256 for v in range(256))


def images_and_labels(count, rng):
    labels = bytes(rng.randrange(10) for _ in range(count))
    pixels = bytearray()
    for label in labels:
        image = bytearray(rng.randbytes(28 * 28).translate(NOISE))
        band = slice((2 * label + 4) * 28, (2 * label + 6) * 28)
        image[band] = rng.randbytes(2 * 28).translate(BAND)
        pixels += image
    return bytes(pixels), labels


def write(path, data, plain):
    if plain:
        with open(path, "wb") as f:
            f.write(data)
    else:
        # mtime=0: the same bytes on every run.
        with open(path + ".gz", "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
                f.write(data)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    plain = "--plain" in sys.argv[1:]
    if len(args) != 4:
        sys.exit(__doc__)
    out, train, test, seed = args[0], int(args[1]), int(args[2]), int(args[3])
    os.makedirs(out, exist_ok=True)
    rng = random.Random(seed)
    for prefix, count in (("train", train), ("t10k", test)):
        pixels, labels = images_and_labels(count, rng)
        write(os.path.join(out, prefix + "-images-idx3-ubyte"),
              struct.pack(">BBBBIII", 0, 0, 8, 3, count, 28, 28) + pixels, plain)
        write(os.path.join(out, prefix + "-labels-idx1-ubyte"),
              struct.pack(">BBBBI", 0, 0, 8, 1, count) + labels, plain)


if __name__ == "__main__":
    main()
