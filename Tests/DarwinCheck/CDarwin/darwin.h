// The part of macOS's C library that appdata's Darwin branches call, declared with Darwin's own
// types, for `make check-darwin` (Scripts/check-darwin.sh) to compile those branches on Linux.
// It proves that the calls fit Darwin's signatures and types; it does not prove what the calls
// do, and nothing here is ever linked or run.
//
// Each block names the header it follows, from Apple's open-source releases: xnu-11417
// (bsd/sys/..., the kernel's headers as the SDK ships them), Libc-1725 (include/...),
// libpthread (include/pthread/pthread.h) and copyfile (copyfile.h). Only what Sources/ uses is
// declared: a call to anything else fails the check, which is the point (add it here, from the
// header, with its citation). LP64 (arm64 and x86_64 macOS), 64-bit inodes.
//
// Nothing is included: the integer types are spelled as Darwin's machine/_types.h spells them,
// so no glibc declaration leaks in.
#ifndef APPDATA_DARWIN_CHECK_H
#define APPDATA_DARWIN_CHECK_H

// bsd/i386/_types.h and bsd/arm/_types.h (the same on both), bsd/sys/_types.h
typedef signed char __int8_t;
typedef unsigned char __uint8_t;
typedef short __int16_t;
typedef unsigned short __uint16_t;
typedef int __int32_t;
typedef unsigned int __uint32_t;
typedef long long __int64_t;
typedef unsigned long long __uint64_t;
typedef __int8_t int8_t;
typedef __uint8_t uint8_t;
typedef __int16_t int16_t;
typedef __uint16_t uint16_t;
typedef __int32_t int32_t;
typedef __uint32_t uint32_t;
typedef __int64_t int64_t;
typedef __uint64_t uint64_t;
typedef __uint32_t u_int32_t;
typedef unsigned long __darwin_size_t;
typedef __darwin_size_t size_t;
typedef long ssize_t;
typedef __darwin_size_t rsize_t;  // Libc include/_string.h (C11 Annex K)
typedef int errno_t;
// bsd/sys/_types.h: 16-bit mode_t and nlink_t, 32-bit dev_t (Linux: 32, 64 and 64 bits)
typedef __int32_t dev_t;
typedef __uint16_t mode_t;
typedef __uint16_t nlink_t;
typedef __uint64_t ino_t;
typedef __uint32_t uid_t;
typedef __uint32_t gid_t;
typedef __int64_t off_t;
typedef __int64_t blkcnt_t;
typedef __int32_t blksize_t;
typedef __int32_t pid_t;
typedef long time_t;
typedef __int32_t suseconds_t;
typedef __uint32_t useconds_t;

// Every struct tag glibc also defines is renamed: Synchronization loads glibc's clang module
// too (invisibly), and clang rejects two different definitions of one tag. Darwin.swift gives
// the names back as typealiases. `struct stat` is spelled out below instead (a macro would rename
// the function stat(2) too, and Swift allows no function beside a typealias of its name).
#define dirent darwin_check_dirent
#define timespec darwin_check_timespec
#define timeval darwin_check_timeval
#define rlimit darwin_check_rlimit
#define rusage darwin_check_rusage
#define termios darwin_check_termios
#define winsize darwin_check_winsize

// bsd/sys/_types/_timespec.h, _timeval.h
struct timespec {
  time_t tv_sec;
  long tv_nsec;
};
struct timeval {
  time_t tv_sec;
  suseconds_t tv_usec;
};

// bsd/sys/errno.h (user space, __DARWIN_UNIX03: EOPNOTSUPP is 102, not ENOTSUP's 45)
extern int *__error(void);
#define EPERM 1
#define ENOENT 2
#define ESRCH 3
#define EINTR 4
#define ENXIO 6
#define EBADF 9
#define EDEADLK 11
#define EACCES 13
#define EBUSY 16
#define EEXIST 17
#define EXDEV 18
#define ENODEV 19
#define ENOTDIR 20
#define EISDIR 21
#define EINVAL 22
#define EMFILE 24
#define EFBIG 27
#define ENOSPC 28
#define EMLINK 31
#define EPIPE 32
#define ERANGE 34
#define EAGAIN 35
#define ENOTSUP 45
#define ELOOP 62
#define ENAMETOOLONG 63
#define ENOTEMPTY 66
#define ENOSYS 78
#define EFTYPE 79
#define ECANCELED 89
#define EILSEQ 92
#define ENOATTR 93
#define ENODATA 96
#define EOPNOTSUPP 102

