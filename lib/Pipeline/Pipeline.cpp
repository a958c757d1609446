// The compile pipeline: every phase, in order, from capture-level tgc to LLVM.
#include "tgc/Pipeline/Pipeline.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "tgc/Transforms/Passes.h"

using namespace mlir;
using namespace tgc;

static constexpr std::pair<Phase, llvm::StringLiteral> kPhaseNames[] = {
    {Phase::Capture, "capture"},     {Phase::Functionalize, "functionalize"},
    {Phase::Decompose, "decompose"}, {Phase::Lower, "lower"},
    {Phase::Bufferize, "bufferize"}, {Phase::LLVM, "llvm"},
};

std::optional<Phase> tgc::parsePhase(llvm::StringRef name) {
  for (auto [phase, phaseName] : kPhaseNames)
    if (phaseName == name)
      return phase;
  return std::nullopt;
}

llvm::StringRef tgc::stringifyPhase(Phase phase) {
  for (auto [p, phaseName] : kPhaseNames)
    if (p == phase)
      return phaseName;
  return "";
}

/// Views and in-place ops become pure value-level ops.
static void populateFunctionalize(OpPassManager &pm) {
  pm.addPass(createFunctionalizePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void tgc::buildPipeline(OpPassManager &pm, const PipelineOptions &options) {
  auto reached = [&](Phase phase) { return options.compileTo < phase; };
  if (reached(Phase::Functionalize))
    return;
  populateFunctionalize(pm);
}

namespace {
struct PipelineCLOptions : public PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> compileTo{*this, "compile-to",
                                llvm::cl::desc("Stop after this phase"),
                                llvm::cl::init("llvm")};
};
} // namespace

void tgc::registerPipelines() {
  PassPipelineRegistration<PipelineCLOptions>(
      "tgc-pipeline", "The whole tgc compile pipeline",
      [](OpPassManager &pm, const PipelineCLOptions &cl) {
        PipelineOptions options;
        if (std::optional<Phase> phase = parsePhase(cl.compileTo))
          options.compileTo = *phase;
        buildPipeline(pm, options);
      });
}
