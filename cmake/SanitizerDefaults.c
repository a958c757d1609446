/* SanitizerDefaults.c - the sanitizers' defaults of tgc's executables.
 *
 * Compiled into every executable of a TGC_SANITIZE build (tgc_sanitizer_defaults in
 * the top-level CMakeLists.txt), so that a test and its command typed by hand behave
 * alike; ASAN_OPTIONS / UBSAN_OPTIONS still override them (docs/fuzzing.md).
 * - allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs in code built
 *   with ASan (ours) but not in the installed, uninstrumented libLLVM/libMLIR, which
 *   then write to "poisoned" memory they own; those reports are false.
 * - allocator_may_return_null=1: an allocation that cannot be served returns NULL, as
 *   malloc does, which the runtime must answer with an error code; ASan's default
 *   would end the process instead.
 * - print_stacktrace=1: a UBSan report says where it came from. */
const char *__asan_default_options(void) {
  return "allow_user_poisoning=0:allocator_may_return_null=1";
}

const char *__ubsan_default_options(void) { return "print_stacktrace=1"; }
