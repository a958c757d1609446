/* Peer.c - names that must not count as uses of other files: a static
 * function of its own that shares a name with High.c's, mid_work() in a
 * comment and in a string, and a member named like a function. */
#include "Internal.h"

struct ops {
  void (*mid_work)(void);
};

static void high_entry(void) {}

static const char *describe(void) { return "calls mid_work()"; }

void peer_work(void) {
  struct ops o = {0};
  high_entry();
  if (o.mid_work)
    o.mid_work();
  describe();
}
