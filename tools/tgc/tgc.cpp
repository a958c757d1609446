// tgc: the compiler driver. `tgc compile` turns a program into a model library;
// `tgc run` runs one on safetensors inputs.
#include "Inspect.h"

#include "tgc/Dialect/TgcDialect.h"
#include "tgc/Frontend/Export/ExportReader.h"
#include "tgc/Frontend/Trace/GraphProgram.h"
#include "tgc/Frontend/Trace/TraceReader.h"
#include "tgc/Pipeline/Pipeline.h"
#include "tgc/Runner/Run.h"
#include "tgc/Target/Artifact.h"
#include "tgc/Target/ProgramJson.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

using namespace mlir;

namespace {
struct CompileOptions {
  std::string input;
  std::string output;
  std::string compileTo = "llvm";
  std::string startAfter = "capture";
  std::string name;
  std::string cpu = "native";
  /// --target: cpu, cuda or cuda:sm_XX.
  std::string target = "cpu";
  /// --emulate-gpu: with --target=cuda, a CPU model running the GPU kernels' code.
  bool emulateGpu = false;
  /// --allow-tf32: with --target=cuda, fp32 GEMMs may use TF32.
  bool allowTf32 = false;
  /// How GEMMs are computed: "library", "generated", or "auto" (library for native code,
  /// generated for a portable --cpu).
  std::string gemm = "auto";
  bool train = false;
  bool report = false;
  bool allowGraphBreaks = false;
  bool timing = false;
  int64_t activationBudget = 0;
  std::string packSaved;
  std::string depfile;
  /// --emit: shared or static; empty: by the output's extension (`.a` is static).
  std::string emit;
};
} // namespace

/// The value of environment variable `name`, or `fallback`.
static std::string envOr(const char *name, const char *fallback) {
  const char *value = std::getenv(name);
  return value && *value ? value : fallback;
}

/// This executable's path (argv[0] resolved).
static std::string selfPath() {
  static int anchor;
  static const std::string path = llvm::sys::fs::getMainExecutable("tgc", &anchor);
  return path;
}

/// The runtime archive linked into model.so: $TGC_RUNTIME_LIBRARY; else the installed
/// one relative to this tgc (<prefix>/bin/tgc -> <prefix>/lib/tgc/libtgc_runtime.a), so
/// an installed prefix works wherever it is moved; else the build tree's.
static std::string runtimeLibrary() {
  if (const char *value = std::getenv("TGC_RUNTIME_LIBRARY"); value && *value)
    return value;
  llvm::SmallString<256> installed(llvm::sys::path::parent_path(selfPath()));
  llvm::sys::path::append(installed, "..", TGC_RUNTIME_RELATIVE_PATH);
  llvm::sys::path::remove_dots(installed, /*remove_dot_dot=*/true);
  if (llvm::sys::fs::exists(installed))
    return installed.str().str();
  return TGC_RUNTIME_LIBRARY;
}

/// The model's C name from the library's file name: `my-model.v2.so` -> `my_model_v2`.
static std::string defaultModelName(llvm::StringRef libraryPath) {
  std::string name = llvm::sys::path::stem(libraryPath).str();
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  if (name.empty() || llvm::isDigit(name[0]))
    name.insert(name.begin(), '_');
  return name;
}

/// Reads the input program by its extension: `.pt2` archives, tgc `.trace`s or tgc
/// `.mlir`; `training` when the compile has a backward (a trace's submodule backward
/// hooks only run then).
static OwningOpRef<ModuleOp> readProgram(const std::string &path, MLIRContext &ctx, bool training) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".pt2")
    return tgc::pt2::readExportArchive(path, &ctx);
  if (ext == ".trace")
    return tgc::trace::readTrace(path, &ctx, training);
  if (ext == ".mlir")
    return parseSourceFile<ModuleOp>(path, &ctx);
  emitError(FileLineColLoc::get(&ctx, path, 0, 0))
      << "unknown input kind '" << ext << "': expected a .pt2 archive, a .trace or a .mlir file";
  return nullptr;
}