// bsd/sys/stat.h: struct stat under __DARWIN_64_BIT_INO_T (st_*timespec, not st_*tim)
struct darwin_check_stat {
  dev_t st_dev;
  mode_t st_mode;
  nlink_t st_nlink;
  ino_t st_ino;
  uid_t st_uid;
  gid_t st_gid;
  dev_t st_rdev;
  struct timespec st_atimespec;
  struct timespec st_mtimespec;
  struct timespec st_ctimespec;
  struct timespec st_birthtimespec;
  off_t st_size;
  blkcnt_t st_blocks;
  blksize_t st_blksize;
  __uint32_t st_flags;
  __uint32_t st_gen;
  __int32_t st_lspare;
  __int64_t st_qspare[2];
};
int fstat(int, struct darwin_check_stat *);
int fstatat(int, const char *, struct darwin_check_stat *, int);
int lstat(const char *, struct darwin_check_stat *);
int stat(const char *, struct darwin_check_stat *);
int fchmod(int, mode_t);
int fchmodat(int, const char *, mode_t, int);
int mkdirat(int, const char *, mode_t);
int futimens(int __fd, const struct timespec __times[2]);
int utimensat(int __fd, const char *__path, const struct timespec __times[2], int __flag);

// bsd/sys/fcntl.h (open, openat and fcntl are variadic: Swift sees the overlay's wrappers,
// Darwin.swift here)
#define O_RDONLY 0x0000
#define O_WRONLY 0x0001
#define O_RDWR 0x0002
#define O_NONBLOCK 0x00000004
#define O_APPEND 0x00000008
#define O_NOFOLLOW 0x00000100
#define O_CREAT 0x00000200
#define O_TRUNC 0x00000400
#define O_EXCL 0x00000800
#define O_DIRECTORY 0x00100000
#define O_SYMLINK 0x00200000
#define O_CLOEXEC 0x01000000
// bsd/sys/fcntl.h (xnu-7195, macOS 11): fail if any component of the path is a symlink
#define O_NOFOLLOW_ANY 0x20000000
#define AT_FDCWD -2
#define AT_EACCESS 0x0010
#define AT_SYMLINK_NOFOLLOW 0x0020
#define AT_REMOVEDIR 0x0080
#define F_GETFD 1
#define F_SETFD 2
#define F_GETFL 3
#define F_SETFL 4
#define FD_CLOEXEC 1
#define F_FULLFSYNC 51
#define LOCK_EX 0x02
#define LOCK_NB 0x04
int open(const char *, int, ...);
int openat(int, const char *, int, ...);
int fcntl(int, int, ...);
int flock(int, int);
// Stand-ins for the C shims the Swift overlay's wrappers call (SwiftShims' _swift_stdlib_open
// and friends): never linked.
int darwin_check_open(const char *, int, mode_t);
int darwin_check_openat(int, const char *, int, mode_t);
int darwin_check_fcntl(int, int, int);
int darwin_check_fcntl_pointer(int, int, void *);
int darwin_check_ioctl(int, unsigned long, int);
int darwin_check_ioctl_pointer(int, unsigned long, void *);

