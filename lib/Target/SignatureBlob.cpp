//===- SignatureBlob.cpp - The signature blob the runtime decodes ---------===//

#include "SignatureInternal.h"

using namespace tgc;

namespace {
constexpr uint32_t kSignatureVersion = 4;
} // namespace

namespace {
/// Little-endian writer for the blob's fixed-width fields.
class BlobWriter {
public:
  void u8(uint8_t v) { bytes.push_back(char(v)); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i64(int64_t v) { le(uint64_t(v), 8); }
  void str(const std::string &s) {
    u32(uint32_t(s.size()));
    bytes += s;
  }
  void dtype(DType d) {
    u8(d.code);
    u8(d.bits);
  }
  void sizes(const std::vector<SizeExpr> &sizes) {
    u32(uint32_t(sizes.size()));
    for (const SizeExpr &size : sizes) {
      u32(uint32_t(size.ops().size()));
      for (const ExprOp &op : size.ops()) {
        u8(uint8_t(op.opcode));
        i64(op.operand);
      }
    }
  }
  void result(const ResultInfo &result) {
    u8(uint8_t(result.kind));
    dtype(result.dtype);
    str(result.name);
    u32(result.kind == ResultKind::UserOutput ? kNoTarget : result.target);
    sizes(result.sizes);
    u32(uint32_t(result.strides.size()));
    for (int64_t stride : result.strides)
      i64(stride);
  }
  std::string take() { return std::move(bytes); }

private:
  void le(uint64_t v, unsigned width) {
    for (unsigned i = 0; i < width; ++i)
      bytes.push_back(char((v >> (8 * i)) & 0xff));
  }
  std::string bytes;
};
} // namespace

std::string tgc::encodeSignatureBlob(const ModelSignature &signature) {
  BlobWriter w;
  w.u8('T');
  w.u8('G');
  w.u8('C');
  w.u8('S');
  w.u32(kSignatureVersion);
  w.u32(uint32_t(signature.symbols.size()));
  for (const SymbolInfo &symbol : signature.symbols) {
    w.str(symbol.name);
    w.i64(symbol.min);
    w.i64(symbol.max);
  }
  w.u32(uint32_t(signature.args.size()));
  for (const ArgInfo &arg : signature.args) {
    w.u8(uint8_t(arg.kind));
    w.dtype(arg.dtype);
    w.str(arg.name);
    w.sizes(arg.sizes);
    bool state = arg.kind != ArgKind::UserInput;
    w.u64(state ? arg.dataOffset : 0);
    w.u64(state ? arg.dataSize : 0);
  }
  w.u32(uint32_t(signature.results.size()));
  for (const ResultInfo &result : signature.results)
    w.result(result);
  w.u64(signature.memory.arenaBytes);
  w.u8(signature.backward ? 1 : 0);
  if (!signature.backward)
    return w.take();
  const BackwardInfo &bw = *signature.backward;
  w.u32(uint32_t(bw.saved.size()));
  for (const SavedInfo &saved : bw.saved) {
    w.dtype(saved.dtype);
    w.u32(saved.arg);
    w.sizes(saved.sizes);
  }
  w.u32(uint32_t(bw.tangents.size()));
  for (uint32_t output : bw.tangents)
    w.u32(output);
  w.u32(uint32_t(bw.results.size()));
  for (const ResultInfo &result : bw.results)
    w.result(result);
  w.u64(bw.memory.arenaBytes);
  return w.take();
}

void tgc::appendWeights(std::string &weightsBlob, ArgInfo &arg, std::string_view bytes) {
  size_t offset =
      (weightsBlob.size() + kWeightsAlignment - 1) / kWeightsAlignment * kWeightsAlignment;
  weightsBlob.resize(offset, '\0');
  weightsBlob.append(bytes.data(), bytes.size());
  arg.dataOffset = offset;
  arg.dataSize = bytes.size();
}
