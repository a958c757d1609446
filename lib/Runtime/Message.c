/* Message.c - Bounded error messages, the failure of a call on an instance,
 * and the claim that lets one call at a time use an instance. */
#include "Internal.h"

#include <inttypes.h>
#include <stdatomic.h>
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

/*===--- One call at a time -----------------------------------------------===*/

/* The instance this thread's last call was refused on, because another call held it. */
static _Thread_local const tgc_model *refused_on;
static const char in_use[] = "the instance is in use by another call (another thread's): "
                             "an instance serves one call at a time; use one per thread";

int tgc_model_claim(tgc_model *m) {
  int idle = 0;
  if (atomic_compare_exchange_strong_explicit(&m->busy, &idle, 1, memory_order_acquire,
                                              memory_order_relaxed)) {
    if (refused_on == m)
      refused_on = NULL;
    return 0;
  }
  refused_on = m;
  return 1;
}

void tgc_model_release(tgc_model *m) { atomic_store_explicit(&m->busy, 0, memory_order_release); }

const char *tgc_model_refusal(const tgc_model *m) { return m && refused_on == m ? in_use : NULL; }

/*===--- Failures ---------------------------------------------------------===*/

int tgc_fail(tgc_model *m, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(m->error, sizeof m->error, format, args);
  va_end(args);
  return 1;
}
