/*
 * faultfs.c - a FUSE filesystem that mirrors a backing directory and can be
 * told to fail, shorten, tear, drop or delay reads and writes, or to leave
 * one sector of a write stale. Because the
 * faults happen behind the kernel's FUSE client, every way of doing I/O sees
 * them: pread, io_uring, libaio, O_DIRECT or not.
 *
 *   faultfs BACKING_DIR MOUNTPOINT [FUSE options...]
 *
 * It always runs in the foreground. Every file is opened with direct_io, so
 * each read and write reaches the daemon (no page cache in between), and the
 * backing files are opened without O_DIRECT (the daemon plays the device).
 * Killing the daemon (SIGKILL) makes the mount fail every later request with
 * ENOTCONN, as if the device vanished; SIGSTOP freezes it.
 *
 * Control: MOUNTPOINT/.faultfs, a file that is not listed in the root. A
 * write of one line replaces the fault setting and restarts the numbering:
 *   mode=none|eio|enospc|short|torn|drop|misdirect|stall|stale
 *   op=read|write|both after=N count=N stall_ms=N shift=N sector=N
 * (every key optional; defaults none, both, 0, 0, 1000, the request's
 * length, 0). Requests of the selected direction on regular files are numbered
 * from 0 as they arrive (the kernel splits a large request into several of
 * at most max_write / max_read bytes); those numbered [after, after + count)
 * are faulted, count 0 meaning all from after on. Modes act like the
 * LD_PRELOAD shim's: eio, enospc fail; short moves the first half and says
 * so; torn moves the first half and claims all; drop moves nothing and
 * claims all; misdirect moves everything at offset + shift; stall sleeps
 * stall_ms first. Where a read claims bytes it did not read they are zeros.
 * stale acts on writes only (a read in its numbering passes unchanged): it
 * writes everything but the 512-byte sector number `sector` of the request
 * (bytes 512 sector .. 512 sector + 511 from the request's offset), which
 * keeps what the file held there, and claims all: a write torn at one
 * sector, anywhere in the block (a request too short to reach that sector
 * is written whole).
 * Reading the control file gives the setting and two counters:
 *   mode=eio op=read after=0 count=0 stall_ms=1000 shift=0 sector=0 seen=12 faulted=12
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define CONTROL     "/.faultfs"
#define CONTROL_FH  UINT64_MAX
#define CONTROL_MAX 512
#define SECTOR      512 /* what mode stale leaves unwritten */

enum mode {
    M_NONE,
    M_EIO,
    M_ENOSPC,
    M_SHORT,
    M_TORN,
    M_DROP,
    M_MISDIRECT,
    M_STALL,
    M_STALE,
    M_COUNT
};
static const char *const mode_names[M_COUNT] = {"none", "eio",       "enospc", "short", "torn",
                                                "drop", "misdirect", "stall",  "stale"};

struct setting {
    enum mode mode;
    int reads, writes;
    unsigned long long after, count, stall_ms, sector;
    int has_shift;
    long long shift;
};

static int root_fd = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct setting current = {.reads = 1, .writes = 1, .stall_ms = 1000};
static unsigned long long seen, faulted; /* under lock */

/* The backing path of a mount path, relative to root_fd. */
static const char *rel(const char *path)
{
    return path[1] ? path + 1 : ".";
}

static int is_control(const char *path)
{
    return path && strcmp(path, CONTROL) == 0;
}

/* -- faults ------------------------------------------------------------------ */

/* The mode for the next request of a direction; its setting in *out. */
static enum mode next_fault(int is_write, struct setting *out)
{
    pthread_mutex_lock(&lock);
    *out = current;
    enum mode m = M_NONE;
    if (current.mode != M_NONE && (is_write ? current.writes : current.reads)) {
        unsigned long long i = seen++;
        if (i >= current.after && (!current.count || i - current.after < current.count)) {
            m = current.mode;
            faulted++;
        }
    }
    pthread_mutex_unlock(&lock);
    return m;
}

