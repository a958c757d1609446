/* Low.c - takes the address of a higher layer's function. */
#include "Internal.h"

int low_helper(int x) {
  void (*callback)(void) = mid_work;
  return x > 0 && callback != 0;
}
