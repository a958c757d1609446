// repr() of the containers a program builds: what f-strings, str() and repr() show of a
// plain list or dict (Formatting is otherwise FormatOpcodes.cpp's formatPythonValue).
#ifndef TGC_LIB_FRONTEND_PYTHON_FORMATTING_H
#define TGC_LIB_FRONTEND_PYTHON_FORMATTING_H

#include "Variables.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace tgc::py {

/// Whether `value` is a plain list or dict (no subclass: a deque or an OrderedDict shows
/// its class), or a tuple that holds one.
bool holdsPlainContainer(const Heap &heap, const Var &value);

/// repr() of such a value as CPython shows it: "[1, 'a']", "{'k': (2, [3])}", a list
/// that holds itself as "[[...]]"; the items as formatPythonValue's repr() shows them.
mlir::FailureOr<std::string> containerRepr(const Heap &heap, const Var &value, mlir::Location loc);

} // namespace tgc::py

#endif // TGC_LIB_FRONTEND_PYTHON_FORMATTING_H
