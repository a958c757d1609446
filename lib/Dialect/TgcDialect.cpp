// The tgc dialect: registration, and the textual form of its types and attributes.
#include "tgc/Dialect/TgcDialect.h"
#include "tgc/Dialect/Derivatives.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tgc;

#include "tgc/Dialect/TgcDialect.cpp.inc"
#include "tgc/Dialect/TgcEnums.cpp.inc"
#include "tgc/Dialect/TgcInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tgc/Dialect/TgcAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tgc/Dialect/TgcTypes.cpp.inc"

void TgcDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "tgc/Dialect/TgcOps.cpp.inc"
      >();
  attachDerivatives(getContext());
}

void TgcDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tgc/Dialect/TgcTypes.cpp.inc"
      >();
}

void TgcDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tgc/Dialect/TgcAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Size expressions
//===----------------------------------------------------------------------===//

namespace {
/// Recursive-descent parser for sizes: `expr := term (('+'|'-') term)*`,
/// `term := factor (('*' | floordiv | ceildiv | mod) factor)*`,
/// `factor := integer | sN | '-' factor | '(' expr ')'`.
class SizeExprParser {
public:
  explicit SizeExprParser(AsmParser &parser) : parser(parser) {}

  ParseResult parseExpr(AffineExpr &result) {
    if (parseTerm(result))
      return failure();
    while (true) {
      bool plus = succeeded(parser.parseOptionalPlus());
      if (!plus && failed(parser.parseOptionalMinus()))
        return success();
      AffineExpr rhs;
      if (parseTerm(rhs))
        return failure();
      result = plus ? result + rhs : result - rhs;
    }
  }

private:
  ParseResult parseTerm(AffineExpr &result) {
    if (parseFactor(result))
      return failure();
    while (true) {
      AffineExpr rhs;
      if (succeeded(parser.parseOptionalStar())) {
        if (parseFactor(rhs))
          return failure();
        result = result * rhs;
        continue;
      }
      StringRef keyword;
      if (failed(parser.parseOptionalKeyword(&keyword, {"floordiv", "ceildiv", "mod"})))
        return success();
      if (parseFactor(rhs))
        return failure();
      if (keyword == "floordiv")
        result = result.floorDiv(rhs);
      else if (keyword == "ceildiv")
        result = result.ceilDiv(rhs);
      else
        result = result % rhs;
    }
  }

  ParseResult parseFactor(AffineExpr &result) {
    MLIRContext *ctx = parser.getContext();
    if (succeeded(parser.parseOptionalMinus())) {
      if (parseFactor(result))
        return failure();
      result = -result;
      return success();
    }
    if (succeeded(parser.parseOptionalLParen()))
      return failure(parseExpr(result) || parser.parseRParen());
    int64_t value;
    OptionalParseResult intResult = parser.parseOptionalInteger(value);
    if (intResult.has_value()) {
      if (failed(*intResult))
        return failure();
      result = getAffineConstantExpr(value, ctx);
      return success();
    }
    SMLoc loc = parser.getCurrentLocation();
    StringRef name;
    if (parser.parseKeyword(&name))
      return failure();
    unsigned position;
    if (!name.consume_front("s") || name.getAsInteger(10, position))
      return parser.emitError(loc, "expected a size: an integer or a symbol 'sN'");
    result = getAffineSymbolExpr(position, ctx);
    return success();
  }

  AsmParser &parser;
};
} // namespace

ParseResult tgc::parseSizeExpr(AsmParser &parser, AffineExpr &expr) {
  return SizeExprParser(parser).parseExpr(expr);
}

ParseResult tgc::parseSizeList(AsmParser &parser, SmallVectorImpl<AffineExpr> &exprs) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
    AffineExpr expr;
    if (parseSizeExpr(parser, expr))
      return failure();
    exprs.push_back(expr);
    return success();
  });
}

void tgc::printSizeList(AsmPrinter &printer, ArrayRef<AffineExpr> exprs) {
  printer << '[';
  llvm::interleaveComma(exprs, printer, [&](AffineExpr e) { e.print(printer.getStream()); });
  printer << ']';
}

//===----------------------------------------------------------------------===//
// ShapeAttr
//===----------------------------------------------------------------------===//

Attribute ShapeAttr::parse(AsmParser &parser, Type) {
  SmallVector<AffineExpr> sizes;
  if (parser.parseLess() || parseSizeList(parser, sizes) || parser.parseGreater())
    return {};
  return ShapeAttr::get(parser.getContext(), sizes);
}

void ShapeAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printSizeList(printer, getSizes());
  printer << '>';
}

//===----------------------------------------------------------------------===//
// Tensor types
//===----------------------------------------------------------------------===//

/// `<[sizes], dtype (, strides = [..])? (, offset = e)? (, device = d)? (, grad)?>`
static ParseResult parseTensorParams(AsmParser &parser, TensorMeta &meta) {
  if (parser.parseLess() || parseSizeList(parser, meta.sizes) || parser.parseComma() ||
      parser.parseType(meta.dtype))
    return failure();
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key))
      return failure();
    if (key == "grad") {
      meta.requiresGrad = true;
      continue;
    }
    if (parser.parseEqual())
      return failure();
    if (key == "strides") {
      if (parseSizeList(parser, meta.strides))
        return failure();
    } else if (key == "offset") {
      if (parseSizeExpr(parser, meta.storageOffset))
        return failure();
    } else if (key == "device") {
      StringRef kind;
      int64_t index = -1;
      if (parser.parseKeyword(&kind))
        return failure();
      if (succeeded(parser.parseOptionalColon()) && parser.parseInteger(index))
        return failure();
      meta.device = DeviceAttr::get(parser.getContext(), kind, index);
    } else {
      return parser.emitError(loc, "unknown tensor type key '") << key << "'";
    }
  }
  return parser.parseGreater();
}

static void printTensorParams(AsmPrinter &printer, const TensorMeta &meta) {
  printer << '<';
  printSizeList(printer, meta.sizes);
  printer << ", " << meta.dtype;
  if (!meta.strides.empty()) {
    printer << ", strides = ";
    printSizeList(printer, meta.strides);
  }
  if (meta.storageOffset && getConstantSize(meta.storageOffset) != 0) {
    printer << ", offset = ";
    meta.storageOffset.print(printer.getStream());
  }
  if (auto device = llvm::dyn_cast_or_null<DeviceAttr>(meta.device)) {
    printer << ", device = " << device.getKind();
    if (device.getIndex() >= 0)
      printer << ':' << device.getIndex();
  }
  if (meta.requiresGrad)
    printer << ", grad";
  printer << '>';
}

template <typename T> static Type parseTensorType(AsmParser &parser) {
  TensorMeta meta;
  if (parseTensorParams(parser, meta))
    return {};
  return parser.getChecked<T>(parser.getContext(), meta.sizes, meta.dtype, meta.strides,
                              meta.storageOffset, llvm::dyn_cast_or_null<DeviceAttr>(meta.device),
                              meta.requiresGrad);
}

static LogicalResult verifyTensorParams(function_ref<InFlightDiagnostic()> emitError,
                                        ArrayRef<AffineExpr> sizes, Type dtype,
                                        ArrayRef<AffineExpr> strides) {
  if (!dtype.isIntOrFloat() && !llvm::isa<ComplexType>(dtype))
    return emitError() << "tensor dtype must be an integer, float or complex type, got " << dtype;
  if (!strides.empty() && strides.size() != sizes.size())
    return emitError() << "tensor has " << sizes.size() << " sizes but " << strides.size()
                       << " strides";
  for (AffineExpr size : sizes)
    if (std::optional<int64_t> c = getConstantSize(size); c && *c < 0)
      return emitError() << "tensor size must be non-negative, got " << *c;
  return success();
}

/// The metadata of either tensor type (they have the same parameters).
template <typename T> static TensorMeta metaOf(T type) {
  TensorMeta meta;
  meta.sizes.assign(type.getSizes().begin(), type.getSizes().end());
  meta.strides.assign(type.getStrides().begin(), type.getStrides().end());
  meta.storageOffset = type.getStorageOffset();
  meta.dtype = type.getDtype();
  meta.device = type.getDevice();
  meta.requiresGrad = type.getRequiresGrad();
  return meta;
}

#define TGC_TENSOR_TYPE_METHODS(T)                                                                 \
  Type T::parse(AsmParser &parser) { return parseTensorType<T>(parser); }                          \
  void T::print(AsmPrinter &printer) const { printTensorParams(printer, getMeta()); }              \
  LogicalResult T::verify(function_ref<InFlightDiagnostic()> emitError,                            \
                          ArrayRef<AffineExpr> sizes, Type dtype, ArrayRef<AffineExpr> strides,    \
                          AffineExpr, DeviceAttr, bool) {                                          \
    return verifyTensorParams(emitError, sizes, dtype, strides);                                   \
  }                                                                                                \
  TensorMeta T::getMeta() const { return metaOf(*this); }
