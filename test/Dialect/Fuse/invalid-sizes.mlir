// RUN: fuse-opt %s --split-input-file --verify-diagnostics
// Every static tensor type a module holds must have a byte size that fits
// in int64: checked where modules are loaded (fuse-opt, fusec, the engine),
// so that no element count, allocation or workspace size computed later can
// wrap. An error names the op or argument and the type.

func.func @broadcast(%x: tensor<f32>) -> tensor<4611686018427387904x4xf32> {
  // expected-error @below {{'fuse.broadcast_to' op result #0 has type tensor<4611686018427387904x4xf32>, too large: its size in bytes does not fit in 64 bits}}
  %y = fuse.broadcast_to %x : (tensor<f32>) -> tensor<4611686018427387904x4xf32>
  return %y : tensor<4611686018427387904x4xf32>
}

// -----

// The element count fits; the bytes do not (2^62 f16 is 2^63 bytes).
func.func @bytes() -> tensor<4611686018427387904xf16> {
  // expected-error @below {{result #0 has type tensor<4611686018427387904xf16>, too large}}
  %c = fuse.constant dense<0.0> : tensor<4611686018427387904xf16>
  return %c : tensor<4611686018427387904xf16>
}

// -----

// An argument, checked before the ops that read it.
// expected-error @below {{argument #1 has type tensor<4294967296x4294967296xf32>, too large}}
func.func @argument(%x: tensor<f32>, %y: tensor<4294967296x4294967296xf32>) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

// A declaration's signature.
// expected-error @below {{result #0 has type tensor<3074457345618258603x3xi8>, too large}}
func.func private @declared(tensor<f32>) -> tensor<3074457345618258603x3xi8>

// -----

// Sizes up to 2^63 - 1 bytes pass (an i1 takes a byte).
func.func @fits(%a: tensor<9223372036854775807xi8>, %b: tensor<9223372036854775807xi1>,
                %c: tensor<1152921504606846975x2xf32>) -> tensor<9223372036854775807xi8> {
  return %a : tensor<9223372036854775807xi8>
}
