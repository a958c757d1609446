// An unknown phase is an error (exit code 1), in tgc-opt's tgc-pipeline and in tgc.
// RUN: not tgc-opt %s --tgc-pipeline="compile-to=nowhere" 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: unknown phase 'nowhere' for compile-to: expected one of capture, functionalize, decompose, autodiff, partition, lower, kernels, bufferize, gpu, llvm
// RUN: not tgc compile %s --compile-to=nowhere -o - 2>&1 | FileCheck %s --check-prefix=TGC
// TGC: error: unknown phase 'nowhere'
// RUN: not tgc compile %s --start-after=nowhere -o - 2>&1 | FileCheck %s --check-prefix=START
// START: error: unknown phase 'nowhere' for --start-after
module {
}
