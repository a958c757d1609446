// Random numbers of a 2-d shape whose rows are not a multiple of the vector width: the
// vectorizer makes 2-d vectors of the Philox body, whose 32 x 32 -> 64-bit products must
// still become LLVM (they once were arith.mului_extended, which the LLVM conversion does
// not take on 2-d vectors: "LLVM Translation failed for operation:
// builtin.unrealized_conversion_cast" for randn([5, 5])). Normal numbers use all four words.
// RUN: tgc compile %s --compile-to=llvm -o - | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t && tgc compile %s -o %t/randn.so
// CHECK-LABEL: llvm.func
// CHECK-NOT: unrealized_conversion_cast
// CHECK-NOT: mului_extended
module {
  func.func @forward() -> (!tgc.vtensor<[5, 5], f32>, !tgc.vtensor<[3, 7], f64>) {
    %a = tgc.rand {size = #tgc.shape<[5, 5]>, dtype = f32, normal} : !tgc.vtensor<[5, 5], f32>
    %b = tgc.rand {size = #tgc.shape<[3, 7]>, dtype = f64} : !tgc.vtensor<[3, 7], f64>
    return %a, %b : !tgc.vtensor<[5, 5], f32>, !tgc.vtensor<[3, 7], f64>
  }
}
