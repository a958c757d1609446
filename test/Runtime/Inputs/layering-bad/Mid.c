/* Mid.c - calls up a layer and across its own layer. */
#include "Internal.h"

void mid_work(void) {
  if (low_helper(2))
    high_entry();
  peer_work();
}
