// A dialect file that reaches up into the passes.
#include "tgc/Dialect/TgcDialect.h"
#include "tgc/Transforms/Passes.h"
