//===- CompilePipeline.cpp - Fuzzes the whole compile on mutated archives -===//
//
// A small valid .pt2 whose JSON members (the program's models/model.json, the
// weights' and constants' configs) are mutated as JSON, not as bytes
// (LLVMFuzzerCustomMutator below): nodes spliced from elsewhere in the document,
// names swapped, keys and array elements dropped or repeated, numbers replaced by
// edge values. Each input is read and compiled like `tgc compile`: every phase to
// the LLVM dialect (training when the input's checksum is odd; generated or library
// GEMMs by another bit), then the model's signature is read, encoded and written
// as model.json and model.h, and the module is translated to LLVM IR with the
// model interface. LLVM's own optimization and code generation are left out.
//
// What must hold: the input is refused with a diagnostic, or it compiles. A crash or
// a sanitizer report is a finding, and so is a phase that succeeds but leaves IR
// that does not verify, an "internal error" diagnostic, and LLVM IR that does not
// verify: each stops the run with the diagnostics printed.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "ModelInterface.h"
#include "SignatureReader.h"

#include "tgc/Frontend/Export/ExportReader.h"
#include "tgc/Pipeline/Pipeline.h"
#include "tgc/Target/Signature.h"

#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>
#include <zip.h>

#include <cstring>
#include <random>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

using nlohmann::json;

//===----------------------------------------------------------------------===//
// The archive: its members in order, read and written in memory with libzip.
//===----------------------------------------------------------------------===//

struct Member {
  std::string name;
  std::string bytes;
};

/// The members of the zip in `data`; empty when it is not one.
std::vector<Member> readZip(const uint8_t *data, size_t size) {
  std::vector<Member> members;
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t *source = zip_source_buffer_create(data, size, 0, &error);
  zip_t *archive = source ? zip_open_from_source(source, ZIP_RDONLY, &error) : nullptr;
  if (!archive) {
    if (source)
      zip_source_free(source);
    zip_error_fini(&error);
    return members;
  }
  // Every way out, the early ones for a malformed member included, closes the archive.
  llvm::scope_exit close([&] {
    zip_discard(archive);
    zip_error_fini(&error);
  });
  zip_int64_t count = zip_get_num_entries(archive, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t stat;
    if (zip_stat_index(archive, zip_uint64_t(i), 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE) ||
        stat.size > (64u << 20))
      return {};
    zip_file_t *file = zip_fopen_index(archive, zip_uint64_t(i), 0);
    if (!file)
      return {};
    Member member{stat.name ? stat.name : "", std::string(stat.size, '\0')};
    zip_int64_t read = zip_fread(file, member.bytes.data(), stat.size);
    zip_fclose(file);
    if (read != zip_int64_t(stat.size))
      return {};
    members.push_back(std::move(member));
  }
  return members;
}

/// `members` as a zip (stored, not compressed); empty on failure.
std::string writeZip(const std::vector<Member> &members) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t *sink = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (!sink)
    return {};
  zip_source_keep(sink);
  zip_t *archive = zip_open_from_source(sink, ZIP_TRUNCATE, &error);
  bool ok = archive != nullptr;
  for (const Member &member : members) {
    if (!ok)
      break;
    zip_source_t *bytes =
        zip_source_buffer(archive, member.bytes.data(), member.bytes.size(), /*freep=*/0);
    zip_int64_t index =
        bytes ? zip_file_add(archive, member.name.c_str(), bytes, ZIP_FL_OVERWRITE) : -1;
    if (index < 0) {
      if (bytes)
        zip_source_free(bytes);
      ok = false;
      break;
    }
    zip_set_file_compression(archive, zip_uint64_t(index), ZIP_CM_STORE, 0);
  }
  std::string out;
  // zip_close frees the archive only when it succeeds; otherwise it stays open.
  bool closed = ok && zip_close(archive) == 0;
  if (closed && zip_source_open(sink) == 0) {
    char chunk[1 << 14];
    for (zip_int64_t n; (n = zip_source_read(sink, chunk, sizeof chunk)) > 0;)
      out.append(chunk, size_t(n));
    zip_source_close(sink);
  }
  if (archive && !closed)
    zip_discard(archive);
  zip_source_free(sink);
  zip_error_fini(&error);
  return out;
}

