/*
 * A read-only shared mapping of a file's first bytes, as an ArrayBuffer: the journal's lease check
 * reads SQLite's WAL-index header through it (journal/shm-view.ts, journal/wal-index-header.ts)
 * with no system call per key. The mapping is undone when the ArrayBuffer is collected.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <node_api.h>

/* A view of more than this is not what this module is for. */
#define MAX_LENGTH (1 << 20)

static void unmap(napi_env env, void *data, void *hint) {
  (void)env;
  munmap(data, (size_t)(uintptr_t)hint);
}

static napi_value fail(napi_env env, const char *code, const char *message) {
  napi_throw_error(env, code, message);
  return NULL;
}

/* mapShared(fd, length): the file's first `length` bytes, PROT_READ and MAP_SHARED. */
static napi_value map_shared(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd = -1;
  int64_t length = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || napi_get_value_int64(env, argv[1], &length) != napi_ok ||
      fd < 0 || length <= 0 || length > MAX_LENGTH) {
    napi_throw_type_error(env, "EINVAL", "mapShared(fd, length): an open descriptor and a length of 1 B to 1 MiB");
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) return fail(env, "EFSTAT", strerror(errno));
  /* Bytes past the end of the file would fault (SIGBUS) when read: refused here. */
  if (!S_ISREG(st.st_mode) || st.st_size < length) return fail(env, "ESHORT", "not a regular file of at least that length");
  void *at = mmap(NULL, (size_t)length, PROT_READ, MAP_SHARED, fd, 0);
  if (at == MAP_FAILED) return fail(env, "EMMAP", strerror(errno));
  napi_value buffer;
  /* A runtime that allows no external buffers (a V8 sandbox) says so here: the caller reads with pread. */
  if (napi_create_external_arraybuffer(env, at, (size_t)length, unmap, (void *)(uintptr_t)length, &buffer) != napi_ok) {
    munmap(at, (size_t)length);
    return fail(env, "EEXTERNAL", "this runtime refuses an external ArrayBuffer");
  }
  return buffer;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "mapShared", NAPI_AUTO_LENGTH, map_shared, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "mapShared", fn) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
