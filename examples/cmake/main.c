/* Runs the two models of examples/cmake/CMakeLists.txt: the MLP for inference on one
 * batch, and the trainable MLP's forward and backward, through the tgc_model_* C API of
 * the headers tgc_add_model generated (mlp.h, mlp_train.h). */
#include "mlp.h"
#include "mlp_train.h"

#include <stdio.h>

static int fail(tgc_model *model, const char *what) {
  fprintf(stderr, "error: %s: %s\n", what, tgc_model_last_error(model));
  return 1;
}

int main(void) {
  tgc_model *mlp = NULL, *train = NULL;
  if (mlp_create(&mlp) != 0)
    return fail(NULL, "mlp_create");
  if (mlp_train_create(&train) != 0)
    return fail(NULL, "mlp_train_create");

  /* x: float32 [4, 16]. */
  float x[4][16];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 16; ++j)
      x[i][j] = (float)((i * 16 + j) % 7) / 7.0f - 0.5f;
  int64_t shape[2] = {4, 16};
  DLTensor input = {
      .data = x, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor *inputs[1] = {&input};

  DLManagedTensor *outputs[1] = {NULL};
  if (tgc_model_run(mlp, inputs, 1, outputs, 1) != 0)
    return fail(mlp, "mlp run");
  DLTensor *y = &outputs[0]->dl_tensor;
  const float *values = (const float *)y->data;
  printf("%s: output [%lld, %lld], first row", tgc_model_name(mlp), (long long)y->shape[0],
         (long long)y->shape[1]);
  for (int64_t j = 0; j < y->shape[1]; ++j)
    printf(" %.4f", values[j]);
  printf("\n");
  outputs[0]->deleter(outputs[0]);

  printf("%s: trainable %d, %lld gradients\n", tgc_model_name(train), tgc_model_is_trainable(train),
         (long long)tgc_model_num_gradients(train));
  tgc_model_destroy(train);
  tgc_model_destroy(mlp);
  return 0;
}
