// torch's dtype table, shared by the .pt2 and .trace readers.
#include "DTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace tgc::frontend;

namespace {
struct DTypeEntry {
  int64_t code;
  llvm::StringLiteral name;
  Type (*get)(MLIRContext *);
};
} // namespace

template <unsigned width, IntegerType::SignednessSemantics signedness = IntegerType::Signless>
static Type integerType(MLIRContext *ctx) {
  return IntegerType::get(ctx, width, signedness);
}
template <typename T> static Type floatType(MLIRContext *ctx) { return T::get(ctx); }

/// Signed integers are signless in tgc (as its i64 scalars are); unsigned ones say so.
static const DTypeEntry kDTypes[] = {
    {1, "uint8", integerType<8, IntegerType::Unsigned>},
    {2, "int8", integerType<8>},
    {3, "int16", integerType<16>},
    {4, "int32", integerType<32>},
    {5, "int64", integerType<64>},
    {6, "float16", floatType<Float16Type>},
    {7, "float32", floatType<Float32Type>},
    {8, "float64", floatType<Float64Type>},
    {9, "complex32", nullptr},
    {10, "complex64", nullptr},
    {11, "complex128", nullptr},
    {12, "bool", integerType<1>},
    {13, "bfloat16", floatType<BFloat16Type>},
    {28, "uint16", integerType<16, IntegerType::Unsigned>},
    {29, "float8_e4m3fn", floatType<Float8E4M3FNType>},
    {30, "float8_e5m2", floatType<Float8E5M2Type>},
    {31, "float8_e4m3fnuz", floatType<Float8E4M3FNUZType>},
    {32, "float8_e5m2fnuz", floatType<Float8E5M2FNUZType>},
    {33, "float8_e8m0fnu", floatType<Float8E8M0FNUType>},
    {34, "uint32", integerType<32, IntegerType::Unsigned>},
    {35, "uint64", integerType<64, IntegerType::Unsigned>},
};

static TorchDType toDType(const DTypeEntry &entry, MLIRContext *ctx) {
  return TorchDType{entry.name, entry.get ? entry.get(ctx) : Type()};
}

std::optional<TorchDType> tgc::frontend::lookupDTypeByCode(int64_t code, MLIRContext *ctx) {
  const auto *it = llvm::find_if(kDTypes, [&](const DTypeEntry &d) { return d.code == code; });
  if (it == std::end(kDTypes))
    return std::nullopt;
  return toDType(*it, ctx);
}

std::optional<TorchDType> tgc::frontend::lookupDTypeByName(llvm::StringRef name, MLIRContext *ctx) {
  const auto *it = llvm::find_if(kDTypes, [&](const DTypeEntry &d) { return d.name == name; });
  if (it == std::end(kDTypes))
    return std::nullopt;
  return toDType(*it, ctx);
}

std::optional<TorchDType> tgc::frontend::lookupDTypeByType(Type type) {
  if (!type)
    return std::nullopt;
  for (const DTypeEntry &d : kDTypes)
    if (d.get && d.get(type.getContext()) == type)
      return TorchDType{d.name, type};
  return std::nullopt;
}

unsigned tgc::frontend::getElementBytes(Type dtype) {
  return std::max(1u, dtype.getIntOrFloatBitWidth() / 8);
}
