"""Compares the per-epoch losses of two `fusec train --json` summaries.

usage: losses.py A.json B.json TOL
Prints "losses close" when both have the same number of epochs and every
epoch's train_loss and test_loss differ by at most TOL, else the largest
difference and its epoch.
"""

import json
import sys

if len(sys.argv) != 4:
    sys.exit(__doc__)
a, b = (json.load(open(p))["history"] for p in sys.argv[1:3])
tolerance = float(sys.argv[3])
if len(a) != len(b):
    sys.exit(f"{len(a)} epochs against {len(b)}")
worst, where = 0.0, 0
for epoch, (x, y) in enumerate(zip(a, b), 1):
    for key in ("train_loss", "test_loss"):
        if abs(x[key] - y[key]) > worst:
            worst, where = abs(x[key] - y[key]), epoch
if worst <= tolerance:
    print("losses close")
else:
    print(f"losses differ by {worst:g} in epoch {where}")
