// RUN: tgc-opt %s | tgc-opt | FileCheck %s

// The layouts ATen gives copies and channels-last results (docs/bytecode.md, *Layouts*):
// each result type below is what inference computes, which the verifier checks.

// CHECK-LABEL: func.func @copies
//       CHECK:   tgc.clone %{{.*}} {memory_format = "channels_last"} : {{.*}} -> !tgc.tensor<[2, 3, 4, 5], f32, strides = [60, 1, 15, 3]>
//       CHECK:   tgc.clone %{{.*}} {memory_format = "channels_last_3d"} : {{.*}} -> !tgc.tensor<[2, 3, 2, 4, 5], f32, strides = [120, 1, 60, 15, 3]>
//       CHECK:   tgc.clone %{{.*}} : {{.*}} -> !tgc.tensor<[2, 3, 4, 5], f32>
//       CHECK:   tgc.clone %{{.*}} {memory_format = "preserve_format"} : {{.*}} -> !tgc.tensor<[5, 3], f32, strides = [1, 5]>
//       CHECK:   tgc.clone %{{.*}} {memory_format = "preserve_format"} : {{.*}} -> !tgc.tensor<[3, 3], f32, strides = [1, 3]>
//       CHECK:   tgc.to_dtype %{{.*}} {dtype = f64, memory_format = "preserve_format"} : {{.*}} -> !tgc.tensor<[5, 3], f64, strides = [1, 5]>
//       CHECK:   tgc.full_like %{{.*}} {fill_value = 0.000000e+00 : f64, memory_format = "channels_last"} : {{.*}} -> !tgc.tensor<[2, 3, 4, 5], f32, strides = [60, 1, 15, 3]>
func.func @copies(%x: !tgc.tensor<[2, 3, 4, 5], f32>, %y: !tgc.tensor<[2, 3, 2, 4, 5], f32>,
                  %t: !tgc.tensor<[5, 3], f32, strides = [1, 5]>,
                  %g: !tgc.tensor<[3, 3], f32, strides = [2, 10]>) {
  %0 = tgc.clone %x {memory_format = "channels_last"} : !tgc.tensor<[2, 3, 4, 5], f32> -> !tgc.tensor<[2, 3, 4, 5], f32, strides = [60, 1, 15, 3]>
  %1 = tgc.clone %y {memory_format = "channels_last_3d"} : !tgc.tensor<[2, 3, 2, 4, 5], f32> -> !tgc.tensor<[2, 3, 2, 4, 5], f32, strides = [120, 1, 60, 15, 3]>
  // Absent: contiguous_format.
  %2 = tgc.clone %0 : !tgc.tensor<[2, 3, 4, 5], f32, strides = [60, 1, 15, 3]> -> !tgc.tensor<[2, 3, 4, 5], f32>
  // preserve_format keeps a dense layout, and makes a strided one dense in its order.
  %3 = tgc.clone %t {memory_format = "preserve_format"} : !tgc.tensor<[5, 3], f32, strides = [1, 5]> -> !tgc.tensor<[5, 3], f32, strides = [1, 5]>
  %4 = tgc.clone %g {memory_format = "preserve_format"} : !tgc.tensor<[3, 3], f32, strides = [2, 10]> -> !tgc.tensor<[3, 3], f32, strides = [1, 3]>
  %5 = tgc.to_dtype %t {dtype = f64, memory_format = "preserve_format"} : !tgc.tensor<[5, 3], f32, strides = [1, 5]> -> !tgc.tensor<[5, 3], f64, strides = [1, 5]>
  %6 = tgc.full_like %x {fill_value = 0.0 : f64, memory_format = "channels_last"} : !tgc.tensor<[2, 3, 4, 5], f32> -> !tgc.tensor<[2, 3, 4, 5], f32, strides = [60, 1, 15, 3]>
  return
}