//===----------------------------------------------------------------------===//
// JSON-level mutations.
//===----------------------------------------------------------------------===//

/// Every node of `root`, parents before children.
void collect(json &node, std::vector<json *> &nodes) {
  nodes.push_back(&node);
  if (node.is_object() || node.is_array())
    for (json &child : node)
      collect(child, nodes);
}

void collectStrings(const json &node, std::vector<std::string> &strings) {
  if (node.is_string())
    strings.push_back(node.get<std::string>());
  else if (node.is_object())
    for (auto it = node.begin(); it != node.end(); ++it) {
      strings.push_back(it.key());
      collectStrings(it.value(), strings);
    }
  else if (node.is_array())
    for (const json &child : node)
      collectStrings(child, strings);
}

/// Numbers a reader must be ready for: sizes, indices, strides and enum values at
/// their edges.
constexpr int64_t kEdgeNumbers[] = {
    0,  1,         -1,           2,         3,         7,         64,
    65, 1ll << 31, -(1ll << 31), 1ll << 32, INT64_MAX, INT64_MIN, (1ll << 62) + 1};

/// One mutation of `root`, whose strings are `strings`.
void mutateOnce(json &root, const std::vector<std::string> &strings, std::mt19937_64 &rng) {
  std::vector<json *> nodes;
  collect(root, nodes);
  auto pick = [&](size_t n) { return size_t(rng() % n); };
  json &node = *nodes[pick(nodes.size())];
  switch (pick(8)) {
  case 0: // splice: the node becomes a copy of another one
    node = json(*nodes[pick(nodes.size())]);
    return;
  case 1: // a string from elsewhere in the document (names, ops, dtypes, targets)
    if (!strings.empty() && (node.is_string() || node.is_number()))
      node = strings[pick(strings.size())];
    return;
  case 2: // an edge number, or a neighbour of this one
    if (node.is_number_integer())
      node = pick(2) ? kEdgeNumbers[pick(std::size(kEdgeNumbers))]
                     : int64_t(uint64_t(node.get<int64_t>()) + pick(5) - 2); // wraps
    else if (node.is_number_float())
      node = pick(2) ? 0.0 : -node.get<double>() * 1e300;
    else if (node.is_boolean())
      node = !node.get<bool>();
    return;
  case 3: // a key dropped
    if (node.is_object() && !node.empty()) {
      auto it = node.begin();
      std::advance(it, pick(node.size()));
      node.erase(it);
    }
    return;
  case 4: // an element dropped
    if (node.is_array() && !node.empty())
      node.erase(node.begin() + std::ptrdiff_t(pick(node.size())));
    return;
  case 5: // an element repeated
    if (node.is_array() && !node.empty() && node.size() < 4096) {
      json copy = node[pick(node.size())];
      node.insert(node.begin() + std::ptrdiff_t(pick(node.size() + 1)), std::move(copy));
    }
    return;
  case 6: // two elements swapped
    if (node.is_array() && node.size() > 1)
      std::swap(node[pick(node.size())], node[pick(node.size())]);
    return;
  default: // a value of another kind
    node = pick(3) == 0 ? json(nullptr) : pick(2) ? json::array() : json::object();
    return;
  }
}

/// The mutated archive, or empty when `data` is not a zip with a JSON member.
std::string mutateArchive(const uint8_t *data, size_t size, unsigned seed) {
  std::vector<Member> members = readZip(data, size);
  std::vector<size_t> jsonMembers;
  for (size_t i = 0; i < members.size(); ++i)
    if (llvm::StringRef(members[i].name).ends_with(".json"))
      jsonMembers.push_back(i);
  if (jsonMembers.empty())
    return {};
  std::mt19937_64 rng(seed);
  // The program holds nearly all there is to mutate: it is chosen 3 times in 4.
  size_t chosen = jsonMembers[rng() % jsonMembers.size()];
  for (size_t i : jsonMembers)
    if (llvm::StringRef(members[i].name).ends_with("models/model.json") ||
        llvm::StringRef(members[i].name).ends_with("serialized_exported_program.json"))
      if (rng() % 4 != 0)
        chosen = i;
  json root = json::parse(members[chosen].bytes, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return {};
  std::vector<std::string> strings;
  collectStrings(root, strings);
  for (unsigned n = 1 + unsigned(rng() % 4); n > 0; --n)
    mutateOnce(root, strings, rng);
  members[chosen].bytes = root.dump(-1, ' ', false, json::error_handler_t::replace);
  return writeZip(members);
}

//===----------------------------------------------------------------------===//
// The compile.
//===----------------------------------------------------------------------===//

/// The dialects, extensions and translations `tgc compile` registers.
const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry *instance = [] {
    auto *r = new mlir::DialectRegistry;
    mlir::registerAllDialects(*r);
    mlir::registerAllExtensions(*r);
    mlir::registerAllToLLVMIRTranslations(*r);
    r->insert<tgc::TgcDialect>();
    return r;
  }();
  return *instance;
}