static void sleep_ms(unsigned long long ms)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int parse_control(const char *text, struct setting *s)
{
    *s = (struct setting){.reads = 1, .writes = 1, .stall_ms = 1000};
    char buf[CONTROL_MAX + 1];
    snprintf(buf, sizeof(buf), "%s", text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return -EINVAL;
        *eq = '\0';
        const char *key = tok, *val = eq + 1;
        char *end = NULL;
        if (strcmp(key, "mode") == 0) {
            int found = 0;
            for (int i = 0; i < M_COUNT; i++) {
                if (strcmp(val, mode_names[i]) == 0) {
                    s->mode = (enum mode)i;
                    found = 1;
                }
            }
            if (!found)
                return -EINVAL;
        } else if (strcmp(key, "op") == 0) {
            if (strcmp(val, "read") != 0 && strcmp(val, "write") != 0 && strcmp(val, "both") != 0)
                return -EINVAL;
            s->reads = strcmp(val, "write") != 0;
            s->writes = strcmp(val, "read") != 0;
        } else if (strcmp(key, "shift") == 0) {
            s->shift = strtoll(val, &end, 10);
            s->has_shift = 1;
        } else {
            unsigned long long v = strtoull(val, &end, 10);
            if (strcmp(key, "after") == 0)
                s->after = v;
            else if (strcmp(key, "count") == 0)
                s->count = v;
            else if (strcmp(key, "stall_ms") == 0)
                s->stall_ms = v;
            else if (strcmp(key, "sector") == 0)
                s->sector = v;
            else
                return -EINVAL;
        }
        if (end && (*end || end == val))
            return -EINVAL;
    }
    return 0;
}

static int control_write(const char *buf, size_t size)
{
    if (size > CONTROL_MAX)
        return -EINVAL;
    char text[CONTROL_MAX + 1];
    memcpy(text, buf, size);
    text[size] = '\0';
    struct setting s;
    int rc = parse_control(text, &s);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&lock);
    current = s;
    seen = faulted = 0;
    pthread_mutex_unlock(&lock);
    return (int)size;
}

static int control_read(char *buf, size_t size, off_t off)
{
    char text[CONTROL_MAX];
    pthread_mutex_lock(&lock);
    struct setting s = current;
    int n = snprintf(text, sizeof(text),
                     "mode=%s op=%s after=%llu count=%llu stall_ms=%llu shift=%lld sector=%llu "
                     "seen=%llu faulted=%llu\n",
                     mode_names[s.mode],
                     s.reads && s.writes ? "both"
                     : s.reads           ? "read"
                                         : "write",
                     s.after, s.count, s.stall_ms, s.has_shift ? s.shift : 0LL, s.sector, seen,
                     faulted);
    pthread_mutex_unlock(&lock);
    if (off >= n)
        return 0;
    size_t left = (size_t)(n - off);
    if (left > size)
        left = size;
    memcpy(buf, text + off, left);
    return (int)left;
}

static off_t shifted(const struct setting *s, off_t off, size_t len)
{
    return off + (off_t)(s->has_shift ? s->shift : (long long)len);
}

/* -- operations ---------------------------------------------------------------- */

static void *ffs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    cfg->use_ino = 1;
    cfg->direct_io = 1;
    /* the backing directory may change behind the mount: cache nothing */
    cfg->entry_timeout = 0;
    cfg->attr_timeout = 0;
    cfg->negative_timeout = 0;
    return NULL;
}

static int ffs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    if (is_control(path)) {
        memset(st, 0, sizeof(*st));
        st->st_mode = S_IFREG | 0666;
        st->st_nlink = 1;
        st->st_uid = getuid();
        st->st_gid = getgid();
        return 0;
    }
    int rc = fi && fi->fh != CONTROL_FH ? fstat((int)fi->fh, st)
                                        : fstatat(root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW);
    return rc < 0 ? -errno : 0;
}

static int ffs_access(const char *path, int mask)
{
    if (is_control(path))
        return 0;
    return faccessat(root_fd, rel(path), mask, 0) < 0 ? -errno : 0;
}

static int ffs_readlink(const char *path, char *buf, size_t size)
{
    ssize_t n = readlinkat(root_fd, rel(path), buf, size - 1);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    return 0;
}