// A channels-last input (or weight) gives channels-last convolution, pooling and norm
// results; cat keeps the format its operands share.
// CHECK-LABEL: func.func @propagation
//       CHECK:   tgc.convolution {{.*}} -> !tgc.tensor<[2, 6, 6, 6], f32, strides = [216, 1, 36, 6]>
//       CHECK:   tgc.convolution {{.*}} -> !tgc.tensor<[2, 6, 6, 6], f32, strides = [216, 1, 36, 6]>
//       CHECK:   tgc.max_pool2d {{.*}} -> !tgc.tensor<[2, 3, 4, 4], f32, strides = [48, 1, 12, 3]>
//       CHECK:   tgc.adaptive_avg_pool {{.*}} -> !tgc.tensor<[2, 3, 2, 2], f32, strides = [12, 1, 6, 3]>
//       CHECK:   tgc.cat {{.*}} -> !tgc.tensor<[2, 6, 8, 8], f32, strides = [384, 1, 48, 6]>
//       CHECK:   tgc.cat {{.*}} -> !tgc.tensor<[2, 6, 8, 8], f32>
//       CHECK:   tgc.softmax {{.*}} -> !tgc.tensor<[2, 3, 8, 8], f32>
func.func @propagation(%cl: !tgc.tensor<[2, 3, 8, 8], f32, strides = [192, 1, 24, 3]>,
                       %x: !tgc.tensor<[2, 3, 8, 8], f32>, %w: !tgc.tensor<[6, 3, 3, 3], f32>,
                       %wcl: !tgc.tensor<[6, 3, 3, 3], f32, strides = [27, 1, 9, 3]>) {
  %0 = tgc.convolution %cl, %w : !tgc.tensor<[2, 3, 8, 8], f32, strides = [192, 1, 24, 3]>, !tgc.tensor<[6, 3, 3, 3], f32> -> !tgc.tensor<[2, 6, 6, 6], f32, strides = [216, 1, 36, 6]>
  %1 = tgc.convolution %x, %wcl : !tgc.tensor<[2, 3, 8, 8], f32>, !tgc.tensor<[6, 3, 3, 3], f32, strides = [27, 1, 9, 3]> -> !tgc.tensor<[2, 6, 6, 6], f32, strides = [216, 1, 36, 6]>
  %2 = tgc.max_pool2d %cl {kernel_size = array<i64: 2, 2>} : !tgc.tensor<[2, 3, 8, 8], f32, strides = [192, 1, 24, 3]> -> !tgc.tensor<[2, 3, 4, 4], f32, strides = [48, 1, 12, 3]>
  %3 = tgc.adaptive_avg_pool %cl {output_size = array<i64: 2, 2>} : !tgc.tensor<[2, 3, 8, 8], f32, strides = [192, 1, 24, 3]> -> !tgc.tensor<[2, 3, 2, 2], f32, strides = [12, 1, 6, 3]>
  %4 = tgc.cat %cl, %cl {dim = 1 : i64} : !tgc.tensor<[2, 3, 8, 8], f32, strides = [192, 1, 24, 3]>, !tgc.tensor<[2, 3, 8, 8], f32, strides = [192, 1, 24, 3]> -> !tgc.tensor<[2, 6, 8, 8], f32, strides = [384, 1, 48, 6]>
  %5 = tgc.cat %cl, %x {dim = 1 : i64} : !tgc.tensor<[2, 3, 8, 8], f32, strides = [192, 1, 24, 3]>, !tgc.tensor<[2, 3, 8, 8], f32> -> !tgc.tensor<[2, 6, 8, 8], f32>
  %6 = tgc.softmax %cl {dim = 1 : i64} : !tgc.tensor<[2, 3, 8, 8], f32, strides = [192, 1, 24, 3]> -> !tgc.tensor<[2, 3, 8, 8], f32>
  return
}

// View and reshape of a strided tensor: ATen's computeStride gives the view's strides
// where the storage allows one (splitting a dimension of a transposed matrix, merging
// the spatial dimensions of a channels-last tensor, dimensions of size 1); where it
// does not (flattening a transposed matrix), the result is a fresh contiguous tensor.
// CHECK-LABEL: func.func @views
//       CHECK:   tgc.view {{.*}} -> !tgc.tensor<[5, 2, 2], f32, strides = [1, 10, 5]>
//       CHECK:   tgc.view {{.*}} -> !tgc.tensor<[20], f32>
//       CHECK:   tgc.view {{.*}} -> !tgc.tensor<[2, 3, 64], f32, strides = [192, 1, 3]>
//       CHECK:   tgc.view {{.*}} -> !tgc.tensor<[1, 5, 1, 4], f32, strides = [5, 1, 20, 5]>
//       CHECK:   tgc.view {{.*}} -> !tgc.tensor<[0, 4], f32, strides = [4, 1]>
// diagonal() and as_strided() have the strides (and offset) of eager's views.
//       CHECK:   tgc.diagonal {{.*}} -> !tgc.tensor<[4], f32, strides = [6]>
//       CHECK:   tgc.diagonal {{.*}} -> !tgc.tensor<[3], f32, strides = [6], offset = 2>
//       CHECK:   tgc.as_strided {{.*}} -> !tgc.tensor<[2, 2], f32, strides = [1, 5], offset = 1>
func.func @views(%t: !tgc.tensor<[5, 4], f32, strides = [1, 5]>,
                 %cl: !tgc.tensor<[2, 3, 8, 8], f32, strides = [192, 1, 24, 3]>,
                 %e: !tgc.tensor<[4, 0], f32, strides = [1, 4]>,
                 %m: !tgc.tensor<[4, 5], f32>) {
  %0 = tgc.view %t {size = #tgc.shape<[5, 2, 2]>} : !tgc.tensor<[5, 4], f32, strides = [1, 5]> -> !tgc.tensor<[5, 2, 2], f32, strides = [1, 10, 5]>
  %1 = tgc.view %t {size = #tgc.shape<[-1]>} : !tgc.tensor<[5, 4], f32, strides = [1, 5]> -> !tgc.tensor<[20], f32>
  %2 = tgc.view %cl {size = #tgc.shape<[2, 3, 64]>} : !tgc.tensor<[2, 3, 8, 8], f32, strides = [192, 1, 24, 3]> -> !tgc.tensor<[2, 3, 64], f32, strides = [192, 1, 3]>
  %3 = tgc.view %t {size = #tgc.shape<[1, 5, 1, 4]>} : !tgc.tensor<[5, 4], f32, strides = [1, 5]> -> !tgc.tensor<[1, 5, 1, 4], f32, strides = [5, 1, 20, 5]>
  %4 = tgc.view %e {size = #tgc.shape<[0, 4]>} : !tgc.tensor<[4, 0], f32, strides = [1, 4]> -> !tgc.tensor<[0, 4], f32, strides = [4, 1]>
  %d = tgc.diagonal %m : !tgc.tensor<[4, 5], f32> -> !tgc.tensor<[4], f32, strides = [6]>
  %d2 = tgc.diagonal %m {offset = 2 : i64} : !tgc.tensor<[4, 5], f32> -> !tgc.tensor<[3], f32, strides = [6], offset = 2>
  %s = tgc.as_strided %m {size = #tgc.shape<[2, 2]>, stride = #tgc.shape<[1, 5]>, storage_offset = #tgc.shape<[1]>} : !tgc.tensor<[4, 5], f32> -> !tgc.tensor<[2, 2], f32, strides = [1, 5], offset = 1>
  return
}
