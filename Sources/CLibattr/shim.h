// The C surface appdata needs on Linux: libattr's attribute copy and the
// *at() extended-attribute syscalls (kernel 6.13+) that glibc does not wrap yet.
// Only Sources/AppDataSystem/System calls into this module.
#ifndef APPDATA_CLIBATTR_SHIM_H
#define APPDATA_CLIBATTR_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <stdio.h>
#include <attr/libattr.h>
#include <attr/error_context.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

#if defined(__x86_64__) || defined(__aarch64__)
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_getxattrat
#define __NR_getxattrat 464
#endif
#ifndef __NR_listxattrat
#define __NR_listxattrat 465
#endif
#endif

/// The kernel's struct xattr_args (include/uapi/linux/xattr.h, 6.13+).
struct appdata_xattr_args {
  uint64_t value;
  uint32_t size;
  uint32_t flags;
};

/// listxattrat(2): names of the attributes of `name` relative to `dirfd`,
/// without following a final symlink. Sets errno to ENOSYS on older kernels.
static inline ssize_t appdata_listxattrat(int dirfd, const char *name, char *list, size_t size) {
#ifdef __NR_listxattrat
  return (ssize_t)syscall(__NR_listxattrat, dirfd, name, AT_SYMLINK_NOFOLLOW, list, size);
#else
  errno = ENOSYS;
  return -1;
#endif
}

/// getxattrat(2): one attribute's value of `name` relative to `dirfd`,
/// without following a final symlink. Sets errno to ENOSYS on older kernels.
static inline ssize_t appdata_getxattrat(int dirfd, const char *name, const char *attribute,
                                         void *value, size_t size) {
#ifdef __NR_getxattrat
  struct appdata_xattr_args args = {(uint64_t)(uintptr_t)value, (uint32_t)size, 0};
  return (ssize_t)syscall(__NR_getxattrat, dirfd, name, AT_SYMLINK_NOFOLLOW, attribute,
                          &args, sizeof(args));
#else
  errno = ENOSYS;
  return -1;
#endif
}

/// renameat2(2) with RENAME_NOREPLACE: an atomic rename that never overwrites.
static inline int appdata_rename_noreplace(int olddirfd, const char *oldname, int newdirfd,
                                           const char *newname) {
  return (int)syscall(SYS_renameat2, olddirfd, oldname, newdirfd, newname, 1 /* RENAME_NOREPLACE */);
}

/// renameat2(2) with RENAME_EXCHANGE: the two names swap what they name, atomically.
static inline int appdata_rename_exchange(int olddirfd, const char *oldname, int newdirfd,
                                          const char *newname) {
  return (int)syscall(SYS_renameat2, olddirfd, oldname, newdirfd, newname, 2 /* RENAME_EXCHANGE */);
}

/// attr_copy_fd(3) copying every attribute (libattr's default filter skips
/// only the ones the kernel manages, such as ACLs it copies through mode).
static inline int appdata_attr_copy_fd(const char *src_path, int src_fd, const char *dst_path,
                                       int dst_fd) {
  return attr_copy_fd(src_path, src_fd, dst_path, dst_fd, NULL, NULL);
}

/// getdents64(2): raw directory records into `buffer`, fewer calls than readdir(3) and
/// no fcntl from fdopendir(3).
static inline ssize_t appdata_getdents64(int fd, void *buffer, size_t size) {
  return (ssize_t)syscall(SYS_getdents64, fd, buffer, size);
}

/// unshare(CLONE_FILES): a private copy of the descriptor table for the calling thread (the
/// walk's workers). CLONE_FILES is 0x400 in include/uapi/linux/sched.h on every architecture;
/// spelled out because <sched.h> declares it only with _GNU_SOURCE.
static inline int appdata_unshare_files(void) {
  return (int)syscall(SYS_unshare, 0x00000400);
}

static inline int appdata_errno(void) { return errno; }
static inline void appdata_set_errno(int value) { errno = value; }

