// The reader of CPython 3.11 to 3.13's marshal format (Python/marshal.c, version 4 in all
// three), as far as code objects
// and their constants need it.
#include "Bytecode.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace tgc;
using namespace tgc::py;

namespace {

/// Type codes of marshal.c; FLAG_REF marks objects that later TYPE_REFs may name.
enum TypeCode : uint8_t {
  kTypeNull = '0',
  kTypeNone = 'N',
  kTypeFalse = 'F',
  kTypeTrue = 'T',
  kTypeStopIter = 'S',
  kTypeEllipsis = '.',
  kTypeInt = 'i',
  kTypeLong = 'l',
  kTypeFloat = 'f',
  kTypeBinaryFloat = 'g',
  kTypeComplex = 'x',
  kTypeBinaryComplex = 'y',
  kTypeString = 's',
  kTypeInterned = 't',
  kTypeRef = 'r',
  kTypeTuple = '(',
  kTypeSmallTuple = ')',
  kTypeList = '[',
  kTypeDict = '{',
  kTypeCode = 'c',
  kTypeUnicode = 'u',
  kTypeSet = '<',
  kTypeFrozenSet = '>',
  kTypeAscii = 'a',
  kTypeAsciiInterned = 'A',
  kTypeShortAscii = 'z',
  kTypeShortAsciiInterned = 'Z',
  kFlagRef = 0x80,
};

/// marshal.c's MAX_MARSHAL_STACK_DEPTH: deeper nesting is an error, not a stack overflow.
constexpr unsigned kMaxDepth = 2000;
/// PyLong_MARSHAL_SHIFT: long integers are written in 15-bit digits.
constexpr unsigned kLongDigitBits = 15;

/// The magnitude of a marshalled long (15-bit digits, least significant first) in
/// decimal.
std::string toDecimal(llvm::ArrayRef<uint16_t> digits) {
  // Base-10^9 limbs, least significant first.
  std::vector<uint32_t> limbs;
  for (uint16_t digit : llvm::reverse(digits)) {
    uint64_t carry = digit;
    for (uint32_t &limb : limbs) {
      uint64_t value = (uint64_t(limb) << kLongDigitBits) + carry;
      limb = uint32_t(value % 1000000000);
      carry = value / 1000000000;
    }
    while (carry) {
      limbs.push_back(uint32_t(carry % 1000000000));
      carry /= 1000000000;
    }
  }
  if (limbs.empty())
    return "0";
  std::string text = std::to_string(limbs.back());
  for (uint32_t limb : llvm::reverse(llvm::ArrayRef(limbs).drop_back()))
    text += llvm::formatv("{0:d9}", limb).str();
  return text;
}

/// Latin-1 text (what marshal's ASCII types hold when a byte is >= 0x80) as UTF-8.
std::string latin1ToUtf8(llvm::ArrayRef<uint8_t> bytes) {
  std::string text;
  text.reserve(bytes.size());
  for (uint8_t byte : bytes) {
    if (byte < 0x80) {
      text.push_back(char(byte));
      continue;
    }
    text.push_back(char(0xC0 | (byte >> 6)));
    text.push_back(char(0x80 | (byte & 0x3F)));
  }
  return text;
}

/// One pass over a marshal buffer; `refs` is the back-reference table (null while an
/// object's slot is reserved but the object is still being read).
class MarshalReader {
public:
  MarshalReader(llvm::ArrayRef<uint8_t> bytes, int pythonMinor)
      : bytes(bytes), pythonMinor(pythonMinor) {}

  llvm::Expected<ConstantRef> readTopLevel() {
    auto object = readObject(0);
    if (!object)
      return object.takeError();
    if (pos != bytes.size())
      return error(pos, llvm::formatv("{0} trailing bytes after the object", bytes.size() - pos));
    return object;
  }

private:
  llvm::ArrayRef<uint8_t> bytes;
  int pythonMinor;
  size_t pos = 0;
  std::vector<ConstantRef> refs;

