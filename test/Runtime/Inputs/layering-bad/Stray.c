/* Stray.c - in no layer. */
int stray(void) { return 0; }
