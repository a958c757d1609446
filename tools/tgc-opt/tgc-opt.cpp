// tgc-opt: mlir-opt with the tgc dialect, its passes and the pipeline registered.
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "tgc/Dialect/TgcDialect.h"
#include "tgc/Pipeline/Pipeline.h"
#include "tgc/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  tgc::registerTgcPasses();
  tgc::registerPipelines();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<tgc::TgcDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "tgc optimizer driver\n", registry));
}
