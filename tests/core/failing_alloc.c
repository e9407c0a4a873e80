/* Test shim (LD_PRELOAD): makes the allocations of one library fail, to show that a tool whose
 * allocation fails inside a hook lets the program go on. An allocation fails when the first frame
 * outside libc, libstdc++ and this shim belongs to the library named by MPE_TEST_FAIL_ALLOC_IN
 * (a substring of its path), after that library's first MPE_TEST_FAIL_ALLOC_AFTER allocations.
 * So MPI's own allocations, even when a tool calls into MPI, are never failed. With
 * MPE_TEST_FAIL_ALLOC_REPORT set, prints at exit how many allocations the library made. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);

static const char* target;
static long allowed;
static long seen;
static __thread int inside;

__attribute__((constructor)) static void setup(void) {
  void* warm[2];
  inside = 1;
  backtrace(warm, 2); /* loads the unwinder now, not inside a later malloc */
  inside = 0;
  target = getenv("MPE_TEST_FAIL_ALLOC_IN");
  const char* after = getenv("MPE_TEST_FAIL_ALLOC_AFTER");
  allowed = after ? atol(after) : 0;
}

__attribute__((destructor)) static void report(void) {
  if (getenv("MPE_TEST_FAIL_ALLOC_REPORT")) {
    char line[64];
    const int n = snprintf(line, sizeof line, "failing_alloc: %ld\n", seen);
    if (write(2, line, (size_t)n) < 0) return;
  }
}

static int is_plumbing(const char* path) {
  return strstr(path, "libc.so") || strstr(path, "libstdc++") || strstr(path, "failing_alloc");
}

/* True when this allocation is the target library's and should fail. */
static int should_fail(void) {
  if (!target || inside) return 0;
  inside = 1;
  void* frames[12];
  const int n = backtrace(frames, 12);
  int fail = 0;
  for (int i = 1; i < n; ++i) {
    Dl_info info;
    if (!dladdr(frames[i], &info) || !info.dli_fname || is_plumbing(info.dli_fname)) continue;
    if (strstr(info.dli_fname, target)) fail = __atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED) > allowed;
    break;
  }
  inside = 0;
  return fail;
}

void* malloc(size_t n) {
  if (should_fail()) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_malloc(n);
}

void* calloc(size_t k, size_t n) {
  if (should_fail()) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_calloc(k, n);
}

void* realloc(void* p, size_t n) {
  if (should_fail()) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_realloc(p, n);
}
