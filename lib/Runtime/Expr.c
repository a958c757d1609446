/* Expr.c - Checking, evaluating, solving and printing size expressions. */
#include "Internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_binary(uint8_t opcode) { return opcode >= TGC_EXPR_ADD && opcode <= TGC_EXPR_MOD; }

int tgc_expr_check(const tgc_expr *e, uint32_t num_symbols, char *why, size_t why_capacity) {
  uint32_t depth = 0;
  for (uint32_t i = 0; i < e->num_ops; ++i) {
    const tgc_expr_op *op = &e->ops[i];
    if (op->opcode > TGC_EXPR_NEG) {
      snprintf(why, why_capacity, "unknown opcode %u", (unsigned)op->opcode);
      return 1;
    }
    if (op->opcode == TGC_EXPR_SYM && (op->operand < 0 || (uint64_t)op->operand >= num_symbols)) {
      snprintf(why, why_capacity, "symbol index %" PRId64 " out of range", op->operand);
      return 1;
    }
    uint32_t pops = is_binary(op->opcode) ? 2 : op->opcode == TGC_EXPR_NEG;
    if (depth < pops) {
      snprintf(why, why_capacity, "stack underflow at operation %" PRIu32, i);
      return 1;
    }
    depth = depth - pops + 1;
  }
  if (depth != 1) {
    snprintf(why, why_capacity, "%" PRIu32 " values left on the stack", depth);
    return 1;
  }
  return 0;
}

enum tgc_eval_status tgc_floordiv(int64_t a, int64_t b, int64_t *result) {
  if (b == 0)
    return TGC_EVAL_DIVISION_BY_ZERO;
  if (a == INT64_MIN && b == -1)
    return TGC_EVAL_OVERFLOW;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  *result = q;
  return TGC_EVAL_OK;
}

enum tgc_eval_status tgc_ceildiv(int64_t a, int64_t b, int64_t *result) {
  if (b == 0)
    return TGC_EVAL_DIVISION_BY_ZERO;
  if (a == INT64_MIN && b == -1)
    return TGC_EVAL_OVERFLOW;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0)))
    ++q;
  *result = q;
  return TGC_EVAL_OK;
}

enum tgc_eval_status tgc_mod(int64_t a, int64_t b, int64_t *result) {
  if (b == 0)
    return TGC_EVAL_DIVISION_BY_ZERO;
  if (b == -1) {
    *result = 0;
    return TGC_EVAL_OK;
  }
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  *result = r;
  return TGC_EVAL_OK;
}

static enum tgc_eval_status apply_binary(uint8_t opcode, int64_t a, int64_t b, int64_t *result) {
  switch (opcode) {
  case TGC_EXPR_ADD:
    return __builtin_add_overflow(a, b, result) ? TGC_EVAL_OVERFLOW : TGC_EVAL_OK;
  case TGC_EXPR_MUL:
    return __builtin_mul_overflow(a, b, result) ? TGC_EVAL_OVERFLOW : TGC_EVAL_OK;
  case TGC_EXPR_FLOORDIV:
    return tgc_floordiv(a, b, result);
  case TGC_EXPR_CEILDIV:
    return tgc_ceildiv(a, b, result);
  default:
    return tgc_mod(a, b, result);
  }
}

enum tgc_eval_status tgc_expr_eval(const tgc_expr *e, const int64_t *values, const bool *bound,
                                   int64_t *result) {
  int64_t stack_storage[32];
  int64_t *stack = stack_storage;
  if (e->num_ops > 32) {
    stack = malloc(e->num_ops * sizeof *stack);
    if (!stack)
      return TGC_EVAL_OVERFLOW;
  }
  enum tgc_eval_status status = TGC_EVAL_OK;
  uint32_t depth = 0;
  for (uint32_t i = 0; i < e->num_ops && status == TGC_EVAL_OK; ++i) {
    const tgc_expr_op *op = &e->ops[i];
    switch (op->opcode) {
    case TGC_EXPR_CONST:
      stack[depth++] = op->operand;
      break;
    case TGC_EXPR_SYM:
      if (!bound[op->operand])
        status = TGC_EVAL_UNBOUND_SYMBOL;
      stack[depth++] = values[op->operand];
      break;
    case TGC_EXPR_NEG:
      if (stack[depth - 1] == INT64_MIN)
        status = TGC_EVAL_OVERFLOW;
      stack[depth - 1] = -stack[depth - 1];
      break;
    default:
      status = apply_binary(op->opcode, stack[depth - 2], stack[depth - 1], &stack[depth - 2]);
      --depth;
      break;
    }
  }
  if (status == TGC_EVAL_OK)
    *result = stack[0];
  if (stack != stack_storage)
    free(stack);
  return status;
}