// Libc include/unistd.h, bsd/sys/unistd.h
#define X_OK (1 << 0)
#define W_OK (1 << 1)
#define _SC_PAGESIZE 29
#define _SC_NPROCESSORS_ONLN 58
#define SEEK_HOLE 3  // bsd/sys/_types/_seek_set.h (Linux: 4)
#define SEEK_DATA 4  // (Linux: 3)
#define _PC_CASE_SENSITIVE 11
#define _PC_CASE_PRESERVING 12
int access(const char *, int);
int faccessat(int, const char *, int, int);
int close(int);
off_t lseek(int, off_t, int);
int dup2(int, int);
ssize_t read(int, void *, size_t);
// Libc include/unistd.h
int pipe(int[2]);
// bsd/sys/poll.h
typedef unsigned int nfds_t;
struct pollfd { int fd; short events; short revents; };
#define POLLIN 0x0001
int poll(struct pollfd *, nfds_t, int);
ssize_t write(int __fd, const void *__buf, size_t __nbyte);
ssize_t pread(int __fd, void *__buf, size_t __nbyte, off_t __offset);
ssize_t pwrite(int __fd, const void *__buf, size_t __nbyte, off_t __offset);
ssize_t readlinkat(int, const char *, char *, size_t);
int symlinkat(const char *, int, const char *);
int unlinkat(int, const char *, int);
int link(const char *, const char *);
int linkat(int, const char *, int, const char *, int);
int fsync(int);
int ftruncate(int, off_t);
uid_t geteuid(void);
int isatty(int);
pid_t getpid(void);
long sysconf(int);
long fpathconf(int, int);
long pathconf(const char *, int);
unsigned int sleep(unsigned int);
int usleep(useconds_t);
int pause(void);
void sync(void);
void _exit(int) __attribute__((__noreturn__));

// bsd/sys/stdio.h (renameatx_np, RENAME_*), Libc include/stdio.h
#define RENAME_SWAP 0x00000002
#define RENAME_EXCL 0x00000004
int rename(const char *__old, const char *__new);
int renameat(int, const char *, int, const char *);
int renameatx_np(int, const char *, int, const char *, unsigned int);
int remove(const char *);

// Libc include/stdlib.h
void exit(int) __attribute__((__noreturn__));
void free(void *);
char *getenv(const char *);
int unsetenv(const char *);
long random(void);
char *realpath(const char *__restrict, char *__restrict);

// Libc include/_string.h (memset_s: C11 Annex K; macOS has no explicit_bzero)
int memcmp(const void *__s1, const void *__s2, size_t __n);
size_t strlen(const char *__s);
char *strerror(int __errnum);
errno_t memset_s(void *__s, rsize_t __smax, int __c, rsize_t __n);

// Libc include/dirent.h: DIR is a complete struct (Swift: UnsafeMutablePointer<DIR>, not
// OpaquePointer); bsd/sys/dirent.h: struct dirent under __DARWIN_64_BIT_INO_T.
struct _opaque_pthread_mutex_t {
  long __sig;
  char __opaque[56];
};
struct _telldir;
typedef struct {
  int __dd_fd;
  long __dd_loc;
  long __dd_size;
  char *__dd_buf;
  int __dd_len;
  long __dd_seek;
  long __padding;
  int __dd_flags;
  struct _opaque_pthread_mutex_t __dd_lock;
  struct _telldir *__dd_td;
} DIR;
struct dirent {
  __uint64_t d_ino;
  __uint64_t d_seekoff;
  __uint16_t d_reclen;
  __uint16_t d_namlen;
  __uint8_t d_type;
  char d_name[1024];
};
#define DT_UNKNOWN 0
#define DT_DIR 4
#define DT_REG 8
#define DT_LNK 10
DIR *fdopendir(int);
struct dirent *readdir(DIR *);
int closedir(DIR *);

// bsd/sys/xattr.h: six arguments (position, options) where Linux has four, and
// XATTR_NOFOLLOW where Linux has the l* calls.
#define XATTR_NOFOLLOW 0x0001
ssize_t listxattr(const char *path, char *namebuff, size_t size, int options);
ssize_t flistxattr(int fd, char *namebuff, size_t size, int options);
ssize_t getxattr(const char *path, const char *name, void *value, size_t size, u_int32_t position, int options);
ssize_t fgetxattr(int fd, const char *name, void *value, size_t size, u_int32_t position, int options);
int setxattr(const char *path, const char *name, const void *value, size_t size, u_int32_t position, int options);
int fsetxattr(int fd, const char *name, const void *value, size_t size, u_int32_t position, int options);
int removexattr(const char *path, const char *name, int options);
int fremovexattr(int fd, const char *name, int options);

