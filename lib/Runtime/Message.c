/* Message.c - Bounded error messages, and the failure of a call on an
 * instance. */
#include "Internal.h"

#include <inttypes.h>
#include <stdio.h>

/*===--- Bounded messages -------------------------------------------------===*/

void tgc_message_init(tgc_message *msg, char *buf, size_t capacity) {
  msg->buf = buf;
  msg->capacity = capacity;
  msg->length = 0;
  if (capacity > 0)
    buf[0] = '\0';
}

void tgc_message_append(tgc_message *msg, const char *format, ...) {
  if (msg->length + 1 >= msg->capacity)
    return;
  va_list args;
  va_start(args, format);
  int n = vsnprintf(msg->buf + msg->length, msg->capacity - msg->length, format, args);
  va_end(args);
  if (n < 0)
    return;
  msg->length += (size_t)n;
  if (msg->length >= msg->capacity)
    msg->length = msg->capacity - 1;
}

void tgc_message_append_shape(tgc_message *msg, const int64_t *sizes, uint32_t rank) {
  tgc_message_append(msg, "[");
  for (uint32_t d = 0; d < rank; ++d)
    tgc_message_append(msg, d ? ", %" PRId64 : "%" PRId64, sizes[d]);
  tgc_message_append(msg, "]");
}

/*===--- Failures ---------------------------------------------------------===*/

int tgc_fail(tgc_model *m, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(m->error, sizeof m->error, format, args);
  va_end(args);
  return 1;
}
