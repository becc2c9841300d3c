/* Predicts a plain IDX image file's images with the model `fusec export`
 * wrote as mlp.o and mlp.h: raw f32 probabilities to argv[2], one label a
 * line to stdout. Pixels are scaled as fusec's IDX reader scales them. */
#include "mlp.h"
#include <stdio.h>

int main(int argc, char **argv) {
  static unsigned char header[16], pixels[MLP_X_ELEMENTS];
  static float x[MLP_X_ELEMENTS], logits[MLP_LOGITS_ELEMENTS],
      probabilities[MLP_PROBABILITIES_ELEMENTS];
  FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
  if (argc != 3 || !in || !out || fread(header, 1, 16, in) != 16)
    return 1;
  while (fread(pixels, 1, MLP_X_ELEMENTS, in) == MLP_X_ELEMENTS) {
    for (int i = 0; i < MLP_X_ELEMENTS; ++i)
      x[i] = pixels[i] / 255.0f;
    mlp(x, logits, probabilities);
    fwrite(probabilities, sizeof(float), MLP_PROBABILITIES_ELEMENTS, out);
    for (int row = 0; row < MLP_BATCH; ++row) {
      int best = 0;
      for (int c = 1; c < MLP_LOGITS_DIM1; ++c)
        if (logits[row * MLP_LOGITS_DIM1 + c] > logits[row * MLP_LOGITS_DIM1 + best])
          best = c;
      printf("%d\n", best);
    }
  }
  return fclose(out) != 0;
}