TGC_TENSOR_TYPE_METHODS(RefTensorType)
TGC_TENSOR_TYPE_METHODS(ValueTensorType)
#undef TGC_TENSOR_TYPE_METHODS

TensorMeta BaseTensorType::getMeta() const {
  if (auto ref = llvm::dyn_cast<RefTensorType>(*this))
    return ref.getMeta();
  return llvm::cast<ValueTensorType>(*this).getMeta();
}

ArrayRef<AffineExpr> BaseTensorType::getSizes() const {
  if (auto ref = llvm::dyn_cast<RefTensorType>(*this))
    return ref.getSizes();
  return llvm::cast<ValueTensorType>(*this).getSizes();
}

Type BaseTensorType::getDtype() const {
  if (auto ref = llvm::dyn_cast<RefTensorType>(*this))
    return ref.getDtype();
  return llvm::cast<ValueTensorType>(*this).getDtype();
}

BaseTensorType BaseTensorType::get(MLIRContext *ctx, bool isRef, const TensorMeta &meta) {
  auto device = llvm::dyn_cast_or_null<DeviceAttr>(meta.device);
  Type type;
  if (isRef)
    type = RefTensorType::get(ctx, meta.sizes, meta.dtype, meta.strides, meta.storageOffset, device,
                              meta.requiresGrad);
  else
    type = ValueTensorType::get(ctx, meta.sizes, meta.dtype, meta.strides, meta.storageOffset,
                                device, meta.requiresGrad);
  return llvm::cast<BaseTensorType>(type);
}

BaseTensorType BaseTensorType::withMeta(const TensorMeta &meta) const {
  return get(getContext(), isRef(), meta);
}

ValueTensorType BaseTensorType::toValue() const {
  TensorMeta meta = getMeta();
  meta.strides.clear();
  meta.storageOffset = {};
  return llvm::cast<ValueTensorType>(get(getContext(), /*isRef=*/false, meta));
}

SmallVector<int64_t> BaseTensorType::getStaticSizes() const {
  SmallVector<int64_t> sizes;
  for (AffineExpr size : getSizes())
    sizes.push_back(getConstantSize(size).value_or(ShapedType::kDynamic));
  return sizes;
}

bool tgc::areMetaCompatible(TypeRange l, TypeRange r) {
  if (l.size() != r.size())
    return false;
  for (auto [a, b] : llvm::zip(l, r)) {
    auto ta = llvm::dyn_cast<BaseTensorType>(a);
    auto tb = llvm::dyn_cast<BaseTensorType>(b);
    if (!ta || !tb) {
      if (a != b)
        return false;
      continue;
    }
    TensorMeta ma = ta.getMeta(), mb = tb.getMeta();
    if (ma.sizes != mb.sizes || ma.dtype != mb.dtype)
      return false;
    if (!ma.strides.empty() && !mb.strides.empty() && ma.strides != mb.strides)
      return false;
  }
  return true;
}

unsigned tgc::getNumSymbols(Operation *anyOpInModule) {
  auto module = anyOpInModule->getParentOfType<ModuleOp>();
  if (!module)
    return 0;
  auto symbols = module->getAttrOfType<ArrayAttr>(TgcDialect::kSymbolsAttrName);
  return symbols ? symbols.size() : 0;
}

void tgc::collectSymbols(Type type, SmallVectorImpl<unsigned> &symbols) {
  auto tensor = llvm::dyn_cast<BaseTensorType>(type);
  if (!tensor)
    return;
  TensorMeta meta = tensor.getMeta();
  auto visit = [&](AffineExpr expr) {
    if (!expr)
      return;
    expr.walk([&](AffineExpr e) {
      if (auto s = llvm::dyn_cast<AffineSymbolExpr>(e))
        if (!llvm::is_contained(symbols, s.getPosition()))
          symbols.push_back(s.getPosition());
    });
  };
  for (AffineExpr e : meta.sizes)
    visit(e);
  for (AffineExpr e : meta.strides)
    visit(e);
  visit(meta.storageOffset);
}