// bsd/sys/clonefile.h
#define CLONE_NOFOLLOW 0x0001
#define CLONE_NOOWNERCOPY 0x0002
int fclonefileat(int, int, const char *, uint32_t);

// copyfile.h
typedef struct _copyfile_state *copyfile_state_t;
typedef uint32_t copyfile_flags_t;
#define COPYFILE_XATTR (1 << 2)
#define COPYFILE_DATA (1 << 3)
#define COPYFILE_CLONE (1 << 24)
int fcopyfile(int from_fd, int to_fd, copyfile_state_t _Nullable, copyfile_flags_t flags);

// bsd/sys/mman.h (no MADV_DONTDUMP on Darwin; MAP_FAILED, ((void *)-1), is a cast Swift does
// not import)
#define PROT_READ 0x01
#define PROT_WRITE 0x02
#define MAP_PRIVATE 0x0002
#define MAP_ANON 0x1000
#define MAP_ANONYMOUS 0x1000  // Darwin: MAP_ANON (an alias to a macro is lost beside glibc's)
void *mmap(void *, size_t, int, int, int, off_t);
int munmap(void *, size_t);
int madvise(void *, size_t, int);

// bsd/sys/resource.h, bsd/sys/syslimits.h (setrlimit(2): RLIMIT_NOFILE above OPEN_MAX is EINVAL)
typedef __uint64_t rlim_t;
#define RLIMIT_NOFILE 8
#define RUSAGE_SELF 0
#define OPEN_MAX 10240
struct rlimit {
  rlim_t rlim_cur;
  rlim_t rlim_max;
};
struct rusage {
  struct timeval ru_utime;
  struct timeval ru_stime;
  long ru_maxrss;
  long ru_ixrss;
  long ru_idrss;
  long ru_isrss;
  long ru_minflt;
  long ru_majflt;
  long ru_nswap;
  long ru_inblock;
  long ru_oublock;
  long ru_msgsnd;
  long ru_msgrcv;
  long ru_nsignals;
  long ru_nvcsw;
  long ru_nivcsw;
};
int getrlimit(int, struct rlimit *);
int setrlimit(int, const struct rlimit *);
int getrusage(int, struct rusage *);

// bsd/sys/signal.h, Libc include/signal.h
#define SIGHUP 1
#define SIGINT 2
#define SIGQUIT 3
#define SIGKILL 9
#define SIGPIPE 13
#define SIGTERM 15
typedef void (*sig_t)(int);
void (*_Nullable signal(int, void (*_Nullable)(int)))(int);
int raise(int);
// bsd/sys/signal.h (sigset_t is __darwin_sigset_t, a __uint32_t), Libc include/signal.h,
// libpthread include/pthread/pthread.h (pthread_sigmask)
typedef unsigned int sigset_t;
#define SIG_BLOCK 1
#define SIG_UNBLOCK 2
int sigemptyset(sigset_t *);
int sigaddset(sigset_t *, int);
int pthread_sigmask(int, const sigset_t *, sigset_t *);
int kill(pid_t, int);

// bsd/sys/termios.h, bsd/sys/ttycom.h (TIOCGWINSZ is _IOR('t', 104, struct winsize))
typedef unsigned long tcflag_t;
typedef unsigned char cc_t;
typedef unsigned long speed_t;
#define NCCS 20
#define ECHO 0x00000008
#define ECHONL 0x00000010
#define ICANON 0x00000100
#define TCSAFLUSH 2
struct termios {
  tcflag_t c_iflag;
  tcflag_t c_oflag;
  tcflag_t c_cflag;
  tcflag_t c_lflag;
  cc_t c_cc[NCCS];
  speed_t c_ispeed;
  speed_t c_ospeed;
};
struct winsize {
  unsigned short ws_row;
  unsigned short ws_col;
  unsigned short ws_xpixel;
  unsigned short ws_ypixel;
};
// _IOR('t', 104, struct winsize): its value, without the casts Swift's importer does not follow
// (Sources convert it with UInt(...), which fits whatever integer type it is imported as).
#define TIOCGWINSZ 0x40087468
int tcgetattr(int, struct termios *);
int tcsetattr(int, int, const struct termios *);
int ioctl(int, unsigned long, ...);

