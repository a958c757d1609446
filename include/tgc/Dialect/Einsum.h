// The equation of `torch.einsum`, parsed: shared by the op's shape inference and its
// decomposition (tgc-decompose).
#ifndef TGC_DIALECT_EINSUM_H
#define TGC_DIALECT_EINSUM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace tgc {

/// An einsum equation with every operand's labels. Labels are numbers: 0-51 the letters
/// a-z and A-Z, 52 + k the dimensions an ellipsis stands for (right-aligned over the
/// operands, as torch broadcasts them).
struct EinsumSpec {
  llvm::SmallVector<llvm::SmallVector<int, 6>, 4> inputs;
  llvm::SmallVector<int, 6> output;
};

/// Parses `equation` for operands of `ranks`: explicit (`ij,jk->ik`) or implicit
/// (`ij,jk`: the ellipsis dimensions, then the labels that appear once, in alphabetical
/// order) output. Fails with a message in `error` for a malformed equation, a rank that
/// does not match, an output label no operand has, a repeated output label, or a label
/// repeated within one operand (a diagonal, which tgc does not support).
bool parseEinsum(llvm::StringRef equation, llvm::ArrayRef<int64_t> ranks, EinsumSpec &spec,
                 std::string &error);

} // namespace tgc

#endif // TGC_DIALECT_EINSUM_H
