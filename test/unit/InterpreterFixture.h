// An interpreter over no trace objects, with a function to emit into and a tensor
// argument, for the unit tests of the interpreter's registries.
#ifndef TGC_TEST_UNIT_INTERPRETERFIXTURE_H
#define TGC_TEST_UNIT_INTERPRETERFIXTURE_H

#include "Frontend/Python/Interpreter.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

/// A table without objects: the tests build what the program reaches themselves.
class EmptyObjectTable : public tgc::py::ObjectTable {
public:
  llvm::StringRef getPath() const override { return "handmade.trace"; }
  llvm::Expected<const tgc::py::Json *> getObject(size_t id) const override {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no objects");
  }
  llvm::Expected<tgc::py::CodeRef> getCode(size_t id) const override {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no code");
  }
};

/// An interpreter that emits into `@forward(%x: !tgc.tensor<[2, 3], f32>)` and collects
/// the errors it reports.
struct InterpreterFixture {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::OpBuilder builder;
  EmptyObjectTable objects;
  tgc::py::Interpreter interpreter;
  std::vector<std::string> diagnostics;
  mlir::ScopedDiagnosticHandler handler;
  mlir::Value x;

  InterpreterFixture()
      : builder(&loadDialects(ctx)),
        interpreter(objects, builder,
                    [](int64_t, const tgc::py::Json &) -> mlir::FailureOr<mlir::Value> {
                      return mlir::failure();
                    }),
        handler(&ctx, [this](mlir::Diagnostic &diagnostic) {
          diagnostics.push_back(diagnostic.str());
          return mlir::success();
        }) {
    module = mlir::parseSourceString<mlir::ModuleOp>(
        "func.func @forward(%x: !tgc.tensor<[2, 3], f32, strides=[3, 1]>) { return }", &ctx);
    REQUIRE(module);
    auto func = llvm::cast<mlir::func::FuncOp>(module->getBody()->front());
    x = func.getArgument(0);
    builder.setInsertionPointToStart(&func.getBody().front());
  }

  /// Where the tests' calls are.
  mlir::Location loc() { return mlir::FileLineColLoc::get(&ctx, "handmade.py", 1, 0); }

  /// A new tensor object over `%x`.
  tgc::py::Var tensor() {
    tgc::py::HeapObject object;
    object.kind = tgc::py::HeapObject::Kind::Tensor;
    object.tensor = x;
    return tgc::py::makeTensorObject(interpreter.newObject(std::move(object)));
  }

private:
  static mlir::MLIRContext &loadDialects(mlir::MLIRContext &ctx) {
    ctx.loadDialect<tgc::TgcDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect>();
    return ctx;
  }
};

#endif // TGC_TEST_UNIT_INTERPRETERFIXTURE_H
