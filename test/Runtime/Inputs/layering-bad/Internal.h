/* Internal.h - layers of a runtime that breaks them, for layering.test.
 *
 *   layer 1: High.c
 *   layer 2: Mid.c Peer.c
 *   layer 3: Low.c Gone.c
 */
void high_entry(void);
void mid_work(void);
void peer_work(void);
int low_helper(int x);