static int ffs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off;
    (void)fi;
    (void)flags;
    int fd = openat(root_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        int err = errno;
        close(fd);
        return -err;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        memset(&st, 0, sizeof(st));
        st.st_ino = e->d_ino;
        st.st_mode = (mode_t)DTTOIF(e->d_type);
        if (fill(buf, e->d_name, &st, 0, 0))
            break;
    }
    closedir(d);
    return 0;
}

static int ffs_mkdir(const char *path, mode_t mode)
{
    return mkdirat(root_fd, rel(path), mode) < 0 ? -errno : 0;
}

static int ffs_unlink(const char *path)
{
    if (is_control(path))
        return -EPERM;
    return unlinkat(root_fd, rel(path), 0) < 0 ? -errno : 0;
}

static int ffs_rmdir(const char *path)
{
    return unlinkat(root_fd, rel(path), AT_REMOVEDIR) < 0 ? -errno : 0;
}

static int ffs_symlink(const char *target, const char *path)
{
    return symlinkat(target, root_fd, rel(path)) < 0 ? -errno : 0;
}

static int ffs_rename(const char *from, const char *to, unsigned int flags)
{
    if (is_control(from) || is_control(to))
        return -EPERM;
    return renameat2(root_fd, rel(from), root_fd, rel(to), flags) < 0 ? -errno : 0;
}

static int ffs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    if (is_control(path))
        return 0;
    int rc = fi ? fchmod((int)fi->fh, mode) : fchmodat(root_fd, rel(path), mode, 0);
    return rc < 0 ? -errno : 0;
}

static int ffs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    if (is_control(path))
        return 0;
    int rc = fi ? fchown((int)fi->fh, uid, gid)
                : fchownat(root_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
    return rc < 0 ? -errno : 0;
}

static int ffs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    if (is_control(path))
        return 0;
    if (fi)
        return ftruncate((int)fi->fh, size) < 0 ? -errno : 0;
    int fd = openat(root_fd, rel(path), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = ftruncate(fd, size) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

static int ffs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    if (is_control(path))
        return 0;
    int rc =
        fi ? futimens((int)fi->fh, tv) : utimensat(root_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW);
    return rc < 0 ? -errno : 0;
}

/* The daemon plays the device: O_DIRECT is the caller's business, and the
 * backing directory (often tmpfs) may not support it. */
static int backing_flags(int flags)
{
    return (flags & ~O_DIRECT) | O_CLOEXEC;
}

static int ffs_open(const char *path, struct fuse_file_info *fi)
{
    fi->direct_io = 1;
    if (is_control(path)) {
        fi->fh = CONTROL_FH;
        return 0;
    }
    int fd = openat(root_fd, rel(path), backing_flags(fi->flags));
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int ffs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    if (is_control(path))
        return ffs_open(path, fi);
    fi->direct_io = 1;
    int fd = openat(root_fd, rel(path), backing_flags(fi->flags) | O_CREAT, mode);
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int ffs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh == CONTROL_FH)
        return control_read(buf, size, off);
    int fd = (int)fi->fh;
    struct setting s;
    size_t want = size;
    ssize_t n;
    switch (next_fault(0, &s)) {
    case M_EIO:
        return -EIO;
    case M_ENOSPC:
        return -ENOSPC;
    case M_SHORT:
        want = size / 2;
        break;
    case M_TORN:
        n = pread(fd, buf, size / 2, off);
        if (n < 0)
            return -errno;
        memset(buf + n, 0, size - (size_t)n);
        return (int)size;
    case M_DROP:
        memset(buf, 0, size);
        return (int)size;
    case M_MISDIRECT:
        n = pread(fd, buf, size, shifted(&s, off, size));
        if (n < 0)
            return -errno;
        memset(buf + n, 0, size - (size_t)n);
        return (int)size;
    case M_STALL:
        sleep_ms(s.stall_ms);
        break;
    default:
        break;
    }
    n = pread(fd, buf, want, off);
    return n < 0 ? -errno : (int)n;
}

/* Writes all of buf but the sector `sector` of it, which keeps the file's
 * bytes (mode stale); claims all. */