static int writeModule(ModuleOp module, const std::string &path) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  module.print(file->os());
  file->os() << "\n";
  file->keep();
  return 0;
}

/// Whether `tgc compile` prints IR (a phase before llvm, or a .mlir or `-` output)
/// rather than building model.so.
static bool emitsIR(const CompileOptions &options, tgc::Phase phase) {
  return phase != tgc::Phase::LLVM || llvm::StringRef(options.output).ends_with(".mlir") ||
         options.output == "-";
}

/// The model's C name: --name, else the output's stem.
static std::string modelName(const CompileOptions &options) {
  return options.name.empty() ? defaultModelName(options.output) : options.name;
}

/// Whether GEMMs call OpenBLAS/oneDNN (`--gemm`): by default for code for this machine;
/// a portable build generates them, so that its results are the same bits on every
/// machine that runs it (docs/kernels.md).
static bool usesLibraryGemm(const CompileOptions &options) {
  if (options.gemm == "auto")
    return options.cpu == "native";
  return options.gemm == "library";
}

/// The pipeline `tgc compile` runs: from after `startAfter` to `phase` (llvm for a
/// library, whose artifact is then only translated, emitted and linked).
static tgc::PipelineOptions pipelineOptions(const CompileOptions &options, tgc::Phase phase,
                                            tgc::Phase startAfter) {
  tgc::PipelineOptions pipeline;
  pipeline.startAfter = startAfter;
  pipeline.compileTo = phase;
  pipeline.train = options.train;
  pipeline.activationBudget = options.activationBudget;
  pipeline.packSaved = options.packSaved;
  pipeline.modelName = modelName(options);
  pipeline.libraryGemm = usesLibraryGemm(options);
  return pipeline;
}

static tgc::ArtifactOptions artifactOptions(const CompileOptions &options) {
  tgc::ArtifactOptions artifact;
  artifact.runtimeLibrary = runtimeLibrary();
  artifact.linker = envOr("TGC_LINKER", TGC_LINKER_PATH);
  if (std::string flags = envOr("TGC_LINKER_FLAGS", TGC_LINKER_FLAGS); !flags.empty())
    for (llvm::StringRef flag : llvm::split(flags, ' '))
      if (!flag.empty())
        artifact.linkerFlags.push_back(flag.str());
  // After the runtime: the conversions LLVM lowers to library calls (docs/abi.md).
  if (llvm::StringRef builtins = TGC_LINKER_BUILTINS; !builtins.empty())
    artifact.linkLibraries.push_back(builtins.str());
  artifact.libraryPath = options.output;
  bool archive = options.emit.empty() ? llvm::StringRef(options.output).ends_with(".a")
                                      : options.emit == "static";
  artifact.kind = archive ? tgc::LibraryKind::Static : tgc::LibraryKind::Shared;
  artifact.name = modelName(options);
  artifact.cpu = options.cpu;
  artifact.gemm = usesLibraryGemm(options) ? "library" : "generated";
  if (options.report)
    artifact.report = &llvm::outs();
  return artifact;
}

