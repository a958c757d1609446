/* Creates an instance of the CUDA model `mlp` (test/CLI/target-cuda-nodriver.test): on a
 * machine without a CUDA driver, creation fails and says why. */
#include "mlp.h"

#include <stdio.h>

int main(void) {
  tgc_model *m = NULL;
  int rc = mlp_create(&m);
  fprintf(stderr, "mlp_create: %d: %s\n", rc, rc ? tgc_model_last_error(NULL) : "");
  tgc_model_destroy(m);
  return rc == 0 && m ? 0 : 1;
}