static int write_but_sector(int fd, const char *buf, size_t size, off_t off,
                            unsigned long long sector)
{
    if (sector >= (size + SECTOR - 1) / SECTOR) /* no such sector: all of it lands */
        return pwrite(fd, buf, size, off) < 0 ? -errno : (int)size;
    size_t lo = (size_t)sector * SECTOR;
    size_t hi = lo + SECTOR < size ? lo + SECTOR : size;
    if (lo > 0 && pwrite(fd, buf, lo, off) < 0)
        return -errno;
    if (hi < size && pwrite(fd, buf + hi, size - hi, off + (off_t)hi) < 0)
        return -errno;
    return (int)size;
}

static int ffs_write(const char *path, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh == CONTROL_FH)
        return control_write(buf, size);
    int fd = (int)fi->fh;
    struct setting s;
    size_t want = size;
    ssize_t n;
    switch (next_fault(1, &s)) {
    case M_EIO:
        return -EIO;
    case M_ENOSPC:
        return -ENOSPC;
    case M_SHORT:
        want = size / 2;
        break;
    case M_TORN:
        n = pwrite(fd, buf, size / 2, off);
        return n < 0 ? -errno : (int)size;
    case M_DROP:
        return (int)size;
    case M_MISDIRECT:
        n = pwrite(fd, buf, size, shifted(&s, off, size));
        return n < 0 ? -errno : (int)size;
    case M_STALE:
        return write_but_sector(fd, buf, size, off, s.sector);
    case M_STALL:
        sleep_ms(s.stall_ms);
        break;
    default:
        break;
    }
    n = pwrite(fd, buf, want, off);
    return n < 0 ? -errno : (int)n;
}

static int ffs_statfs(const char *path, struct statvfs *st)
{
    (void)path;
    return fstatvfs(root_fd, st) < 0 ? -errno : 0;
}

static int ffs_flush(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    (void)fi;
    return 0;
}

static int ffs_release(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh != CONTROL_FH)
        close((int)fi->fh);
    return 0;
}

static int ffs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh == CONTROL_FH)
        return 0;
    int rc = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);
    return rc < 0 ? -errno : 0;
}

static int ffs_fallocate(const char *path, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh == CONTROL_FH)
        return -EOPNOTSUPP;
    return fallocate((int)fi->fh, mode, off, len) < 0 ? -errno : 0;
}

static const struct fuse_operations ops = {
    .init = ffs_init,
    .getattr = ffs_getattr,
    .access = ffs_access,
    .readlink = ffs_readlink,
    .readdir = ffs_readdir,
    .mkdir = ffs_mkdir,
    .unlink = ffs_unlink,
    .rmdir = ffs_rmdir,
    .symlink = ffs_symlink,
    .rename = ffs_rename,
    .chmod = ffs_chmod,
    .chown = ffs_chown,
    .truncate = ffs_truncate,
    .utimens = ffs_utimens,
    .open = ffs_open,
    .create = ffs_create,
    .read = ffs_read,
    .write = ffs_write,
    .statfs = ffs_statfs,
    .flush = ffs_flush,
    .release = ffs_release,
    .fsync = ffs_fsync,
    .fallocate = ffs_fallocate,
};

int main(int argc, char *argv[])
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s BACKING_DIR MOUNTPOINT [FUSE options...]\n", argv[0]);
        return 2;
    }
    root_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0) {
        fprintf(stderr, "%s: cannot open '%s': %s\n", argv[0], argv[1], strerror(errno));
        return 1;
    }
    /* argv[0] -f -o fsname=... MOUNTPOINT [options...] */
    char **args = calloc((size_t)argc + 4, sizeof(*args));
    if (!args)
        return 1;
    int n = 0;
    args[n++] = argv[0];
    args[n++] = "-f";
    args[n++] = "-o";
    args[n++] = "fsname=faultfs,subtype=faultfs";
    for (int i = 2; i < argc; i++)
        args[n++] = argv[i];
    int rc = fuse_main(n, args, &ops, NULL);
    free(args);
    close(root_fd);
    return rc;
}