/// --target: `cpu` (default), `cuda` (sm_90) or `cuda:sm_XX`, into `pipeline`
/// (docs/cuda.md).
static LogicalResult applyTarget(const CompileOptions &options, tgc::PipelineOptions &pipeline) {
  llvm::StringRef target = options.target;
  if (target == "cpu") {
    if (options.emulateGpu || options.allowTf32) {
      llvm::errs() << "error: " << (options.emulateGpu ? "--emulate-gpu" : "--allow-tf32")
                   << " needs --target=cuda\n";
      return failure();
    }
    if (pipeline.compileTo != tgc::Phase::GPU)
      return success();
    llvm::errs() << "error: --compile-to=gpu needs --target=cuda\n";
    return failure();
  }
  if (!target.consume_front("cuda")) {
    llvm::errs() << "error: unknown target '" << options.target
                 << "': expected cpu, cuda or cuda:sm_XX\n";
    return failure();
  }
  if (target.consume_front(":")) {
    if (!tgc::isCudaChip(target)) {
      llvm::errs() << "error: unknown CUDA architecture '" << target
                   << "' in --target: expected sm_<number> (sm_80, sm_90, sm_90a, ...)\n";
      return failure();
    }
    pipeline.gpuChip = target.str();
  } else if (!target.empty()) {
    llvm::errs() << "error: unknown target '" << options.target
                 << "': expected cpu, cuda or cuda:sm_XX\n";
    return failure();
  }
  pipeline.target = tgc::Target::CUDA;
  pipeline.cudaToolkit = envOr("CUDA_HOME", TGC_CUDA_TOOLKIT);
  pipeline.emulateGpu = options.emulateGpu;
  pipeline.allowTf32 = options.allowTf32;
  return success();
}

namespace {
/// On a terminal, the step a compile is in, on one line of stderr that each step
/// overwrites and that is cleared before any diagnostic and at the end. Off when stderr
/// is not a terminal, with --timing, and with TGC_NO_PROGRESS set.
class Progress {
public:
  explicit Progress(bool enabled)
      : enabled(enabled && llvm::sys::Process::StandardErrIsDisplayed() &&
                !std::getenv("TGC_NO_PROGRESS")) {}
  ~Progress() { clear(); }
  void show(llvm::StringRef step) {
    if (!enabled)
      return;
    llvm::errs() << "\r\033[Ktgc: " << step << "...";
    llvm::errs().flush();
    shown = true;
  }
  void clear() {
    if (!shown)
      return;
    llvm::errs() << "\r\033[K";
    llvm::errs().flush();
    shown = false;
  }

private:
  bool enabled;
  bool shown = false;
};
} // namespace

/// Runs `pipeline` on `module` phase by phase; with timing, each phase is a timer holding
/// its passes' timers.
static LogicalResult runPipeline(ModuleOp module, const tgc::PipelineOptions &pipeline,
                                 TimingScope &timing, bool timed, Progress *progress = nullptr) {
  for (int phase = int(pipeline.startAfter) + 1; phase <= int(pipeline.compileTo); ++phase) {
    tgc::PipelineOptions one = pipeline;
    one.startAfter = tgc::Phase(phase - 1);
    one.compileTo = tgc::Phase(phase);
    PassManager pm(module.getContext());
    tgc::buildPipeline(pm, one);
    if (pm.empty())
      continue;
    TimingScope phaseTiming = timing.nest(tgc::stringifyPhase(tgc::Phase(phase)));
    if (progress)
      progress->show(tgc::stringifyPhase(tgc::Phase(phase)));
    if (timed)
      pm.enableTiming(phaseTiming);
    if (failed(pm.run(module)))
      return failure();
  }
  return success();
}

/// `tgc compile --allow-graph-breaks`: a .trace whose graph breaks cut it into several
/// graphs (docs/graph-breaks.md), each compiled like a whole program, in one model.so.
static int compileProgram(const CompileOptions &options, MLIRContext &ctx,
                          const tgc::PipelineOptions &pipeline,
                          const tgc::ArtifactOptions &artifact, TimingScope &timing) {
  if (llvm::sys::path::extension(options.input) != ".trace") {
    llvm::errs() << "error: --allow-graph-breaks needs a .trace input\n";
    return 1;
  }
  if (pipeline.startAfter != tgc::Phase::Capture) {
    llvm::errs() << "error: --allow-graph-breaks does not support --start-after\n";
    return 1;
  }
  FailureOr<tgc::trace::GraphProgram> program =
      tgc::trace::readTraceProgram(options.input, &ctx, options.train);
  if (failed(program))
    return 1;
  std::vector<std::string> graphNames;
  SmallVector<ModuleOp> graphs;
  for (auto [i, graph] : llvm::enumerate(program->graphs)) {
    graphNames.push_back(tgc::graphModelName(artifact.name, i));
    graphs.push_back(*graph);
  }
  FailureOr<std::string> programJson = tgc::writeProgramJson(graphs, graphNames);
  if (failed(programJson))
    return 1;
  for (auto [graph, graphName] : llvm::zip_equal(graphs, graphNames)) {
    tgc::PipelineOptions graphPipeline = pipeline;
    graphPipeline.modelName = graphName;
    if (failed(runPipeline(graph, graphPipeline, timing, options.timing)))
      return 1;
  }
  if (!emitsIR(options, pipeline.compileTo))
    return failed(tgc::emitProgramArtifact(graphs, artifact)) ? 1 : 0;
  std::string error;
  auto file = openOutputFile(options.output, &error);
  if (!file) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  file->os() << "// program: " << *programJson << "\n";
  for (auto [i, graph] : llvm::enumerate(graphs)) {
    file->os() << (i ? "// -----\n" : "") << "// graph " << graphNames[i] << "\n";
    graph.print(file->os());
    file->os() << "\n";
  }
  file->keep();
  return 0;
}

