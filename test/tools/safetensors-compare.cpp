// safetensors-compare: checks every tensor of an expected file against an actual one
// (same names, shapes and dtypes; values within |a - e| <= atol + rtol * |e|, plus
// scale-tol times the tensor's largest |e| when given).
#include "tgc/Support/Safetensors.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace tgc;

static llvm::cl::opt<std::string> actualPath(llvm::cl::Positional, llvm::cl::Required,
                                             llvm::cl::desc("<actual.safetensors>"));
static llvm::cl::opt<std::string> expectedPath(llvm::cl::Positional, llvm::cl::Required,
                                               llvm::cl::desc("<expected.safetensors>"));
static llvm::cl::opt<double> relTol("rtol", llvm::cl::init(1e-4),
                                    llvm::cl::desc("relative tolerance"));
static llvm::cl::opt<double> absTol("atol", llvm::cl::init(1e-5),
                                    llvm::cl::desc("absolute tolerance"));
static llvm::cl::opt<double>
    scaleTol("scale-tol", llvm::cl::init(0),
             llvm::cl::desc("also accept errors up to this fraction of the tensor's largest "
                            "expected magnitude (for low-precision results, whose rounding "
                            "errors scale with the values they came from)"));
static llvm::cl::opt<bool> allowExtra("allow-extra", llvm::cl::init(false),
                                      llvm::cl::desc("accept tensors only the actual file has"));
static llvm::cl::list<std::string>
    ignorePrefixes("ignore-prefix",
                   llvm::cl::desc("accept tensors only the actual file has whose names start "
                                  "with this prefix (repeatable)"));

/// A 16-bit float's value: `bits` in the upper half of an f32 (bf16), or IEEE half.
static double bf16Value(uint16_t bits) {
  uint32_t word = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof(f));
  return f;
}
static double f16Value(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                     : exponent == 31 ? (mantissa ? std::nan("") : INFINITY)
                                      : std::ldexp(1024 + mantissa, exponent - 25);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

/// Element `i` of `t` as a double (integers and bools exactly).
static double element(const SafetensorsTensor &t, size_t i) {
  const char *p = t.data.data() + i * safetensorsDTypeSize(t.dtype);
  auto load = [&](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return static_cast<double>(v);
  };
  switch (t.dtype) {
  case SafetensorsDType::F32:
    return load(float());
  case SafetensorsDType::F64:
    return load(double());
  case SafetensorsDType::I64:
    return load(int64_t());
  case SafetensorsDType::I32:
    return load(int32_t());
  case SafetensorsDType::I16:
    return load(int16_t());
  case SafetensorsDType::I8:
    return load(int8_t());
  case SafetensorsDType::U8:
  case SafetensorsDType::BOOL:
    return load(uint8_t());
  case SafetensorsDType::U16:
    return load(uint16_t());
  case SafetensorsDType::U32:
    return load(uint32_t());
  case SafetensorsDType::U64:
    return load(uint64_t());
  case SafetensorsDType::BF16:
    return bf16Value(static_cast<uint16_t>(load(uint16_t())));
  case SafetensorsDType::F16:
    return f16Value(static_cast<uint16_t>(load(uint16_t())));
  }
  llvm_unreachable("a dtype the switch does not cover");
}

/// Compares one tensor; prints a line and returns whether it matches.
static bool compareTensor(const SafetensorsTensor &actual, const SafetensorsTensor &expected) {
  llvm::outs() << expected.name << ": ";
  if (actual.dtype != expected.dtype || actual.shape != expected.shape) {
    llvm::outs() << "MISMATCH dtype/shape (" << safetensorsDTypeName(actual.dtype) << " vs "
                 << safetensorsDTypeName(expected.dtype) << ")\n";
    return false;
  }
  size_t n = expected.numElements(), bad = 0;
  double worst = 0, largest = 0;
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(element(expected, i)))
      largest = std::max(largest, std::fabs(element(expected, i)));
  for (size_t i = 0; i < n; ++i) {
    double a = element(actual, i), e = element(expected, i);
    double err = std::fabs(a - e);
    bool ok = (std::isnan(a) && std::isnan(e)) || a == e ||
              err <= absTol + relTol * std::fabs(e) + scaleTol * largest;
    if (!ok)
      ++bad;
    if (!std::isnan(err))
      worst = std::max(worst, err);
  }
  llvm::outs() << (bad ? "MISMATCH " : "ok ") << n << " elements, max abs error " << worst;
  if (bad)
    llvm::outs() << ", " << bad << " outside tolerance";
  llvm::outs() << "\n";
  return bad == 0;
}

int main(int argc, char **argv) {
  llvm::cl::ParseCommandLineOptions(argc, argv, "compare safetensors files\n");
  auto actual = readSafetensors(actualPath);
  auto expected = readSafetensors(expectedPath);
  if (!actual || !expected) {
    llvm::errs() << "error: "
                 << (actual ? llvm::toString(expected.takeError())
                            : llvm::toString(actual.takeError()))
                 << "\n";
    return 1;
  }
  bool ok = true;
  for (const SafetensorsTensor &e : expected->tensors) {
    const SafetensorsTensor *a = actual->find(e.name);
    if (!a) {
      llvm::outs() << e.name << ": MISSING\n";
      ok = false;
      continue;
    }
    ok &= compareTensor(*a, e);
  }
  auto ignored = [](llvm::StringRef name) {
    return llvm::any_of(ignorePrefixes,
                        [&](const std::string &prefix) { return name.starts_with(prefix); });
  };
  for (const SafetensorsTensor &a : actual->tensors)
    if (!expected->find(a.name) && !allowExtra && !ignored(a.name)) {
      llvm::outs() << a.name << ": UNEXPECTED\n";
      ok = false;
    }
  return ok ? 0 : 1;
}
