/* The floor for `make bench`: a minimal walker making only the syscalls an audit needs, on N
 * threads (getdents64 per folder, fstatat for every non-folder, listxattrat for every entry),
 * so appdata's time can be read against the least the kernel needs. It prints its totals
 * (entries, folders, files, bytes of regular files) so its work can be checked against appdata's.
 *
 * Build: cc -O2 -pthread -o floor-walker floor-walker.c
 * Usage: floor-walker THREADS ROOT
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef __NR_listxattrat
#define __NR_listxattrat 465
#endif

static atomic_ulong entries, folders, files, bytes;
static int use_listxattrat = 1;

/* A stack of open folders shared by the threads; `busy` counts threads holding work. */
static int *stack;
static size_t depth, capacity;
static int busy;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;

static void push(int fd) {
  pthread_mutex_lock(&lock);
  if (depth == capacity) {
    capacity = capacity ? capacity * 2 : 1024;
    stack = realloc(stack, capacity * sizeof *stack);
  }
  stack[depth++] = fd;
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
}

static int pop(int finished) {
  pthread_mutex_lock(&lock);
  if (finished) busy--;
  while (depth == 0) {
    if (busy == 0) {
      pthread_cond_broadcast(&wake);
      pthread_mutex_unlock(&lock);
      return -1;
    }
    pthread_cond_wait(&wake, &lock);
  }
  busy++;
  int fd = stack[--depth];
  pthread_mutex_unlock(&lock);
  return fd;
}

static void attributes(int dirfd, const char *name) {
  char list[1024];
  if (use_listxattrat) {
    long n = syscall(__NR_listxattrat, dirfd, name, AT_SYMLINK_NOFOLLOW, list, sizeof list);
    if (n >= 0 || errno != ENOSYS) return;
    use_listxattrat = 0;
  }
  if (strlen(name) < 4000) {
    char full[4200];
    snprintf(full, sizeof full, "/proc/self/fd/%d/%s", dirfd, name);
    llistxattr(full, list, sizeof list);
  }
}

static void *work(void *unused) {
  (void)unused;
  char *buffer = malloc(1 << 16);
  int finished = 0;
  for (;;) {
    int fd = pop(finished);
    if (fd < 0) break;
    finished = 1;
    for (;;) {
      long n = syscall(SYS_getdents64, fd, buffer, 1 << 16);
      if (n <= 0) break;
      for (long offset = 0; offset < n;) {
        struct linux_dirent64 { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; } *entry = (void *)(buffer + offset);
        offset += entry->reclen;
        const char *name = entry->name;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
        atomic_fetch_add_explicit(&entries, 1, memory_order_relaxed);
        attributes(fd, name);
        if (entry->type == DT_DIR) {
          atomic_fetch_add_explicit(&folders, 1, memory_order_relaxed);
          int child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (child >= 0) push(child);
        } else {
          struct stat st;
          if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            atomic_fetch_add_explicit(&files, 1, memory_order_relaxed);
            if (S_ISREG(st.st_mode)) atomic_fetch_add_explicit(&bytes, (unsigned long)st.st_size, memory_order_relaxed);
          }
        }
      }
    }
    close(fd);
  }
  free(buffer);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s THREADS ROOT\n", argv[0]);
    return 2;
  }
  int threads = atoi(argv[1]);
  if (threads < 1) threads = 1;
  int root = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) {
    perror(argv[2]);
    return 2;
  }
  push(root);
  pthread_t *ids = calloc((size_t)threads, sizeof *ids);
  for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, work, NULL);
  for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
  printf("entries %lu folders %lu files %lu bytes %lu\n", (unsigned long)entries, (unsigned long)folders,
         (unsigned long)files, (unsigned long)bytes);
  return 0;
}
