# Precompiled headers (docs/design.md, "Building"): a tgc source file is small, but the
# MLIR headers it includes are not. Parsing them is most of the time of a typical
# translation unit (23 of 28 s for a 55-line pass at -O3), so each large C++ target
# precompiles the upstream headers tgc uses everywhere, once, and every file of the
# target starts from that. Headers of tgc itself are precompiled only for the targets
# whose layer may use them (scripts/check_layers.py checks the includes written in the
# sources, which stay complete: a build with -DTGC_PRECOMPILED_HEADERS=OFF compiles).
option(TGC_PRECOMPILED_HEADERS "Precompile the MLIR and LLVM headers of large C++ targets" ON)

set(TGC_PRECOMPILED_UPSTREAM_HEADERS
  <algorithm> <cmath> <cstdint> <cstring> <functional> <limits> <map> <memory> <optional>
  <set> <string> <tuple> <utility> <vector>
  [["llvm/ADT/DenseMap.h"]] [["llvm/ADT/STLExtras.h"]] [["llvm/ADT/SetVector.h"]]
  [["llvm/ADT/SmallVector.h"]] [["llvm/ADT/StringExtras.h"]] [["llvm/ADT/StringMap.h"]]
  [["llvm/ADT/StringRef.h"]] [["llvm/ADT/StringSet.h"]] [["llvm/ADT/StringSwitch.h"]]
  [["llvm/Support/Error.h"]] [["llvm/Support/FormatVariadic.h"]]
  [["llvm/Support/raw_ostream.h"]]
  [["mlir/IR/AffineExpr.h"]] [["mlir/IR/Builders.h"]] [["mlir/IR/BuiltinAttributes.h"]]
  [["mlir/IR/BuiltinOps.h"]] [["mlir/IR/BuiltinTypes.h"]] [["mlir/IR/Diagnostics.h"]]
  [["mlir/IR/IRMapping.h"]] [["mlir/IR/MLIRContext.h"]] [["mlir/IR/OpImplementation.h"]]
  [["mlir/IR/PatternMatch.h"]] [["mlir/IR/SymbolTable.h"]]
  [["mlir/Dialect/Affine/IR/AffineOps.h"]] [["mlir/Dialect/Arith/IR/Arith.h"]]
  [["mlir/Dialect/Bufferization/IR/Bufferization.h"]] [["mlir/Dialect/Func/IR/FuncOps.h"]]
  [["mlir/Dialect/Linalg/IR/Linalg.h"]] [["mlir/Dialect/Math/IR/Math.h"]]
  [["mlir/Dialect/MemRef/IR/MemRef.h"]] [["mlir/Dialect/SCF/IR/SCF.h"]]
  [["mlir/Dialect/Tensor/IR/Tensor.h"]] [["mlir/Dialect/Vector/IR/VectorOps.h"]]
  [["mlir/Pass/Pass.h"]] [["mlir/Transforms/DialectConversion.h"]]
  [["mlir/Transforms/GreedyPatternRewriteDriver.h"]])

# tgc_precompile_headers(TARGET [TGC_DIALECT] [HEADERS h...]): TARGET's C++ files start
# from the upstream headers above, with TGC_DIALECT also tgc/Dialect/TgcDialect.h (the
# dialect's ops: its generated declarations are the largest header of all), and HEADERS
# (headers of TARGET's own component, written as target_precompile_headers takes them).
# An add_mlir_library target compiles in obj.TARGET.
function(tgc_precompile_headers target)
  if(NOT TGC_PRECOMPILED_HEADERS)
    return()
  endif()
  cmake_parse_arguments(ARG "TGC_DIALECT" "" "HEADERS" ${ARGN})
  set(headers ${TGC_PRECOMPILED_UPSTREAM_HEADERS})
  if(ARG_TGC_DIALECT)
    list(APPEND headers [["tgc/Dialect/TgcDialect.h"]])
  endif()
  list(APPEND headers ${ARG_HEADERS})
  set(cxx_headers "")
  foreach(header IN LISTS headers)
    # (`>` would end the generator expression: <vector> is <vector$<ANGLE-R>.)
    string(REPLACE ">" "$<ANGLE-R>" header "${header}")
    list(APPEND cxx_headers "$<$<COMPILE_LANGUAGE:CXX>:${header}>")
  endforeach()
  if(TARGET obj.${target})
    set(target obj.${target})
  endif()
  target_precompile_headers(${target} PRIVATE ${cxx_headers})
endfunction()
