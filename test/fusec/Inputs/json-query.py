"""Prints Python expressions of a JSON file's value `j`, for tests.

usage: json-query.py FILE EXPR...
Prints `EXPR: VALUE` for each, e.g. `j['steps']: 20` (`math` is there too). The file must be
standard JSON: NaN and Infinity, which Python's json module would accept,
are errors.
"""

import json
import math
import sys

if len(sys.argv) < 3:
    sys.exit(__doc__)
with open(sys.argv[1]) as f:
    j = json.load(f, parse_constant=lambda c: sys.exit(
        f"{sys.argv[1]}: not JSON: {c}"))
for expr in sys.argv[2:]:
    print(f"{expr}: {eval(expr, {'j': j, 'math': math})}")
