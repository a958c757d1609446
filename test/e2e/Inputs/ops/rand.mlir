// rand_bernoulli reads its numbers from the state it is given: the state the dropout
// program ends its first draw at reproduces that program's second mask (what set_state
// of tgc.rng_state does), another seed gives other numbers (make_expected.py).
module {
  func.func @forward(%s1: !tgc.vtensor<[2], i64> {tgc.name = "s1"},
                     %s2: !tgc.vtensor<[2], i64> {tgc.name = "s2"})
      -> (!tgc.vtensor<[64], i1>, !tgc.vtensor<[8, 8], i1>) {
    %c0 = arith.constant 0 : i64
    %c3 = arith.constant 3 : i64
    %0 = tgc.rand_bernoulli %s1, %c0 {size = #tgc.shape<[64]>, p = 0.5 : f64} : !tgc.vtensor<[2], i64> -> !tgc.vtensor<[64], i1>
    %1 = tgc.rand_bernoulli %s2, %c3 {size = #tgc.shape<[8, 8]>, p = 0.25 : f64} : !tgc.vtensor<[2], i64> -> !tgc.vtensor<[8, 8], i1>
    return %0, %1 : !tgc.vtensor<[64], i1>, !tgc.vtensor<[8, 8], i1>
  }
}
