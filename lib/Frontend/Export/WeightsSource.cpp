// Where a .pt2 archive stores the initial values of parameters, buffers and constants.
#include "WeightsSource.h"

#include "ExportFormat.h"
#include "Frontend/Common/DTypes.h"
#include "Pt2Archive.h"
#include "TorchPickle.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::pt2;

WeightsSource::~WeightsSource() = default;

namespace {

/// The storages of one zip, each read once however many tensors view it.
class StorageCache {
public:
  explicit StorageCache(const Pt2Archive &archive) : archive(archive) {}

  FailureOr<llvm::StringRef> get(llvm::StringRef member, Location loc) {
    auto it = storages.find(member);
    if (it != storages.end())
      return llvm::StringRef(it->second);
    FailureOr<std::string> data = archive.read(member, loc);
    if (failed(data))
      return failure();
    return llvm::StringRef(storages.try_emplace(member, std::move(*data)).first->second);
  }

private:
  const Pt2Archive &archive;
  llvm::StringMap<std::string> storages;
};

/// The element type torch calls `name`, or a diagnostic naming `fqn`.
FailureOr<Type> supportedDType(std::optional<TorchDType> dtype, llvm::StringRef fqn, Location loc) {
  if (!dtype)
    return emitError(loc) << "the stored data of '" << fqn << "' has an unknown dtype";
  if (!dtype->type)
    return emitError(loc) << "the stored data of '" << fqn << "' has dtype " << dtype->name
                          << ", which tgc does not support";
  return dtype->type;
}

//===----------------------------------------------------------------------===//
// Payload configs (torch >= 2.9)
//===----------------------------------------------------------------------===//

class PayloadConfigSource : public WeightsSource {
public:
  /// One config: its member, the folder its files are in, and its JSON.
  struct Config {
    std::string member;
    std::string folder;
    Json json;
  };

  PayloadConfigSource(const Pt2Archive &archive, SmallVector<Config, 2> configs)
      : configs(std::move(configs)), storages(archive) {}

  FailureOr<StoredTensor> lookup(llvm::StringRef fqn, Location loc) override {
    for (const Config &config : configs) {
      try {
        const Json &entries = config.json.at("config");
        if (entries.contains(fqn))
          return read(config, entries.at(fqn), fqn, loc);
      } catch (const Json::exception &e) {
        return emitError(loc) << "malformed " << config.member << ": " << e.what();
      }
    }
    return emitError(loc) << "the archive has no data for '" << fqn << "'";
  }

private:
  /// An `as_int` SymInt of a tensor_meta; nullopt for a symbolic one.
  static std::optional<int64_t> constantSymInt(const Json &symInt) {
    if (unionKind(symInt) != "as_int")
      return std::nullopt;
    return unionValue(symInt).get<int64_t>();
  }

  FailureOr<StoredTensor> read(const Config &config, const Json &entry, llvm::StringRef fqn,
                               Location loc) {
    if (entry.contains("use_pickle") && entry.at("use_pickle").get<bool>())
      return emitError(loc) << "'" << fqn
                            << "' is stored pickled (a tensor subclass), which tgc does not read";
    const Json &meta = entry.at("tensor_meta");
    StoredTensor stored;
    FailureOr<Type> dtype = supportedDType(
        lookupDTypeByCode(meta.at("dtype").get<int64_t>(), loc.getContext()), fqn, loc);
    if (failed(dtype))
      return failure();
    stored.dtype = *dtype;
    for (auto [key, list] :
         {std::pair("sizes", &stored.sizes), std::pair("strides", &stored.strides)})
      for (const Json &symInt : meta.at(key)) {
        std::optional<int64_t> value = constantSymInt(symInt);
        if (!value)
          return emitError(loc) << "'" << fqn << "' has symbolic sizes in the archive";
        list->push_back(*value);
      }
    if (stored.sizes.size() != stored.strides.size())
      return emitError(loc) << "'" << fqn << "' has " << stored.sizes.size() << " sizes but "
                            << stored.strides.size() << " strides in the archive";
    std::optional<int64_t> offset = constantSymInt(meta.at("storage_offset"));
    if (!offset)
      return emitError(loc) << "'" << fqn << "' has a symbolic storage offset in the archive";
    stored.storageOffset = *offset;
    FailureOr<llvm::StringRef> storage =
        storages.get(config.folder + entry.at("path_name").get<std::string>(), loc);
    if (failed(storage))
      return failure();
    stored.storage = *storage;
    return stored;
  }

  SmallVector<Config, 2> configs;
  StorageCache storages;
};

//===----------------------------------------------------------------------===//
// torch.save zips (torch 2.6 - 2.8)
//===----------------------------------------------------------------------===//

class PickledSource : public WeightsSource {
public:
  PickledSource(const Pt2Archive &archive, llvm::ArrayRef<std::string> members, MLIRContext *ctx)
      : archive(archive), ctx(ctx) {
    for (const std::string &member : members)
      payloads.push_back(std::make_unique<Payload>(member));
  }