static int compile(const CompileOptions &options) {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<tgc::TgcDialect>();
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // A diagnostic names its location (the user's line), never dumps the operation: an
  // error on the module would print the whole program's IR. `tgc-opt` keeps MLIR's
  // default for debugging passes.
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);

  std::optional<tgc::Phase> phase = tgc::parsePhase(options.compileTo);
  if (!phase) {
    llvm::errs() << "error: unknown phase '" << options.compileTo << "'\n";
    return 1;
  }
  // --start-after=llvm: the input is --compile-to=llvm's output, built as it is.
  std::optional<tgc::Phase> startAfter = tgc::parsePhase(options.startAfter);
  if (!startAfter) {
    llvm::errs() << "error: unknown phase '" << options.startAfter << "' for --start-after\n";
    return 1;
  }
  if ((options.activationBudget != 0 || !options.packSaved.empty()) && !options.train) {
    llvm::errs() << "error: --activation-budget and --pack-saved need --train\n";
    return 1;
  }
  // --timing: a tree of phases (with their passes), LLVM and the link, printed to stderr
  // when `timingManager` goes.
  DefaultTimingManager timingManager;
  timingManager.setEnabled(options.timing);
  timingManager.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
  TimingScope timing = timingManager.getRootScope();
  tgc::PipelineOptions pipeline = pipelineOptions(options, *phase, *startAfter);
  // The vector width of the CPU code is generated for (an unknown --cpu is an error).
  FailureOr<unsigned> vectorBits =
      tgc::cpuVectorBits(options.cpu, FileLineColLoc::get(&ctx, options.input, 0, 0));
  if (failed(vectorBits))
    return 1;
  pipeline.vectorBits = *vectorBits;
  if (failed(applyTarget(options, pipeline)))
    return 1;
  tgc::ArtifactOptions artifact = artifactOptions(options);
  artifact.timing = &timing;
  if (pipeline.target == tgc::Target::CUDA && !pipeline.emulateGpu) {
    artifact.cudaChip = pipeline.gpuChip;
    artifact.allowTf32 = pipeline.allowTf32;
  }
  if (options.allowGraphBreaks)
    return compileProgram(options, ctx, pipeline, artifact, timing);
  // Registered after the diagnostics' handler, so it runs first: clears the progress
  // line, then passes the diagnostic on.
  Progress progress(!options.timing);
  ScopedDiagnosticHandler clearProgress(&ctx, [&](Diagnostic &) {
    progress.clear();
    return failure();
  });
  OwningOpRef<ModuleOp> module;
  {
    progress.show("reading " + llvm::sys::path::filename(options.input).str());
    TimingScope reading = timing.nest("read");
    module = readProgram(options.input, ctx, options.train);
  }
  if (!module || failed(runPipeline(*module, pipeline, timing, options.timing, &progress)))
    return 1;
  if (emitsIR(options, *phase))
    return writeModule(*module, options.output);
  progress.show("generating code and linking");
  return failed(tgc::emitArtifact(*module, artifact)) ? 1 : 0;
}

