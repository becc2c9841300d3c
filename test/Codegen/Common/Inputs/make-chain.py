"""Writes a chain of N element-wise linalg.generic ops for fuse-elementwise-fusion.

usage: make-chain.py N [--unary]

Op i of the chain reads op i-1: every third adds one of ten function
arguments (a second input, so the fused op's inputs grow along the chain),
the others alternate math.exp and arith.negf. With --unary, every op is
unary (exp and negf alternating).
"""

import sys

n = int(sys.argv[1])
unary = "--unary" in sys.argv[2:]
args = ", ".join("%%b%d: tensor<4x8xf32>" % k for k in range(10))
print("#id = affine_map<(d0, d1) -> (d0, d1)>")
print("func.func @chain(%%x: tensor<4x8xf32>, %s) -> tensor<4x8xf32> {" % args)
prev = "%x"
for i in range(n):
    print("  %%e%d = tensor.empty() : tensor<4x8xf32>" % i)
    if i % 3 == 0 and not unary:
        print("  %%g%d = linalg.generic {indexing_maps = [#id, #id, #id], "
              "iterator_types = [\"parallel\", \"parallel\"]} "
              "ins(%s, %%b%d : tensor<4x8xf32>, tensor<4x8xf32>) "
              "outs(%%e%d : tensor<4x8xf32>) {" % (i, prev, i % 10, i))
        print("  ^bb0(%in: f32, %b: f32, %out: f32):")
        print("    %r = arith.addf %in, %b : f32")
    else:
        print("  %%g%d = linalg.generic {indexing_maps = [#id, #id], "
              "iterator_types = [\"parallel\", \"parallel\"]} "
              "ins(%s : tensor<4x8xf32>) outs(%%e%d : tensor<4x8xf32>) {"
              % (i, prev, i))
        print("  ^bb0(%in: f32, %out: f32):")
        print("    %%r = %s %%in : f32" % ("math.exp" if i % 2 else "arith.negf"))
    print("    linalg.yield %r : f32")
    print("  } -> tensor<4x8xf32>")
    prev = "%%g%d" % i
print("  return %s : tensor<4x8xf32>" % prev)
print("}")
