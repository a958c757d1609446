// RUN: tgc-opt %s --split-input-file --tgc-plan-memory --verify-diagnostics | FileCheck %s

// Static temporaries become views of the arena, a new last argument. %a and %b are
// live at once (the first kernel reads %a and writes %b) and get disjoint ranges; %c is
// allocated after %a's last use and takes %a's place; %d (i1, 3 bytes) rounds up to 64.
// The largest buffer is placed first, at 0. An alias (the collapse of %b) keeps %b
// alive until the collapse's last use.
// CHECK-LABEL: module attributes {tgc.abi = {
//  CHECK-SAME:   memory = {forward = {arena_bytes = 8192 : i64, buffer_bytes = 12352 : i64, buffers = 4 : i64, dynamic_buffers = 0 : i64, unplanned = 0 : i64}}
// CHECK-LABEL: func.func @forward(
//  CHECK-SAME:     %[[X:.*]]: memref<1024xf32>, %[[OUT:.*]]: memref<1024xf32>, %[[ARENA:.*]]: memref<?xi8> {tgc.kind = "arena"}, %{{.*}}: memref<i64> {tgc.kind = "arena_request"})
//       CHECK:   %[[A:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<?xi8> to memref<1024xf32>
//       CHECK:   call @k(%[[X]], %[[A]])
//       CHECK:   %[[B:.*]] = memref.view %[[ARENA]][%c4096{{.*}}][] : memref<?xi8> to memref<4x256xf32>
//       CHECK:   call @k2(%[[A]], %[[B]])
//       CHECK:   %[[FLAT:.*]] = memref.collapse_shape %[[B]]
//       CHECK:   %[[C:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<?xi8> to memref<1024xf32>
//       CHECK:   call @k(%[[FLAT]], %[[C]])
//       CHECK:   %[[D:.*]] = memref.view %[[ARENA]][%c4096{{.*}}][] : memref<?xi8> to memref<3xi1>
//       CHECK:   call @k3(%[[C]], %[[D]], %[[OUT]])
//   CHECK-NOT:   memref.alloc
module attributes {tgc.abi = {entries = {forward = "forward"}}} {
  func.func private @k(memref<1024xf32>, memref<1024xf32>)
  func.func private @k2(memref<1024xf32>, memref<4x256xf32>)
  func.func private @k3(memref<1024xf32>, memref<3xi1>, memref<1024xf32>)
  func.func @forward(%x: memref<1024xf32>, %out: memref<1024xf32>) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
    call @k(%x, %a) : (memref<1024xf32>, memref<1024xf32>) -> ()
    %b = memref.alloc() {alignment = 64 : i64} : memref<4x256xf32>
    call @k2(%a, %b) : (memref<1024xf32>, memref<4x256xf32>) -> ()
    %flat = memref.collapse_shape %b [[0, 1]] : memref<4x256xf32> into memref<1024xf32>
    %c = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
    call @k(%flat, %c) : (memref<1024xf32>, memref<1024xf32>) -> ()
    %d = memref.alloc() : memref<3xi1>
    call @k3(%c, %d, %out) : (memref<1024xf32>, memref<3xi1>, memref<1024xf32>) -> ()
    return
  }
}

// -----