/// Whether folder `fd` compares names ignoring case: ext4's (and f2fs's) casefold flag, set with
/// `chattr +F` on an empty folder and inherited by what is made in it (FS_IOC_GETFLAGS,
/// FS_CASEFOLD_FL: linux/fs.h, the kernel's Documentation/filesystems/ext4). 1 or 0; -1 (errno
/// set) where the filesystem keeps no such flags.
static inline int appdata_is_casefolded(int fd) {
#ifdef FS_CASEFOLD_FL
  int flags = 0;
  if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) return -1;
  return (flags & FS_CASEFOLD_FL) != 0;
#else
  errno = ENOTTY;
  return -1;
#endif
}

/// lseek(2) to the next data (`SEEK_DATA`) or hole (`SEEK_HOLE`) at or after `offset`; the
/// constants are _GNU_SOURCE's, which Swift's Glibc module does not define.
static inline off_t appdata_seek_data(int fd, off_t offset) { return lseek(fd, offset, 3); }
static inline off_t appdata_seek_hole(int fd, off_t offset) { return lseek(fd, offset, 4); }

/// copy_file_range(2) between explicit offsets (the files' own offsets are left alone): the
/// kernel copies, or shares extents, without the data passing through user space.
static inline ssize_t appdata_copy_file_range(int in, off_t *in_offset, int out, off_t *out_offset, size_t length) {
#ifdef SYS_copy_file_range
  return (ssize_t)syscall(SYS_copy_file_range, in, in_offset, out, out_offset, length, 0u);
#else
  errno = ENOSYS;
  return -1;
#endif
}

/// openat2(2) (Linux 5.6+) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
/// (include/uapi/linux/openat2.h: 0x08, 0x04, 0x02): `path`, relative to `dirfd`, is resolved by
/// the kernel without leaving `dirfd`'s tree (no `..` above it, no absolute path) and without
/// following any symlink on the way. ENOSYS where the kernel (or a seccomp filter) lacks it.
struct appdata_open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
static inline int appdata_openat2_beneath(int dirfd, const char *path, int flags, unsigned int mode) {
  struct appdata_open_how how = {(uint64_t)(unsigned int)flags, (flags & O_CREAT) ? mode : 0, 0x08 | 0x04 | 0x02};
  return (int)syscall(__NR_openat2, dirfd, path, &how, sizeof(how));
}

/// open(2) with O_TMPFILE in the folder `dirfd`: a file with no name yet, which can be locked
/// and written before `appdata_link_tmpfile` gives it one. glibc names the flag O_TMPFILE only
/// with _GNU_SOURCE; its internal spellings are always there. EOPNOTSUPP/EISDIR where the
/// filesystem cannot.
static inline int appdata_open_tmpfile(int dirfd) {
  return openat(dirfd, ".", __O_TMPFILE | __O_DIRECTORY | O_RDWR | O_CLOEXEC, 0600);
}

/// linkat(2) of an O_TMPFILE file to `name` in `dirfd`, through /proc/self/fd (AT_EMPTY_PATH
/// would need CAP_DAC_READ_SEARCH). Fails with EEXIST when the name is taken: it never replaces.
static inline int appdata_link_tmpfile(int fd, int dirfd, const char *name) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  return linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
}

/// The flags of a folder opened to be passed through only (O_PATH | O_DIRECTORY | O_NOFOLLOW):
/// search permission on the folder holding it is enough, none on the folder itself. Swift does
/// not see glibc's O_PATH.
static inline int appdata_pass_through_folder_flags(void) {
  return __O_PATH | O_NOFOLLOW | __O_DIRECTORY | O_CLOEXEC;
}

/// chmod(2) of the folder `name` in `dirfd` without following a symlink: opened with O_PATH |
/// O_NOFOLLOW | O_DIRECTORY (which needs no permission on it), then changed through its
/// /proc/self/fd link, which names that very inode. -1 with errno where it cannot.
static inline int appdata_chmod_folder_nofollow(int dirfd, const char *name, unsigned int mode) {
  int fd = openat(dirfd, name, __O_PATH | O_NOFOLLOW | __O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  int result = chmod(path, (mode_t)mode);
  int saved = errno;
  close(fd);
  errno = saved;
  return result;
}

#endif