  FailureOr<StoredTensor> lookup(llvm::StringRef fqn, Location loc) override {
    for (std::unique_ptr<Payload> &payload : payloads) {
      if (failed(load(*payload, loc)))
        return failure();
      auto it = payload->index.find(fqn);
      if (it != payload->index.end())
        return read(*payload, payload->tensors[it->second].second, fqn, loc);
    }
    return emitError(loc) << "the archive has no data for '" << fqn << "'";
  }

private:
  /// One torch.save zip, opened and unpickled on first use.
  struct Payload {
    explicit Payload(std::string member) : member(std::move(member)) {}
    std::string member;
    bool loaded = false;
    std::unique_ptr<Pt2Archive> zip;
    std::unique_ptr<StorageCache> storages;
    PickledTensorDict tensors;
    llvm::StringMap<size_t> index;
  };

  LogicalResult load(Payload &payload, Location loc) {
    if (payload.loaded)
      return success();
    payload.loaded = true;
    if (!archive.contains(payload.member))
      return success();
    FailureOr<std::string> bytes = archive.read(payload.member, loc);
    if (failed(bytes))
      return failure();
    if (bytes->empty())
      return success();
    payload.zip = Pt2Archive::openBuffer(std::move(*bytes), payload.member, loc);
    if (!payload.zip)
      return failure();
    if (payload.zip->contains("byteorder")) {
      FailureOr<std::string> order = payload.zip->read("byteorder", loc);
      if (failed(order))
        return failure();
      if (llvm::StringRef(*order).trim() != "little")
        return emitError(loc) << "the tensor data in '" << payload.member << "' is '"
                              << llvm::StringRef(*order).trim()
                              << "' endian; tgc reads little-endian data only";
    }
    FailureOr<std::string> pickle = payload.zip->read("data.pkl", loc);
    if (failed(pickle))
      return failure();
    llvm::Expected<PickledTensorDict> tensors = readTorchSavePickle(*pickle);
    if (!tensors)
      return emitError(loc) << "cannot read the tensors pickled in '" << payload.member
                            << "' (data.pkl): " << llvm::toString(tensors.takeError());
    payload.tensors = std::move(*tensors);
    for (auto [i, entry] : llvm::enumerate(payload.tensors))
      payload.index[entry.first] = i;
    payload.storages = std::make_unique<StorageCache>(*payload.zip);
    return success();
  }

  FailureOr<StoredTensor> read(Payload &payload, const PickledTensor &tensor, llvm::StringRef fqn,
                               Location loc) {
    FailureOr<Type> dtype = supportedDType(lookupDTypeByName(tensor.dtype, ctx), fqn, loc);
    if (failed(dtype))
      return failure();
    FailureOr<llvm::StringRef> storage = payload.storages->get("data/" + tensor.storageKey, loc);
    if (failed(storage))
      return failure();
    if (storage->size() != tensor.storageBytes)
      return emitError(loc) << "storage '" << tensor.storageKey << "' of '" << payload.member
                            << "' has " << storage->size() << " bytes, but its pickle says "
                            << tensor.storageBytes;
    StoredTensor stored;
    stored.storage = *storage;
    stored.dtype = *dtype;
    stored.sizes.assign(tensor.sizes.begin(), tensor.sizes.end());
    stored.strides.assign(tensor.strides.begin(), tensor.strides.end());
    stored.storageOffset = tensor.storageOffset;
    return stored;
  }

  const Pt2Archive &archive;
  MLIRContext *ctx;
  SmallVector<std::unique_ptr<Payload>, 2> payloads;
};

} // namespace

FailureOr<std::unique_ptr<WeightsSource>>
tgc::pt2::createPayloadConfigSource(const Pt2Archive &archive, llvm::StringRef program,
                                    Location loc) {
  SmallVector<PayloadConfigSource::Config, 2> configs;
  for (auto [folder, suffix] : {std::pair("data/weights/", "_weights_config.json"),
                                std::pair("data/constants/", "_constants_config.json")}) {
    std::string member = (folder + program + suffix).str();
    if (!archive.contains(member))
      continue;
    FailureOr<std::string> text = archive.read(member, loc);
    if (failed(text))
      return failure();
    try {
      configs.push_back({member, folder, parseJson(*text)});
    } catch (const Json::exception &e) {
      return emitError(loc) << "member '" << member << "' is not valid JSON: " << e.what();
    }
  }
  return std::unique_ptr<WeightsSource>(new PayloadConfigSource(archive, std::move(configs)));
}

std::unique_ptr<WeightsSource> tgc::pt2::createPickledSource(const Pt2Archive &archive,
                                                             llvm::ArrayRef<std::string> members,
                                                             MLIRContext *ctx) {
  return std::make_unique<PickledSource>(archive, members, ctx);
}
