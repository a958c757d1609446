/* High.c - uses lower layers only: no error. */
#include "Internal.h"

void high_entry(void) {
  mid_work();
  peer_work();
  low_helper(1);
}
