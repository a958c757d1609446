/* Calls the compiled MLP through its C API: create an instance, run it on one batch,
 * print the outputs, destroy it. Build: cc main.c model.so (see examples/run.sh). */
#include "model.h"

#include <stdio.h>

int main(void) {
  tgc_model *model = NULL;
  if (model_create(&model) != 0) {
    fprintf(stderr, "error: %s\n", tgc_model_last_error(NULL));
    return 1;
  }
  /* One input: x, float32 [4, 16]. */
  float x[4][16];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 16; ++j)
      x[i][j] = (float)((i * 16 + j) % 7) / 7.0f - 0.5f;
  int64_t shape[2] = {4, 16};
  DLTensor input = {.data = x,
                    .device = {kDLCPU, 0},
                    .ndim = 2,
                    .dtype = {kDLFloat, 32, 1},
                    .shape = shape,
                    .strides = NULL,
                    .byte_offset = 0};
  DLTensor *inputs[1] = {&input};
  DLManagedTensor *outputs[1] = {NULL};
  if (tgc_model_run(model, inputs, 1, outputs, 1) != 0) {
    fprintf(stderr, "error: %s\n", tgc_model_last_error(model));
    tgc_model_destroy(model);
    return 1;
  }
  DLTensor *y = &outputs[0]->dl_tensor;
  const float *values = (const float *)y->data;
  printf("%s: output 0 has shape [%lld, %lld]\n", tgc_model_name(model), (long long)y->shape[0],
         (long long)y->shape[1]);
  for (int64_t i = 0; i < y->shape[0]; ++i) {
    for (int64_t j = 0; j < y->shape[1]; ++j)
      printf(" %8.4f", values[i * y->shape[1] + j]);
    printf("\n");
  }
  outputs[0]->deleter(outputs[0]);
  tgc_model_destroy(model);
  return 0;
}
