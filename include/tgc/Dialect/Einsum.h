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
/// operands, as torch broadcasts them). A label repeated within one operand (`ii`)
/// takes that operand's diagonal of those dimensions.
struct EinsumSpec {
  llvm::SmallVector<llvm::SmallVector<int, 6>, 4> inputs;
  llvm::SmallVector<int, 6> output;
};

/// Parses `equation` for operands of `ranks`: explicit (`ij,jk->ik`) or implicit
/// (`ij,jk`: the ellipsis dimensions, then the labels that appear once, in alphabetical
/// order; a label repeated within an operand counts once per occurrence, so `ii` is the
/// trace) output. Fails with a message in `error` for a malformed equation, a rank that
/// does not match, an output label no operand has, or a repeated output label.
bool parseEinsum(llvm::StringRef equation, llvm::ArrayRef<int64_t> ranks, EinsumSpec &spec,
                 std::string &error);

} // namespace tgc

#endif // TGC_DIALECT_EINSUM_H
