/* Links two static models (emit-static.test) and runs the first on one batch. */
#include "mlp.h"
#include "trainer.h"

#include <stdio.h>

int main(void) {
  tgc_model *mlp = NULL, *trainer = NULL;
  if (mlp_create(&mlp) != 0 || trainer_create(&trainer) != 0) {
    fprintf(stderr, "error: create failed\n");
    return 1;
  }
  float x[4][16];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 16; ++j)
      x[i][j] = (float)((i * 16 + j) % 7) / 7.0f - 0.5f;
  int64_t shape[2] = {4, 16};
  DLTensor input = {
      .data = x, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor *inputs[1] = {&input};
  DLManagedTensor *outputs[1] = {NULL};
  if (tgc_model_run(mlp, inputs, 1, outputs, 1) != 0) {
    fprintf(stderr, "error: %s\n", tgc_model_last_error(mlp));
    return 1;
  }
  const float *y = (const float *)outputs[0]->dl_tensor.data;
  printf("mlp: %.4f %.4f %.4f\n", y[0], y[1], y[2]);
  outputs[0]->deleter(outputs[0]);
  printf("trainer: trainable %d\n", tgc_model_is_trainable(trainer));
  tgc_model_destroy(trainer);
  tgc_model_destroy(mlp);
  return 0;
}