/// Stops the run: `what` is a bug in tgc, and `log` holds the diagnostics.
[[noreturn]] void finding(llvm::StringRef what, const std::string &log) {
  llvm::errs() << "tgc-fuzz-compile: " << what << "\n" << log;
  llvm::errs().flush();
  std::abort();
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  std::string mutated = mutateArchive(data, size, seed);
  if (mutated.empty() || mutated.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize); // not an archive (yet): bytes
  std::memcpy(data, mutated.data(), mutated.size());
  return mutated.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t checksum = 0;
  for (size_t i = 0; i < size; ++i)
    checksum = checksum * 31 + data[i];
  std::string path = tgc::fuzz::scratchFile(data, size, ".pt2");

  mlir::MLIRContext ctx(registry(), mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  ctx.printOpOnDiagnostic(false);
  std::string log;
  bool internal = false;
  mlir::ScopedDiagnosticHandler collect(&ctx, [&](mlir::Diagnostic &diagnostic) {
    std::string message = diagnostic.str();
    internal |= llvm::StringRef(message).contains("internal error");
    llvm::raw_string_ostream(log) << diagnostic.getLocation() << ": " << message << "\n";
    return mlir::success();
  });

  mlir::OwningOpRef<mlir::ModuleOp> module = tgc::pt2::readExportArchive(path, &ctx);
  if (!module)
    return internal ? (finding("an internal error", log), 0) : 0;
  if (mlir::failed(mlir::verify(*module)))
    finding("the reader's module does not verify", log);

  tgc::PipelineOptions options;
  options.train = checksum & 1;
  options.libraryGemm = checksum & 2;
  options.vectorBits = 256;
  options.modelName = "fuzzed";
  // Phase by phase, as `tgc compile` runs them; a phase that succeeds must leave IR
  // that verifies.
  for (int phase = int(tgc::Phase::Capture) + 1; phase <= int(tgc::Phase::LLVM); ++phase) {
    tgc::PipelineOptions one = options;
    one.startAfter = tgc::Phase(phase - 1);
    one.compileTo = tgc::Phase(phase);
    mlir::PassManager pm(&ctx);
    pm.enableVerifier(false);
    tgc::buildPipeline(pm, one);
    if (mlir::failed(pm.run(*module)))
      return internal ? (finding("an internal error", log), 0) : 0;
    if (mlir::failed(mlir::verify(*module)))
      finding(
          ("phase '" + tgc::stringifyPhase(tgc::Phase(phase)) + "' left IR that does not verify")
              .str(),
          log);
  }

  mlir::FailureOr<tgc::ModelAbi> model = tgc::readModelAbi(*module, "fuzzed");
  if (mlir::failed(model))
    return internal ? (finding("an internal error", log), 0) : 0;
  (void)tgc::writeSignatureJson(model->signature);
  (void)tgc::writeModelHeader(model->signature);
  (void)tgc::writeTrainingReport(model->signature);
  (void)tgc::encodeSignatureBlob(model->signature);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(*module, llvmContext, "fuzzed");
  if (!llvmModule)
    finding("translation to LLVM IR failed", log);
  std::vector<tgc::OutlinedData> outlined;
  if (mlir::failed(tgc::addModelInterface(*llvmModule, *model, {}, module->getLoc(), outlined)))
    return internal ? (finding("an internal error", log), 0) : 0;
  std::string problems;
  llvm::raw_string_ostream problemStream(problems);
  if (llvm::verifyModule(*llvmModule, &problemStream))
    finding("the LLVM IR does not verify", problems);
  return 0;
}
