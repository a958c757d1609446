// The model artifact: model.so linked from the objects of a lowered model (or of each
// graph of a program with graph breaks) and the runtime, with model.h and model.json
// beside it.
#include "tgc/Target/Artifact.h"
#include "tgc/Target/ProgramJson.h"

#include "ObjectEmission.h"
#include "SignatureReader.h"

#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace tgc;

static LogicalResult linkLibrary(const ArtifactOptions &options, ArrayRef<std::string> objects,
                                 Location loc) {
  // The SONAME is the file name: a program linked with model.so records that name (and
  // finds it through its RPATH), not the path it was linked from.
  std::string soname = "-Wl,-soname," + llvm::sys::path::filename(options.libraryPath).str();
  std::vector<std::string> argv = {options.linker, "-shared", "-o", options.libraryPath, soname};
  argv.insert(argv.end(), options.linkerFlags.begin(), options.linkerFlags.end());
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.push_back(options.runtimeLibrary);
  argv.insert(argv.end(), options.linkLibraries.begin(), options.linkLibraries.end());
  SmallVector<StringRef> args(argv.begin(), argv.end());
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(options.linker, args, std::nullopt, {}, 0, 0, &error);
  if (rc != 0)
    return emitError(loc) << "linking " << options.libraryPath << " failed (" << options.linker
                          << " exited with " << rc << ")" << (error.empty() ? "" : ": ") << error;
  return success();
}

/// Writes the archive `options.libraryPath` of `objects` (`--emit=static`): a GNU archive
/// with a symbol index, without time stamps or owners, so the same objects give the same
/// bytes.
static LogicalResult archiveObjects(const ArtifactOptions &options, ArrayRef<std::string> objects,
                                    Location loc) {
  std::vector<llvm::NewArchiveMember> members;
  for (const std::string &object : objects) {
    llvm::Expected<llvm::NewArchiveMember> member =
        llvm::NewArchiveMember::getFile(object, /*Deterministic=*/true);
    if (!member)
      return emitError(loc) << "archiving " << object << ": " << llvm::toString(member.takeError());
    member->MemberName = llvm::sys::path::filename(object); // not the directory it was in
    members.push_back(std::move(*member));
  }
  if (llvm::Error error =
          llvm::writeArchive(options.libraryPath, members, llvm::SymtabWritingMode::NormalSymtab,
                             llvm::object::Archive::K_GNU, /*Deterministic=*/true,
                             /*Thin=*/false))
    return emitError(loc) << "writing " << options.libraryPath
                          << " failed: " << llvm::toString(std::move(error));
  return success();
}

/// Writes `text` to `path` unless the file already holds it: an unchanged model.h keeps
/// its time stamp, so a build system does not recompile the code that includes it.
static LogicalResult writeText(StringRef path, StringRef text, Location loc) {
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> existing =
          llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
      existing && (*existing)->getBuffer() == text)
    return success();
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return emitError(loc) << "cannot write " << path << ": " << ec.message();
  out.os() << text;
  out.keep();
  return success();
}

/// Reads the signature of model `name` from `module` and writes its objects,
/// `<objectStem>.<i>.o`, adding their paths to `objects`.
static FailureOr<ModelSignature> compileModel(ModuleOp module, const ArtifactOptions &options,
                                              const CpuTarget &target, StringRef name,
                                              StringRef objectStem,
                                              std::vector<ObjectFile> &objects) {
  FailureOr<ModelAbi> model = readModelAbi(module, name);
  if (failed(model))
    return failure();
  if (options.report)
    *options.report << writeTrainingReport(model->signature);
  // Only a shared library linked now and not kept takes its data object from memory:
  // an archive names its members after their files.
  bool dataInMemory = options.kind != LibraryKind::Static && !options.keepObject;
  FailureOr<std::vector<ObjectFile>> written =
      emitModelObjects(module, *model, objectStem, target, dataInMemory, options.timing);
  if (failed(written))
    return failure();
  for (ObjectFile &object : *written)
    objects.push_back(std::move(object));
  return std::move(model->signature);
}