/*===--- Affine analysis --------------------------------------------------===*/

static const tgc_affine NOT_AFFINE = {false, -1, 0, 0};

static tgc_affine affine_constant(int64_t c) {
  tgc_affine a = {true, -1, 0, c};
  return a;
}

static tgc_affine affine_add(tgc_affine a, tgc_affine b) {
  if (a.symbol >= 0 && b.symbol >= 0 && a.symbol != b.symbol)
    return NOT_AFFINE;
  tgc_affine sum = {true, a.symbol >= 0 ? a.symbol : b.symbol, 0, 0};
  if (__builtin_add_overflow(a.coefficient, b.coefficient, &sum.coefficient) ||
      __builtin_add_overflow(a.constant, b.constant, &sum.constant))
    return NOT_AFFINE;
  return sum;
}

static tgc_affine affine_scale(tgc_affine a, int64_t factor) {
  tgc_affine product = {true, a.symbol, 0, 0};
  if (__builtin_mul_overflow(a.coefficient, factor, &product.coefficient) ||
      __builtin_mul_overflow(a.constant, factor, &product.constant))
    return NOT_AFFINE;
  return product;
}

/* Combines two stack entries; non-linear operations are affine only when
 * both sides are constants (then they fold). */
static tgc_affine affine_binary(uint8_t opcode, tgc_affine a, tgc_affine b) {
  if (!a.is_affine || !b.is_affine)
    return NOT_AFFINE;
  if (opcode == TGC_EXPR_ADD)
    return affine_add(a, b);
  if (opcode == TGC_EXPR_MUL && b.symbol < 0)
    return affine_scale(a, b.constant);
  if (opcode == TGC_EXPR_MUL && a.symbol < 0)
    return affine_scale(b, a.constant);
  if (a.symbol >= 0 || b.symbol >= 0)
    return NOT_AFFINE;
  int64_t folded;
  if (apply_binary(opcode, a.constant, b.constant, &folded) != TGC_EVAL_OK)
    return NOT_AFFINE;
  return affine_constant(folded);
}

tgc_affine tgc_expr_affine(const tgc_expr *e) {
  tgc_affine *stack = malloc(e->num_ops * sizeof *stack);
  if (!stack)
    return NOT_AFFINE;
  uint32_t depth = 0;
  for (uint32_t i = 0; i < e->num_ops; ++i) {
    const tgc_expr_op *op = &e->ops[i];
    if (op->opcode == TGC_EXPR_CONST) {
      stack[depth++] = affine_constant(op->operand);
    } else if (op->opcode == TGC_EXPR_SYM) {
      tgc_affine s = {true, (int32_t)op->operand, 1, 0};
      stack[depth++] = s;
    } else if (op->opcode == TGC_EXPR_NEG) {
      stack[depth - 1] =
          stack[depth - 1].is_affine ? affine_scale(stack[depth - 1], -1) : NOT_AFFINE;
    } else {
      stack[depth - 2] = affine_binary(op->opcode, stack[depth - 2], stack[depth - 1]);
      --depth;
    }
  }
  tgc_affine result = stack[0];
  free(stack);
  if (result.is_affine && result.coefficient == 0)
    result.symbol = -1;
  return result;
}

bool tgc_expr_uses_symbol(const tgc_expr *e, uint32_t symbol) {
  for (uint32_t i = 0; i < e->num_ops; ++i)
    if (e->ops[i].opcode == TGC_EXPR_SYM && e->ops[i].operand == symbol)
      return true;
  return false;
}

/*===--- Printing ---------------------------------------------------------===*/

/* Precedence: sums < products < negation < atoms. */
enum { PREC_ADD = 1, PREC_MUL = 2, PREC_NEG = 3, PREC_ATOM = 4 };

typedef struct expr_tree {
  const tgc_expr *expr;
  const tgc_symbol_sig *symbols;
  uint32_t *lhs; /* operand positions per operation */
  uint32_t *rhs;
} expr_tree;