/// `path` as a Makefile depfile writes it: spaces and '#' escaped with '\\', '$' doubled.
static std::string depfileEscape(llvm::StringRef path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#' || c == '\\')
      out += '\\';
    if (c == '$')
      out += '$';
    out += c;
  }
  return out;
}

/// --depfile: `<output>: <input> <tgc> <runtime library>`, the files a compile reads, so
/// that a build system reruns it when the program, the compiler or its runtime changes.
static int writeDepfile(const CompileOptions &options) {
  std::string self = selfPath();
  llvm::SmallString<256> input(options.input);
  llvm::sys::fs::make_absolute(input);
  std::string runtime = runtimeLibrary();
  std::string text = depfileEscape(options.output) + ":";
  for (llvm::StringRef dependency :
       {llvm::StringRef(input), llvm::StringRef(self), llvm::StringRef(runtime)})
    if (!dependency.empty())
      text += " " + depfileEscape(dependency);
  text += "\n";
  std::error_code ec;
  llvm::raw_fd_ostream out(options.depfile, ec);
  if (ec) {
    llvm::errs() << "error: cannot write depfile '" << options.depfile << "': " << ec.message()
                 << "\n";
    return 1;
  }
  out << text;
  return 0;
}

int main(int argc, char **argv) {
  CLI::App app{"tgc: ahead-of-time compiler for PyTorch programs"};
  app.set_version_flag("--version",
                       std::string("tgc " TGC_VERSION " (MLIR/LLVM " LLVM_VERSION_STRING ")"));
  app.require_subcommand(1);

  CompileOptions compileOptions;
  CLI::App *compileCmd = app.add_subcommand("compile", "Compile a program into model.so");
  compileCmd->add_option("input", compileOptions.input, "a .pt2 archive, a .trace or a .mlir file")
      ->required();
  compileCmd
      ->add_option("-o,--output", compileOptions.output,
                   "model.so or libX.a (with model.h and model.json beside it), or .mlir / - "
                   "for IR")
      ->required();
  compileCmd->add_option("--compile-to", compileOptions.compileTo,
                         "stop after a phase and print IR: capture, functionalize, "
                         "decompose, autodiff, partition, lower, kernels, bufferize, gpu "
                         "(--target=cuda), llvm (what goes into model.so)");
  compileCmd->add_option("--name", compileOptions.name,
                         "C identifier prefix of the model's API (default: output stem)");
  compileCmd->add_flag("--allow-graph-breaks", compileOptions.allowGraphBreaks,
                       "a .trace's graph breaks (a branch on a tensor's value, print) cut it "
                       "into several graphs instead of being errors");
  compileCmd->add_option("--cpu", compileOptions.cpu,
                         "the CPU to generate code for: native (default: this machine, all "
                         "its vector units) or an LLVM CPU name for a portable build "
                         "(x86-64-v2, x86-64-v3, x86-64-v4, skylake-avx512, ...); "
                         "model.json records it under \"target\"");
  compileCmd->add_option("--target", compileOptions.target,
                         "what the code runs on: cpu (default) or cuda[:sm_XX] (NVIDIA GPUs; "
                         "sm_90 by default: a cubin for that architecture and PTX for newer "
                         "ones, docs/cuda.md)");
  compileCmd->add_flag("--allow-tf32", compileOptions.allowTf32,
                       "with --target=cuda: fp32 matrix products may round their inputs to "
                       "TF32 on tensor cores (faster, about 3 decimal digits); off by default, "
                       "as in PyTorch");
  compileCmd->add_flag("--emulate-gpu", compileOptions.emulateGpu,
                       "with --target=cuda: a CPU model.so that runs the GPU kernels' code "
                       "thread by thread, to check the CUDA mapping without a GPU "
                       "(slow; docs/cuda.md)");
  compileCmd
      ->add_option("--gemm", compileOptions.gemm,
                   "how GEMMs are computed: library (OpenBLAS/oneDNN, whose kernels the host "
                   "picks), generated (loops compiled for --cpu: the same bits on every "
                   "host), or auto (default: library for native, generated for a portable "
                   "--cpu); model.json records it under \"target\"")
      ->check(CLI::IsMember({"auto", "library", "generated"}));
  compileCmd->add_flag("--timing", compileOptions.timing,
                       "print the time of reading, of each phase and its passes, of LLVM's "
                       "optimization and code generation, and of the link (to stderr)");
  compileCmd->add_flag("--train", compileOptions.train,
                       "build a trainable model: run autodiff and partition, and emit "
                       "the backward entry (docs/training.md)");
  compileCmd->add_option("--start-after", compileOptions.startAfter,
                         "the input is already past this phase (e.g. partition for a "
                         "hand-written @forward + @backward, llvm for --compile-to=llvm's "
                         "output)");
  compileCmd->add_flag("--report", compileOptions.report,
                       "print the saved values of the training partition to stdout");
  compileCmd
      ->add_option("--activation-budget", compileOptions.activationBudget,
                   "with --train: bytes the saved activations may take; over it, "
                   "cheap ops are recomputed in backward")
      ->check(CLI::NonNegativeNumber);
  compileCmd
      ->add_option("--pack-saved", compileOptions.packSaved,
                   "with --train: keep saved f32 activations as bf16 or fp8 "
                   "(saved-tensor hooks)")
      ->check(CLI::IsMember({"bf16", "fp8"}));

  tgc::runner::RunOptions runOptions;
  CLI::App *runCmd = app.add_subcommand("run", "Run a compiled model on safetensors inputs");
  runCmd->add_option("model", runOptions.soPath, "the model.so")->required();
  runCmd->add_option("--inputs", runOptions.inputsPath, "inputs (.safetensors)")->required();
  runCmd->add_option("-o,--output", runOptions.outputPath, "outputs (.safetensors)")->required();
  runCmd
      ->add_option("--device", runOptions.device,
                   "where the model must run: cpu or cuda (default: where it was compiled "
                   "for); a CUDA model's inputs are copied to the GPU and its results back")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  runCmd->add_flag("--train", runOptions.train,
                   "run forward and backward; also writes grad.<name> per gradient");
  runCmd->add_option("--grad-outputs", runOptions.gradOutputsPath,
                     "with --train: the gradient of each output, named output.N "
                     "(.safetensors)");

  std::string inspectPath;
  CLI::App *inspectCmd = app.add_subcommand(
      "inspect", "Print a compiled model's inputs, outputs, state and dynamic sizes");
  inspectCmd->add_option("model", inspectPath, "the model.so (its model.json beside it)")
      ->required();

  compileCmd
      ->add_option("--emit", compileOptions.emit,
                   "shared: model.so, the runtime linked in; static: an archive (libX.a) of "
                   "the model's code alone, linked with the runtime, libtgc_runtime.a "
                   "(default: static for an output ending in .a, else shared)")
      ->check(CLI::IsMember({"shared", "static"}));
  compileCmd->add_option("--depfile", compileOptions.depfile,
                         "also write a Makefile-style depfile: the output, then the files the "
                         "compile reads (the input, tgc itself, the runtime it links)");

  // A bad command line is an error like any other: `error: ...` and exit code 1 (CLI11's
  // own codes are 100 and up); --help and --version print and exit 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    llvm::errs() << "error: " << e.what() << "\nRun with --help for more information.\n";
    return 1;
  }
  if (compileCmd->parsed()) {
    int status = compile(compileOptions);
    if (status == 0 && !compileOptions.depfile.empty())
      status = writeDepfile(compileOptions);
    return status;
  }
  if (inspectCmd->parsed())
    return inspectModel(inspectPath, llvm::outs(), llvm::errs());
  if (tgc::runner::Status status = tgc::runner::runModel(runOptions)) {
    llvm::errs() << "error: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