/// `json` (model.json's text) with the CPU its code was generated for: "target" holds the
/// triple, the CPU name, the features the code may use and how it computes GEMMs.
/// CUDA models also have "device": "cuda" and the GPU architecture, "chip".
static std::string withTarget(StringRef json, const CpuTarget &target,
                              const ArtifactOptions &options) {
  nlohmann::ordered_json root = nlohmann::ordered_json::parse(json.str());
  root["target"] = {{"triple", target.triple},
                    {"cpu", target.cpu},
                    {"features", target.enabledFeatures},
                    {"gemm", options.gemm}};
  if (!options.cudaChip.empty()) {
    root["target"]["device"] = "cuda";
    root["target"]["chip"] = options.cudaChip;
    root["target"]["allow_tf32"] = options.allowTf32;
  }
  return root.dump(2) + "\n";
}

/// Links `objects` and the hash of model.json (emitJsonHashObject) into model.so (or
/// archives them), removes them unless kept, and writes model.h and model.json.
static LogicalResult finishArtifact(const ArtifactOptions &options, const CpuTarget &target,
                                    std::vector<ObjectFile> &objects, StringRef headerText,
                                    StringRef jsonText, Location loc) {
  SmallString<128> stem(options.libraryPath);
  llvm::sys::path::replace_extension(stem, "");
  FailureOr<ObjectFile> hash = emitJsonHashObject(options.name, jsonText, stem, target, loc);
  if (failed(hash))
    return failure();
  objects.push_back(std::move(*hash));
  std::vector<std::string> paths;
  for (const ObjectFile &object : objects)
    paths.push_back(object.path());
  {
    TimingScope none;
    TimingScope linking = (options.timing ? *options.timing : none).nest("link");
    if (failed(options.kind == LibraryKind::Static ? archiveObjects(options, paths, loc)
                                                   : linkLibrary(options, paths, loc)))
      return failure();
  }
  if (!options.keepObject)
    for (const ObjectFile &object : objects)
      if (!object.inMemory())
        llvm::sys::fs::remove(object.path());
  SmallString<128> header(options.libraryPath), json(options.libraryPath);
  llvm::sys::path::replace_extension(header, ".h");
  llvm::sys::path::replace_extension(json, ".json");
  if (failed(writeText(header, headerText, loc)) || failed(writeText(json, jsonText, loc)))
    return failure();
  return success();
}

LogicalResult tgc::emitArtifact(ModuleOp module, const ArtifactOptions &options) {
  SmallString<128> stem(options.libraryPath);
  llvm::sys::path::replace_extension(stem, "");
  FailureOr<CpuTarget> target = resolveCpuTarget(options.cpu, module.getLoc());
  if (failed(target))
    return failure();
  std::vector<ObjectFile> objects;
  FailureOr<ModelSignature> signature =
      compileModel(module, options, *target, options.name, stem, objects);
  if (failed(signature))
    return failure();
  return finishArtifact(options, *target, objects, writeModelHeader(*signature),
                        withTarget(writeSignatureJson(*signature), *target, options),
                        module.getLoc());
}

LogicalResult tgc::emitProgramArtifact(ArrayRef<ModuleOp> graphs, const ArtifactOptions &options) {
  std::vector<std::string> graphNames;
  for (size_t i = 0; i < graphs.size(); ++i)
    graphNames.push_back(graphModelName(options.name, i));
  FailureOr<std::string> programJson = writeProgramJson(graphs, graphNames);
  if (failed(programJson))
    return failure();
  FailureOr<CpuTarget> target = resolveCpuTarget(options.cpu, ModuleOp(graphs.front()).getLoc());
  if (failed(target))
    return failure();
  std::vector<ObjectFile> objects;
  std::vector<ModelSignature> signatures;
  for (auto [i, graph] : llvm::enumerate(graphs)) {
    SmallString<128> stem(options.libraryPath);
    llvm::sys::path::replace_extension(stem, "." + std::to_string(i));
    FailureOr<ModelSignature> signature =
        compileModel(graph, options, *target, graphNames[i], stem, objects);
    if (failed(signature))
      return failure();
    signatures.push_back(std::move(*signature));
  }
  return finishArtifact(
      options, *target, objects, writeProgramHeader(options.name, signatures),
      withTarget(writeProgramSignatureJson(options.name, *programJson, signatures), *target,
                 options),
      ModuleOp(graphs.front()).getLoc());
}
