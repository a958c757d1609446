//===- SanitizerOptions.cpp - ASan defaults of the fuzz harnesses ---------===//
//
// Linked into every harness, so that a reproduced artifact runs as in fuzz/run.sh:
// * allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs in code built with
//   ASan (ours) but not in the installed, uninstrumented libLLVM/libMLIR, which then
//   write to "poisoned" memory they own; those reports are false.
// * allocator_may_return_null=1, max_allocation_size_mb=2048: an allocation of more than
//   2 GiB (an arena or a state a malformed signature declares) returns NULL, which the
//   code must answer with an error (what the ABI promises); libFuzzer's own limit
//   (-malloc_limit_mb, 4 GiB in fuzz/run.sh) would call it a crash instead.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:allocator_may_return_null=1:max_allocation_size_mb=2048";
}
