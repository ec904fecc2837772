/* Calls the ahead-of-time compiled `mlp` (tests/test_aot.py) the way a user program would:
 * fill the inputs, ask for the scratch size, call, print the outputs. Every input element is
 * ((i * step) % 11 - 5) / 8, exact in float, so the test rebuilds the same inputs in NumPy. */
#include <stdio.h>
#include <stdlib.h>
#include "mlp.h"

static void fill(float* values, int count, int step) {
    for (int i = 0; i < count; i++) values[i] = (float)((i * step) % 11 - 5) / 8.0f;
}

int main(void) {
    float x[8 * 5], w1[5 * 16], b1[16], w2[16 * 3], b2[3], logits[8 * 3];
    fill(x, 8 * 5, 1);
    fill(w1, 5 * 16, 2);
    fill(b1, 16, 3);
    fill(w2, 16 * 3, 4);
    fill(b2, 3, 5);
    void* scratch = malloc(mlp_scratch_bytes());
    if (scratch == NULL || mlp(x, w1, b1, w2, b2, logits, scratch) != 0) return 1;
    for (int i = 0; i < 8 * 3; i++) printf("%.9g\n", logits[i]);
    free(scratch);
    return 0;
}
