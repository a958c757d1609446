// Read access to the members of a .pt2 zip archive (libzip), with errors as diagnostics.
#include "Pt2Archive.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"

#include <zip.h>

using namespace mlir;
using namespace tgc;
using namespace tgc::pt2;

/// libzip's message for error code `code`.
static std::string zipErrorMessage(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string message = zip_error_strerror(&error);
  zip_error_fini(&error);
  return message;
}

/// The folder all members share ("<stem>/"), or "" when they do not share one.
static std::string commonFolder(zip_t *handle) {
  zip_int64_t count = zip_get_num_entries(handle, 0);
  if (count <= 0)
    return "";
  const char *first = zip_get_name(handle, 0, ZIP_FL_ENC_RAW);
  llvm::StringRef firstName = first ? first : "";
  size_t slash = firstName.find('/');
  if (slash == llvm::StringRef::npos)
    return "";
  llvm::StringRef folder = firstName.take_front(slash + 1);
  for (zip_int64_t i = 1; i < count; ++i) {
    const char *name = zip_get_name(handle, i, ZIP_FL_ENC_RAW);
    if (!name || !llvm::StringRef(name).starts_with(folder))
      return "";
  }
  return folder.str();
}

Pt2Archive::Pt2Archive(zip_t *handle, uint64_t fileSize, std::string buffer, std::string outerName)
    : handle(handle), buffer(std::move(buffer)), outerName(std::move(outerName)),
      prefix(handle ? commonFolder(handle) : ""), fileSize(fileSize) {}

std::unique_ptr<Pt2Archive> Pt2Archive::open(llvm::StringRef path, Location loc) {
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, fileSize)) {
    emitError(loc) << "cannot read '" << path << "': " << ec.message();
    return nullptr;
  }
  int code = 0;
  zip_t *handle = zip_open(path.str().c_str(), ZIP_RDONLY, &code);
  if (!handle) {
    emitError(loc) << "'" << path
                   << "' is not a readable .pt2 archive (a zip file): " << zipErrorMessage(code);
    return nullptr;
  }
  return std::unique_ptr<Pt2Archive>(new Pt2Archive(handle, fileSize, "", ""));
}

std::unique_ptr<Pt2Archive> Pt2Archive::openBuffer(std::string data, llvm::StringRef name,
                                                   Location loc) {
  // The archive keeps the bytes; libzip reads them where they are once they moved in.
  auto archive = std::unique_ptr<Pt2Archive>(
      new Pt2Archive(nullptr, data.size(), std::move(data), name.str()));
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t *source =
      zip_source_buffer_create(archive->buffer.data(), archive->buffer.size(), 0, &error);
  zip_t *handle = source ? zip_open_from_source(source, ZIP_RDONLY, &error) : nullptr;
  if (!handle) {
    emitError(loc) << "member '" << name
                   << "' is not a readable torch.save zip: " << zip_error_strerror(&error);
    if (source)
      zip_source_free(source);
    zip_error_fini(&error);
    return nullptr;
  }
  zip_error_fini(&error);
  archive->handle = handle;
  archive->prefix = commonFolder(handle);
  return archive;
}

Pt2Archive::~Pt2Archive() {
  if (handle)
    zip_discard(handle);
}

std::string Pt2Archive::fullName(llvm::StringRef name) const { return prefix + name.str(); }

std::string Pt2Archive::describeMember(llvm::StringRef name) const {
  std::string text = "member '" + fullName(name) + "'";
  if (!outerName.empty())
    text += " of '" + outerName + "'";
  return text;
}

bool Pt2Archive::contains(llvm::StringRef name) const {
  return zip_name_locate(handle, fullName(name).c_str(), ZIP_FL_ENC_RAW) >= 0;
}

FailureOr<std::string> Pt2Archive::read(llvm::StringRef name, Location loc) const {
  zip_int64_t index = zip_name_locate(handle, fullName(name).c_str(), ZIP_FL_ENC_RAW);
  if (index < 0)
    return emitError(loc) << (outerName.empty() ? "the archive" : "'" + outerName + "'")
                          << " has no member '" << fullName(name) << "'";
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(handle, index, 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE))
    return emitError(loc) << "cannot read the size of " << describeMember(name);
  // Deflate expands at most ~1032:1, so a larger claim is a corrupt directory; checking
  // it first keeps a hostile archive from making us allocate terabytes.
  if (stat.size > fileSize * 1032 + 1024)
    return emitError(loc) << describeMember(name) << " claims " << stat.size
                          << " bytes, more than the archive can hold";
  zip_file_t *file = zip_fopen_index(handle, index, 0);
  if (!file)
    return emitError(loc) << "cannot open " << describeMember(name) << ": " << zip_strerror(handle);
  std::string data(stat.size, '\0');
  uint64_t done = 0;
  zip_int64_t got = 1;
  while (done < stat.size && got > 0) {
    got = zip_fread(file, data.data() + done, stat.size - done);
    done += got > 0 ? got : 0;
  }
  std::string fileError = got < 0 ? zip_file_strerror(file) : "the data is truncated";
  zip_fclose(file);
  if (done != stat.size)
    return emitError(loc) << "cannot read " << describeMember(name) << ": " << fileError;
  return data;
}

llvm::SmallVector<std::string> Pt2Archive::list(llvm::StringRef folder) const {
  llvm::SmallVector<std::string> names;
  std::string fullFolder = fullName(folder);
  zip_int64_t count = zip_get_num_entries(handle, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char *name = zip_get_name(handle, i, ZIP_FL_ENC_RAW);
    if (name && llvm::StringRef(name).starts_with(fullFolder))
      names.push_back(llvm::StringRef(name).drop_front(prefix.size()).str());
  }
  return names;
}