static int precedence(uint8_t opcode) {
  switch (opcode) {
  case TGC_EXPR_ADD:
    return PREC_ADD;
  case TGC_EXPR_MUL:
  case TGC_EXPR_FLOORDIV:
  case TGC_EXPR_MOD:
    return PREC_MUL;
  case TGC_EXPR_NEG:
    return PREC_NEG;
  default:
    return PREC_ATOM; /* constants, symbols, ceildiv(a, b) */
  }
}

static void print_node(const expr_tree *t, uint32_t i, tgc_message *out);

/* Prints operand `i`, parenthesized when it binds looser than `min_prec`. */
static void print_operand(const expr_tree *t, uint32_t i, int min_prec, tgc_message *out) {
  const tgc_expr_op *op = &t->expr->ops[i];
  bool negative_constant = op->opcode == TGC_EXPR_CONST && op->operand < 0;
  int prec = negative_constant ? PREC_NEG : precedence(op->opcode);
  if (prec >= min_prec) {
    print_node(t, i, out);
    return;
  }
  tgc_message_append(out, "(");
  print_node(t, i, out);
  tgc_message_append(out, ")");
}

/* a + b, written a - c when b is -c or a negative constant. */
static void print_sum(const expr_tree *t, uint32_t i, tgc_message *out) {
  print_operand(t, t->lhs[i], PREC_ADD, out);
  const tgc_expr_op *rhs = &t->expr->ops[t->rhs[i]];
  if (rhs->opcode == TGC_EXPR_CONST && rhs->operand < 0 && rhs->operand != INT64_MIN) {
    tgc_message_append(out, " - %" PRId64, -rhs->operand);
    return;
  }
  if (rhs->opcode == TGC_EXPR_NEG) {
    tgc_message_append(out, " - ");
    print_operand(t, t->lhs[t->rhs[i]], PREC_MUL, out);
    return;
  }
  tgc_message_append(out, " + ");
  print_operand(t, t->rhs[i], PREC_ADD, out);
}

static void print_node(const expr_tree *t, uint32_t i, tgc_message *out) {
  const tgc_expr_op *op = &t->expr->ops[i];
  switch (op->opcode) {
  case TGC_EXPR_CONST:
    tgc_message_append(out, "%" PRId64, op->operand);
    return;
  case TGC_EXPR_SYM:
    tgc_message_append(out, "%s", t->symbols[op->operand].name);
    return;
  case TGC_EXPR_NEG:
    tgc_message_append(out, "-");
    print_operand(t, t->lhs[i], PREC_ATOM, out);
    return;
  case TGC_EXPR_ADD:
    print_sum(t, i, out);
    return;
  case TGC_EXPR_CEILDIV:
    tgc_message_append(out, "ceildiv(");
    print_node(t, t->lhs[i], out);
    tgc_message_append(out, ", ");
    print_node(t, t->rhs[i], out);
    tgc_message_append(out, ")");
    return;
  default: {
    const char *symbol = op->opcode == TGC_EXPR_MUL        ? "*"
                         : op->opcode == TGC_EXPR_FLOORDIV ? "//"
                                                           : "%";
    print_operand(t, t->lhs[i], PREC_MUL, out);
    tgc_message_append(out, "%s", symbol);
    /* Right operands of * // % need parentheses at equal precedence. */
    print_operand(t, t->rhs[i], PREC_MUL + 1, out);
    return;
  }
  }
}

void tgc_expr_format(const tgc_expr *e, const tgc_symbol_sig *symbols, char *buf, size_t capacity) {
  tgc_message out;
  tgc_message_init(&out, buf, capacity);
  uint32_t *positions = malloc(3 * (size_t)e->num_ops * sizeof *positions);
  if (!positions) {
    tgc_message_append(&out, "<expression>");
    return;
  }
  expr_tree t = {e, symbols, positions + e->num_ops, positions + 2 * (size_t)e->num_ops};
  uint32_t depth = 0;
  for (uint32_t i = 0; i < e->num_ops; ++i) {
    uint8_t opcode = e->ops[i].opcode;
    if (is_binary(opcode)) {
      t.lhs[i] = positions[depth - 2];
      t.rhs[i] = positions[depth - 1];
      depth -= 2;
    } else if (opcode == TGC_EXPR_NEG) {
      t.lhs[i] = positions[--depth];
    }
    positions[depth++] = i;
  }
  print_node(&t, e->num_ops - 1, &out);
  free(positions);
}