  llvm::Error error(size_t offset, const llvm::Twine &message) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "bad marshal data at offset " +
                                                                       llvm::Twine(offset) + ": " +
                                                                       message);
  }

  /// The next `count` bytes, or an error if the buffer ends first.
  llvm::Expected<llvm::ArrayRef<uint8_t>> take(size_t count) {
    if (count > bytes.size() - pos)
      return error(
          pos, llvm::formatv("truncated: {0} bytes needed, {1} left", count, bytes.size() - pos));
    llvm::ArrayRef<uint8_t> result = bytes.slice(pos, count);
    pos += count;
    return result;
  }
  llvm::Expected<uint8_t> readByte() {
    auto data = take(1);
    if (!data)
      return data.takeError();
    return (*data)[0];
  }
  llvm::Expected<int32_t> readInt32() {
    auto data = take(4);
    if (!data)
      return data.takeError();
    return llvm::support::endian::read32le(data->data());
  }
  llvm::Expected<double> readBinaryDouble() {
    auto data = take(8);
    if (!data)
      return data.takeError();
    uint64_t bits = llvm::support::endian::read64le(data->data());
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
  /// A float in marshal's text form (versions 0 and 1): a length byte and repr's text.
  llvm::Expected<double> readTextDouble() {
    size_t start = pos;
    auto length = readByte();
    if (!length)
      return length.takeError();
    auto data = take(*length);
    if (!data)
      return data.takeError();
    std::string text(data->begin(), data->end());
    char *end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size())
      return error(start, "'" + text + "' is not a float");
    return value;
  }
  /// A 32-bit length that must lie in [0, 2^31).
  llvm::Expected<size_t> readSize(llvm::StringRef what) {
    size_t start = pos;
    auto size = readInt32();
    if (!size)
      return size.takeError();
    if (*size < 0)
      return error(start, llvm::formatv("{0} size {1} is negative", what, *size));
    return size_t(*size);
  }

  /// A length: one byte for the short forms, else a 32-bit size.
  llvm::Expected<size_t> readLength(bool isShort, llvm::StringRef what) {
    if (!isShort)
      return readSize(what);
    auto length = readByte();
    if (!length)
      return length.takeError();
    return size_t(*length);
  }

  static std::shared_ptr<Constant> make(Constant::Kind kind) {
    auto constant = std::make_shared<Constant>();
    constant->kind = kind;
    return constant;
  }

  llvm::Expected<ConstantRef> readObject(unsigned depth) {
    size_t start = pos;
    if (depth >= kMaxDepth)
      return error(start, llvm::formatv("nesting deeper than {0}", kMaxDepth));
    auto code = readByte();
    if (!code)
      return code.takeError();
    bool flagRef = *code & kFlagRef;
    uint8_t type = *code & ~kFlagRef;

    // Containers reserve their back-reference slot before reading their items, as
    // marshal.c's R_REF / r_ref_reserve do, so that indices agree with the writer's.
    // Like marshal.c, the flag means nothing on singletons and references.
    if (type == kTypeNone || type == kTypeFalse || type == kTypeTrue || type == kTypeEllipsis ||
        type == kTypeStopIter || type == kTypeRef)
      flagRef = false;
    size_t slot = refs.size();
    if (flagRef)
      refs.push_back(nullptr);
    llvm::Expected<ConstantRef> object = readBody(type, start, depth);
    if (!object)
      return object.takeError();
    if (flagRef)
      refs[slot] = *object;
    return object;
  }

  llvm::Expected<ConstantRef> readBody(uint8_t type, size_t start, unsigned depth) {
    using Kind = Constant::Kind;
    switch (type) {
    case kTypeNone:
      return make(Kind::None);
    case kTypeEllipsis:
      return make(Kind::Ellipsis);
    case kTypeStopIter:
      return make(Kind::StopIteration);
    case kTypeFalse:
    case kTypeTrue: {
      auto constant = make(Kind::Bool);
      constant->boolValue = type == kTypeTrue;
      return constant;
    }
    case kTypeInt: {
      auto value = readInt32();
      if (!value)
        return value.takeError();
      auto constant = make(Kind::Int);
      constant->intValue = *value;
      return constant;
    }
    case kTypeLong:
      return readLong(start);
    case kTypeBinaryFloat:
    case kTypeFloat: {
      auto value = type == kTypeFloat ? readTextDouble() : readBinaryDouble();
      if (!value)
        return value.takeError();
      auto constant = make(Kind::Float);
      constant->floatValue = *value;
      return constant;
    }
    case kTypeBinaryComplex:
    case kTypeComplex: {
      auto constant = make(Kind::Complex);
      for (double *part : {&constant->floatValue, &constant->imagValue}) {
        auto value = type == kTypeComplex ? readTextDouble() : readBinaryDouble();
        if (!value)
          return value.takeError();
        *part = *value;
      }
      return constant;
    }
    case kTypeString:
    case kTypeInterned:
    case kTypeUnicode:
    case kTypeAscii:
    case kTypeAsciiInterned:
    case kTypeShortAscii:
    case kTypeShortAsciiInterned:
      return readString(type);
    case kTypeTuple:
    case kTypeSmallTuple:
    case kTypeFrozenSet:
      return readSequence(type, depth);
    case kTypeRef:
      return readRef(start);
    case kTypeCode:
      return readCode(depth);
    case kTypeNull:
      return error(start, "NULL object outside a dict");
    case kTypeList:
    case kTypeDict:
    case kTypeSet:
      return error(start, llvm::formatv("a mutable {0} cannot be a code constant",
                                        type == kTypeList   ? "list"
                                        : type == kTypeDict ? "dict"
                                                            : "set"));
    default:
      return error(start, llvm::formatv("unknown type code 0x{0:x-2}", type));
    }
  }

  llvm::Expected<ConstantRef> readLong(size_t start) {
    auto signedCount = readInt32();
    if (!signedCount)
      return signedCount.takeError();
    if (*signedCount == INT32_MIN)
      return error(start, "long size out of range");
    size_t count = std::abs(*signedCount);
    if (count > (bytes.size() - pos) / 2)
      return error(pos, llvm::formatv("truncated long: {0} digits needed", count));
    std::vector<uint16_t> digits;
    digits.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      size_t digitOffset = pos;
      auto data = take(2);
      if (!data)
        return data.takeError();
      uint16_t digit = llvm::support::endian::read16le(data->data());
      if (digit >> kLongDigitBits)
        return error(digitOffset, "digit out of range in long");
      digits.push_back(digit);
    }
    if (!digits.empty() && digits.back() == 0)
      return error(start, "unnormalized long data");

    bool negative = *signedCount < 0;
    auto constant = make(Constant::Kind::Int);
    // The magnitude in 64 bits, if it fits.
    uint64_t magnitude = 0;
    bool fits = true;
    for (uint16_t digit : llvm::reverse(digits)) {
      if (magnitude >> (64 - kLongDigitBits)) {
        fits = false;
        break;
      }
      magnitude = (magnitude << kLongDigitBits) | digit;
    }
    uint64_t limit = negative ? uint64_t(1) << 63 : (uint64_t(1) << 63) - 1;
    if (fits && magnitude <= limit) {
      constant->intValue = negative ? int64_t(0 - magnitude) : int64_t(magnitude);
      return constant;
    }
    constant->bigInt = (negative ? "-" : "") + toDecimal(digits);
    return constant;
  }

  llvm::Expected<ConstantRef> readString(uint8_t type) {
    bool isShort = type == kTypeShortAscii || type == kTypeShortAsciiInterned;
    auto size = readLength(isShort, "string");
    if (!size)
      return size.takeError();
    auto data = take(*size);
    if (!data)
      return data.takeError();
    if (type == kTypeString) {
      auto constant = make(Constant::Kind::Bytes);
      constant->bytes.assign(data->begin(), data->end());
      return constant;
    }
    auto constant = make(Constant::Kind::Str);
    bool isAscii = type == kTypeAscii || type == kTypeAsciiInterned || isShort;
    // UNICODE and INTERNED hold UTF-8 (with lone surrogates passed through).
    constant->bytes = isAscii ? latin1ToUtf8(*data) : std::string(data->begin(), data->end());
    return constant;
  }

  llvm::Expected<ConstantRef> readSequence(uint8_t type, unsigned depth) {
    auto size = readLength(type == kTypeSmallTuple, type == kTypeFrozenSet ? "frozenset" : "tuple");
    if (!size)
      return size.takeError();
    auto constant =
        make(type == kTypeFrozenSet ? Constant::Kind::FrozenSet : Constant::Kind::Tuple);
    // Every item takes at least one byte: do not trust the size for the allocation.
    constant->items.reserve(std::min(*size, bytes.size() - pos));
    for (size_t i = 0; i < *size; ++i) {
      auto item = readObject(depth + 1);
      if (!item)
        return item.takeError();
      constant->items.push_back(std::move(*item));
    }
    return constant;
  }

  llvm::Expected<ConstantRef> readRef(size_t start) {
    auto index = readInt32();
    if (!index)
      return index.takeError();
    if (*index < 0 || size_t(*index) >= refs.size())
      return error(
          start, llvm::formatv("invalid reference {0} ({1} objects so far)", *index, refs.size()));
    if (!refs[*index])
      return error(start, llvm::formatv("reference {0} names an object that is still "
                                        "being read",
                                        *index));
    return refs[*index];
  }

  /// Reads one field of a code object and checks its kind.
  llvm::Expected<ConstantRef> readField(unsigned depth, Constant::Kind kind,
                                        llvm::StringRef field) {
    size_t start = pos;
    auto value = readObject(depth + 1);
    if (!value)
      return value.takeError();
    if ((*value)->kind != kind)
      return error(start, "code object field " + field + " has the wrong type");
    return value;
  }
  llvm::Error readStrings(unsigned depth, llvm::StringRef field,
                          std::vector<std::string> &strings) {
    size_t start = pos;
    auto tuple = readField(depth, Constant::Kind::Tuple, field);
    if (!tuple)
      return tuple.takeError();
    for (const ConstantRef &item : (*tuple)->items) {
      if (item->kind != Constant::Kind::Str)
        return error(start, "code object field " + field + " holds a non-string");
      strings.push_back(item->bytes);
    }
    return llvm::Error::success();
  }
  llvm::Error readBytes(unsigned depth, llvm::StringRef field, std::vector<uint8_t> &out) {
    auto value = readField(depth, Constant::Kind::Bytes, field);
    if (!value)
      return value.takeError();
    out.assign((*value)->bytes.begin(), (*value)->bytes.end());
    return llvm::Error::success();
  }
  llvm::Error readString(unsigned depth, llvm::StringRef field, std::string &out) {
    auto value = readField(depth, Constant::Kind::Str, field);
    if (!value)
      return value.takeError();
    out = (*value)->bytes;
    return llvm::Error::success();
  }
  llvm::Error readInt(int &out) {
    auto value = readInt32();
    if (!value)
      return value.takeError();
    out = *value;
    return llvm::Error::success();
  }

  /// A code object in the field order of marshal.c's TYPE_CODE (the same in 3.11 to 3.13).
  llvm::Expected<ConstantRef> readCode(unsigned depth) {
    size_t start = pos;
    auto code = std::make_shared<CodeObject>();
    code->pythonMinor = pythonMinor;
    int flags = 0;
    for (int *field :
         {&code->argCount, &code->posOnlyArgCount, &code->kwOnlyArgCount, &code->stackSize, &flags})
      if (llvm::Error err = readInt(*field))
        return std::move(err);
    code->flags = uint32_t(flags);
    if (llvm::Error err = readBytes(depth, "co_code", code->code))
      return std::move(err);
    auto consts = readField(depth, Constant::Kind::Tuple, "co_consts");
    if (!consts)
      return consts.takeError();
    code->consts = (*consts)->items;
    if (llvm::Error err = readStrings(depth, "co_names", code->names))
      return std::move(err);
    if (llvm::Error err = readStrings(depth, "co_localsplusnames", code->localsPlusNames))
      return std::move(err);
    if (llvm::Error err = readBytes(depth, "co_localspluskinds", code->localsPlusKinds))
      return std::move(err);
    if (llvm::Error err = readString(depth, "co_filename", code->filename))
      return std::move(err);
    if (llvm::Error err = readString(depth, "co_name", code->name))
      return std::move(err);
    if (llvm::Error err = readString(depth, "co_qualname", code->qualname))
      return std::move(err);
    if (llvm::Error err = readInt(code->firstLineNo))
      return std::move(err);
    if (llvm::Error err = readBytes(depth, "co_linetable", code->lineTable))
      return std::move(err);
    if (llvm::Error err = readBytes(depth, "co_exceptiontable", code->exceptionTable))
      return std::move(err);

    if (code->code.size() % 2)
      return error(start, llvm::formatv("code object '{0}' has an odd co_code length {1}",
                                        code->name, code->code.size()));
    if (code->localsPlusNames.size() != code->localsPlusKinds.size())
      return error(start, llvm::formatv("code object '{0}' has {1} local names but {2} "
                                        "local kinds",
                                        code->name, code->localsPlusNames.size(),
                                        code->localsPlusKinds.size()));
    auto constant = make(Constant::Kind::Code);
    constant->code = std::move(code);
    return constant;
  }
};

} // namespace

llvm::Expected<ConstantRef> tgc::py::readMarshal(llvm::ArrayRef<uint8_t> bytes, int pythonMinor) {
  return MarshalReader(bytes, pythonMinor).readTopLevel();
}