// Libc include/_time.h: clockid_t is an enum on Darwin (an Int32 on Linux)
typedef enum {
  _CLOCK_REALTIME = 0,
  _CLOCK_MONOTONIC = 6,
} clockid_t;
// (#define CLOCK_MONOTONIC _CLOCK_MONOTONIC: an alias to another name, lost beside glibc's
// macro of the same name; Darwin.swift declares it as Swift imports it, a clockid_t.)
int clock_gettime(clockid_t __clock_id, struct timespec *__tp);

// Libc include/_locale.h
#define LC_CTYPE 2
char *setlocale(int, const char *);

// Libc include/dlfcn.h (dyld)
#define RTLD_NOW 0x2
#define RTLD_LOCAL 0x4
void *dlopen(const char *__path, int __mode);
void *dlsym(void *__handle, const char *__symbol);
char *dlerror(void);

// libpthread include/pthread/pthread.h and bsd/sys/_pthread/_pthread_types.h: pthread_t is a
// pointer (Glibc: an integer), so a thread not yet made is nil. The start routine's argument is
// `void * _Nullable` in today's SDKs (_PTHREAD_SWIFT_IMPORTER_NULLABILITY_COMPAT is false for the
// Swift importer); older SDKs declared it _Nonnull.
struct __darwin_pthread_handler_rec;
struct _opaque_pthread_t {
  long __sig;
  struct __darwin_pthread_handler_rec *__cleanup_stack;
  char __opaque[8176];
};
struct _opaque_pthread_attr_t {
  long __sig;
  char __opaque[56];
};
struct _opaque_pthread_cond_t {
  long __sig;
  char __opaque[40];
};
struct _opaque_pthread_mutexattr_t {
  long __sig;
  char __opaque[8];
};
struct _opaque_pthread_condattr_t {
  long __sig;
  char __opaque[8];
};
typedef struct _opaque_pthread_t *pthread_t;
typedef struct _opaque_pthread_attr_t pthread_attr_t;
typedef struct _opaque_pthread_mutex_t pthread_mutex_t;
typedef struct _opaque_pthread_cond_t pthread_cond_t;
typedef struct _opaque_pthread_mutexattr_t pthread_mutexattr_t;
typedef struct _opaque_pthread_condattr_t pthread_condattr_t;
#pragma clang assume_nonnull begin
int pthread_create(pthread_t _Nullable *_Nonnull __restrict, const pthread_attr_t *_Nullable __restrict,
                   void *_Nullable (*_Nonnull)(void *_Nullable), void *_Nullable __restrict);
int pthread_join(pthread_t, void *_Nullable *_Nullable);
int pthread_attr_init(pthread_attr_t *);
int pthread_attr_destroy(pthread_attr_t *);
int pthread_attr_setstacksize(pthread_attr_t *, size_t);
int pthread_mutex_init(pthread_mutex_t *__restrict, const pthread_mutexattr_t *_Nullable __restrict);
int pthread_mutex_destroy(pthread_mutex_t *);
int pthread_mutex_lock(pthread_mutex_t *);
int pthread_mutex_unlock(pthread_mutex_t *);
int pthread_cond_init(pthread_cond_t *__restrict, const pthread_condattr_t *_Nullable __restrict);
int pthread_cond_destroy(pthread_cond_t *);
int pthread_cond_wait(pthread_cond_t *__restrict, pthread_mutex_t *__restrict);
int pthread_cond_broadcast(pthread_cond_t *);
#pragma clang assume_nonnull end

#endif