// A temporary of dynamic size whose size is known at the entry's start (an argument)
// goes above the static ones, at an offset computed there: into the arena when its
// capacity holds static + dynamic bytes, else into one allocation of the call; what the
// call needed is stored into the request, for the runtime to grow the arena. Left as an
// allocation: a buffer that a call returns an alias of (the result might be it). A
// temporary used inside a loop is live for the whole loop: the one allocated inside the
// loop does not share its memory.
// CHECK-LABEL: module attributes {tgc.abi = {
//  CHECK-SAME:   memory = {backward = {arena_bytes = 128 : i64, buffer_bytes = 128 : i64, buffers = 2 : i64, dynamic_buffers = 1 : i64, unplanned = 1 : i64}, forward = {arena_bytes = 0 : i64, buffer_bytes = 0 : i64, buffers = 0 : i64, dynamic_buffers = 0 : i64, unplanned = 0 : i64}}
// CHECK-LABEL: func.func @forward(
//  CHECK-SAME:     %{{.*}}: memref<?xi8> {tgc.kind = "arena"}, %{{.*}}: memref<i64> {tgc.kind = "arena_request"})
// CHECK-LABEL: func.func @backward(
//  CHECK-SAME:     %[[N:.*]]: index, %[[ARENA:.*]]: memref<?xi8> {tgc.kind = "arena"}, %[[REQUEST:.*]]: memref<i64> {tgc.kind = "arena_request"})
//       CHECK:   %[[BYTES:.*]] = arith.muli %c4, %[[N]]
//       CHECK:   %[[NEEDED:.*]] = arith.addi %c128
//       CHECK:   %[[REQ:.*]] = arith.index_cast %[[NEEDED]] : index to i64
//       CHECK:   memref.store %[[REQ]], %[[REQUEST]][]
//       CHECK:   %[[CAPACITY:.*]] = memref.dim %[[ARENA]]
//       CHECK:   %[[FITS:.*]] = arith.cmpi ule, %[[NEEDED]], %[[CAPACITY]]
//       CHECK:   %[[BLOCK:.*]] = scf.if %[[FITS]] -> (memref<?xi8>) {
//       CHECK:     scf.yield %[[ARENA]]
//       CHECK:   } else {
//       CHECK:     %[[FRESH:.*]] = memref.alloc(%[[NEEDED]]) {alignment = 64 : i64} : memref<?xi8>
//       CHECK:     scf.yield %[[FRESH]]
//       CHECK:   %[[DYN:.*]] = memref.view %[[BLOCK]][%{{.*}}][%[[N]]] : memref<?xi8> to memref<?xf32>
//       CHECK:   call @dyn(%[[DYN]])
//       CHECK:   memref.alloc() : memref<8xf32>
//       CHECK:   %[[OUTER:.*]] = memref.view %[[ARENA]][%c{{.*}}][] : memref<?xi8> to memref<4xf32>
//       CHECK:   scf.for
//       CHECK:     %[[INNER:.*]] = memref.view %[[ARENA]][%c{{.*}}][] : memref<?xi8> to memref<4xf32>
//       CHECK:     call @use(%[[OUTER]], %[[INNER]])
module attributes {tgc.abi = {entries = {backward = "backward", forward = "forward"}}} {
  func.func private @alias(memref<8xf32>) -> memref<8xf32>
  func.func private @dyn(memref<?xf32>)
  func.func private @use(memref<4xf32>, memref<4xf32>)
  func.func @forward() {
    return
  }
  func.func @backward(%n: index) {
    %dyn = memref.alloc(%n) : memref<?xf32>
    call @dyn(%dyn) : (memref<?xf32>) -> ()
    %e = memref.alloc() : memref<8xf32>
    %r = call @alias(%e) : (memref<8xf32>) -> memref<8xf32>
    %outer = memref.alloc() : memref<4xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %inner = memref.alloc() : memref<4xf32>
      func.call @use(%outer, %inner) : (memref<4xf32>, memref<4xf32>) -> ()
    }
    return
  }
}

// -----

// An allocation inside a parallel loop is made once per iteration, and iterations run at
// the same time: it stays an allocation.
// CHECK-LABEL: module attributes {tgc.abi = {
//  CHECK-SAME:   memory = {forward = {arena_bytes = 0 : i64, buffer_bytes = 0 : i64, buffers = 0 : i64, dynamic_buffers = 0 : i64, unplanned = 1 : i64}}
// CHECK-LABEL: func.func @forward(
//       CHECK:   scf.forall
//       CHECK:     memref.alloc() : memref<4xf32>
module attributes {tgc.abi = {entries = {forward = "forward"}}} {
  func.func private @fill(memref<4xf32>)
  func.func @forward() {
    scf.forall (%i) in (4) {
      %t = memref.alloc() : memref<4xf32>
      func.call @fill(%t) : (memref<4xf32>) -> ()
    }
    return
  }
}

// -----

// expected-error @below {{tgc-plan-memory needs the tgc.abi attribute}}
module {
  func.func @forward() {
    return
  }
}
