/* Test shim (LD_PRELOAD): a full disk or an unwritable directory, for the files a process writes
 * under one directory (MPE_TEST_FAIL_IO_DIR, absolute). Root ignores permissions, so this is how
 * the tests make a write fail. MPE_TEST_FAIL_IO says how:
 *   full:   the directory holds MPE_TEST_FAIL_IO_ROOM bytes more (default 0) per process; a write
 *           past them is cut short, and the next one fails with ENOSPC;
 *   close:  writes succeed, but close() reports EIO (an error the file system deferred);
 *   create: creating a file or directory there fails with EACCES.
 * With MPE_TEST_FAIL_IO_MATCH set, only the paths that contain it fail (one output of several).
 * Files elsewhere (MPI's shared memory, the program's output) are never touched. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static char dir[PATH_MAX];
static size_t dir_len;
static enum { kNone, kFull, kClose, kCreate } mode;
static long long room;
static const char* match;

__attribute__((constructor)) static void setup(void) {
  const char* d = getenv("MPE_TEST_FAIL_IO_DIR");
  const char* m = getenv("MPE_TEST_FAIL_IO");
  const char* r = getenv("MPE_TEST_FAIL_IO_ROOM");
  if (!d || !m || !realpath(d, dir)) return;
  dir_len = strlen(dir);
  mode = !strcmp(m, "full") ? kFull : !strcmp(m, "close") ? kClose : !strcmp(m, "create") ? kCreate : kNone;
  room = r ? atoll(r) : 0;
  match = getenv("MPE_TEST_FAIL_IO_MATCH");
}

static int under_dir(const char* path) {
  return dir_len && strncmp(path, dir, dir_len) == 0 && (path[dir_len] == '/' || path[dir_len] == 0) &&
         (!match || strstr(path + dir_len, match));
}

static int fd_under_dir(int fd) {
  if (!dir_len || fd < 0) return 0;
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = 0;
  return under_dir(target);
}

/* A path as it will be created: relative paths are resolved against the working directory; the
 * file itself need not exist, so its directory is what is resolved. */
static int path_under_dir(const char* path) {
  if (!dir_len || !path) return 0;
  char full[PATH_MAX], parent[PATH_MAX], resolved[PATH_MAX];
  if (path[0] == '/') {
    snprintf(full, sizeof full, "%s", path);
  } else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return 0;
    snprintf(full, sizeof full, "%s/%s", cwd, path);
  }
  snprintf(parent, sizeof parent, "%s", full);
  char* slash = strrchr(parent, '/');
  if (slash && slash != parent) *slash = 0;
  if (!realpath(parent, resolved)) return under_dir(full);
  const char* name = slash ? full + (slash - parent) : full; /* "/<file name>" */
  char whole[PATH_MAX];
  snprintf(whole, sizeof whole, "%s%s", resolved, name);
  return under_dir(whole);
}

/* How many of n bytes a write to fd may write: -1 (ENOSPC) when none. */
static ssize_t allowed(int fd, size_t n) {
  if (mode != kFull || !fd_under_dir(fd)) return (ssize_t)n;
  if (room <= 0) {
    errno = ENOSPC;
    return -1;
  }
  const size_t k = (long long)n < room ? n : (size_t)room;
  room -= (long long)k;
  return (ssize_t)k;
}

#define REAL(name)                      \
  static __typeof__(&name) real_##name; \
  if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void* buf, size_t n) {
  REAL(write);
  const ssize_t k = allowed(fd, n);
  return k < 0 ? -1 : real_write(fd, buf, (size_t)k);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  REAL(pwrite);
  const ssize_t k = allowed(fd, n);
  return k < 0 ? -1 : real_pwrite(fd, buf, (size_t)k, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  REAL(pwrite64);
  const ssize_t k = allowed(fd, n);
  return k < 0 ? -1 : real_pwrite64(fd, buf, (size_t)k, off);
}

int close(int fd) {
  REAL(close);
  const int fails = mode == kClose && fd_under_dir(fd);
  const int rc = real_close(fd);
  if (fails && rc == 0) {
    errno = EIO;
    return -1;
  }
  return rc;
}

static int refuses_create(const char* path, int flags) {
  return mode == kCreate && (flags & O_CREAT) && path_under_dir(path);
}

int open(const char* path, int flags, ...) {
  REAL(open);
  mode_t m = 0;
  if (flags & O_CREAT) {
    va_list ap;
    va_start(ap, flags);
    m = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (refuses_create(path, flags)) {
    errno = EACCES;
    return -1;
  }
  return real_open(path, flags, m);
}

int open64(const char* path, int flags, ...) {
  REAL(open64);
  mode_t m = 0;
  if (flags & O_CREAT) {
    va_list ap;
    va_start(ap, flags);
    m = va_arg(ap, mode_t);
    va_end(ap);
  }
  if (refuses_create(path, flags)) {
    errno = EACCES;
    return -1;
  }
  return real_open64(path, flags, m);
}

FILE* fopen(const char* path, const char* how) {
  REAL(fopen);
  if (mode == kCreate && how[0] != 'r' && path_under_dir(path)) {
    errno = EACCES;
    return NULL;
  }
  return real_fopen(path, how);
}

FILE* fopen64(const char* path, const char* how) {
  REAL(fopen64);
  if (mode == kCreate && how[0] != 'r' && path_under_dir(path)) {
    errno = EACCES;
    return NULL;
  }
  return real_fopen64(path, how);
}

int mkdir(const char* path, mode_t m) {
  REAL(mkdir);
  if (mode == kCreate && path_under_dir(path)) {
    errno = EACCES;
    return -1;
  }
  return real_mkdir(path, m);
}
