/* Errors, whole-file access, atomic writes and memory, shared by every stage. */
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int hark_fail(hark_error *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

enum { READ_WHOLE_MAX = 256 << 20 }; /* model JSON, merges, manifests: a few MB at most */

static int too_large(const char *path, size_t max, hark_error *e)
{
    return hark_fail(e, HARK_ERR_FORMAT, "%s: larger than %zu MB, too large for a JSON or text "
                     "file", path, max >> 20);
}

/* Whether a buffer of cap bytes full of input may grow: past max (0: the memory
 * available), a stream such as /dev/zero would fill memory until hark is killed.
 * The buffer's last step is to max + 1 bytes, so a full one holds more than max. */
static int may_grow(const char *path, size_t cap, size_t max, hark_error *e)
{
    double available;
    if (max && cap > max)
        return too_large(path, max, e);
    if (!max && hark_memory_short(2.0 * cap, &available))
        return hark_fail(e, HARK_ERR_NOMEM, "%s: %.1f GB read and more to come, more than the "
                         "memory available (%.1f GB)", path, cap / 1e9, available / 1e9);
    return 0;
}

/* Reads all of fd into a malloc'd buffer with a spare NUL byte; at most max bytes
 * (0: what the memory available holds). */
static int read_all(int fd, const char *path, size_t max, char **data, size_t *size,
                    hark_error *e)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        return hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", path);
    for (;;) {
        if (n == cap) {
            int rc = may_grow(path, cap, max, e);
            if (rc) {
                free(buf);
                return rc;
            }
            size_t next = max && cap * 2 > max ? max + 1 : cap * 2;
            char *nb = realloc(buf, next + 1);
            if (!nb) {
                free(buf);
                return hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap = next;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int err = errno;
            free(buf);
            return hark_fail(e, HARK_ERR_IO, "%s: %s", path, strerror(err));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    buf[n] = 0;
    *data = buf;
    *size = n;
    return 0;
}

static int open_regular(const char *path, struct stat *st, hark_error *e)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return hark_fail(e, HARK_ERR_IO, "%s: %s", path, strerror(errno));
    if (fstat(fd, st) != 0 || S_ISDIR(st->st_mode)) {
        close(fd);
        return hark_fail(e, HARK_ERR_IO, "%s: %s", path,
                         S_ISDIR(st->st_mode) ? "is a directory" : strerror(errno));
    }
    return fd;
}

int hark_need(hark_cursor *c, size_t n, const char *what)
{
    if ((size_t)(c->end - c->p) < n)
        return hark_fail(c->e, HARK_ERR_FORMAT, "%s: truncated in %s", c->path, what);
    return 0;
}

int hark_read_i32(hark_cursor *c, int32_t *v, const char *what)
{
    int rc = hark_need(c, 4, what);
    if (rc)
        return rc;
    *v = (int32_t)(c->p[0] | (uint32_t)c->p[1] << 8 | (uint32_t)c->p[2] << 16 |
                   (uint32_t)c->p[3] << 24);
    c->p += 4;
    return 0;
}

int hark_read_file(const char *path, char **data, size_t *size, hark_error *e)
{
    struct stat st;
    int fd = open_regular(path, &st, e);
    if (fd < 0)
        return fd;
    int rc = S_ISREG(st.st_mode) && st.st_size > READ_WHOLE_MAX /* refused without reading */
                 ? too_large(path, READ_WHOLE_MAX, e)
                 : read_all(fd, path, READ_WHOLE_MAX, data, size, e);
    close(fd);
    return rc;
}

/* MemAvailable plus SwapFree: what the pages of a new allocation can come from
 * (a machine that swaps is slow, not killed). */
static double available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    double kb = 0, avail = 0, swap = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
            avail = kb;
        else if (sscanf(line, "SwapFree: %lf kB", &kb) == 1)
            swap = kb;
    if (f)
        fclose(f);
    if (avail > 0)
        return (avail + swap) * 1024;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (double)pages * page : 0;
}

int hark_memory_short(double bytes, double *available)
{
    *available = available_bytes();
    return *available > 0 && bytes > *available;
}

/* A process's start in clock ticks after boot (/proc/PID/stat's 22nd field, after
 * the name in parentheses, which may hold anything); 0 when unknown. */
static unsigned long long start_ticks(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    unsigned long long t = 0;
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    if (p)
        sscanf(p + 1, "%llu", &t);
    return t;
}

void hark_host_name(char *h, size_t n)
{
    if (gethostname(h, n) != 0 || !h[0])
        snprintf(h, n, "localhost");
    h[n - 1] = 0;
    for (char *c = h; *c; c++)
        *c = *c == '/' ? '_' : *c;
}

/* "<path>.tmp.<host>.<pid>.<start>": enough to tell, on resuming, whether the
 * writer is still at work or was killed (a new process reusing its pid does
 * not share its start). */
int hark_out_open(hark_out *o, const char *path, hark_error *e)
{
    char host[256];
    hark_host_name(host, sizeof host);
    size_t n = strlen(path) + strlen(host) + 64;
    *o = (hark_out){path, malloc(n), NULL, 0};
    if (!o->tmp)
        return hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", path);
    long pid = (long)getpid();
    snprintf(o->tmp, n, "%s.tmp.%s.%ld.%llu", path, host, pid, start_ticks(pid));
    if ((o->f = fopen(o->tmp, "wb")))
        return 0;
    int rc = hark_fail(e, HARK_ERR_IO, "%s: cannot write (%s)", path, strerror(errno));
    free(o->tmp);
    o->tmp = NULL;
    return rc;
}

static int all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return n > 0 && n < 20;
}

int hark_out_stale(const char *name, size_t *base_len)
{
    const char *t = NULL, *p = name, *end = name + strlen(name);
    while ((p = strstr(p, ".tmp.")))
        t = p++;
    if (!t || t == name)
        return 0;
    /* after ".tmp.": <pid> (hark before host names), <host>.<pid> or <host>.<pid>.<start> */
    const char *rest = t + 5, *last = strrchr(rest, '.'), *pid_s = rest, *host = NULL;
    unsigned long long start = 0;
    size_t host_len = 0;
    if (last && all_digits(last + 1, (size_t)(end - last - 1))) {
        const char *prev = last - 1;
        while (prev > rest && *prev != '.')
            prev--;
        int three = *prev == '.' && all_digits(prev + 1, (size_t)(last - prev - 1));
        pid_s = three ? prev + 1 : last + 1;
        host = rest, host_len = (size_t)((three ? prev : last) - rest);
        start = three ? strtoull(last + 1, NULL, 10) : 0;
    }
    size_t pid_len = strcspn(pid_s, ".");
    if (!all_digits(pid_s, pid_len) || (!host && pid_s + pid_len != end))
        return 0;
    char here[256];
    hark_host_name(here, sizeof here);
    if (host && (host_len != strlen(here) || strncmp(host, here, host_len) != 0))
        return 0; /* another machine's writer: nothing to tell whether it is gone */
    long pid = strtol(pid_s, NULL, 10);
    int gone = kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    gone = gone || (start && start_ticks(pid) != start); /* its pid taken by another */
    *base_len = (size_t)(t - name);
    return gone;
}

void hark_out_fail(hark_out *o, int err)
{
    if (!o->err)
        o->err = err ? err : EIO;
}

void hark_out_write(hark_out *o, const void *data, size_t n)
{
    if (!o->err && n && fwrite(data, 1, n, o->f) != n)
        hark_out_fail(o, errno);
}

int hark_out_close(hark_out *o, hark_error *e)
{
    /* fsync before the rename: after a crash the name holds the whole file or the old one */
    if (!o->err && (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0))
        hark_out_fail(o, errno);
    if (fclose(o->f) != 0)
        hark_out_fail(o, errno);
    int rc = 0;
    if (o->err)
        rc = hark_fail(e, o->err == ENOMEM ? HARK_ERR_NOMEM : HARK_ERR_IO, "%s: cannot write (%s)",
                       o->path, strerror(o->err));
    else if (rename(o->tmp, o->path) != 0)
        rc = hark_fail(e, HARK_ERR_IO, "%s: cannot rename into place (%s)", o->path,
                       strerror(errno));
    if (rc)
        remove(o->tmp);
    free(o->tmp);
    o->tmp = NULL, o->f = NULL;
    return rc;
}

int hark_write_parts(const char *path, const void *const *parts, const size_t *sizes, int n,
                     hark_error *e)
{
    hark_out o;
    int rc = hark_out_open(&o, path, e);
    for (int i = 0; !rc && i < n; i++)
        hark_out_write(&o, parts[i], sizes[i]);
    return rc ? rc : hark_out_close(&o, e);
}

int hark_write_file(const char *path, const void *data, size_t size, hark_error *e)
{
    return hark_write_parts(path, &data, &size, 1, e);
}

int hark_map_file(const char *path, hark_map *m, hark_error *e)
{
    struct stat st;
    memset(m, 0, sizeof *m);
    int fd = open_regular(path, &st, e);
    if (fd < 0)
        return fd;
    int rc = 0;
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED)
            rc = hark_fail(e, HARK_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
        else {
            m->data = p;
            m->size = (size_t)st.st_size;
            m->mapped = 1;
        }
    } else {
        char *buf;
        rc = read_all(fd, path, 0, &buf, &m->size, e);
        if (rc == 0)
            m->data = (const uint8_t *)buf;
    }
    close(fd);
    return rc;
}

void hark_map_release(hark_map *m)
{
    if (!m || !m->data)
        return;
    if (m->mapped)
        munmap((void *)m->data, m->size);
    else
        free((void *)m->data);
    memset(m, 0, sizeof *m);
}

/* Page-aligned, then populated: faulting pages in one by one cost twenty times
 * as much on a VM (figures: docs/perf-log.md, "Figures behind code comments").  A hint only: kernels before 5.14 refuse it
 * and the pages fault in as before. */
void *hark_alloc_populated(size_t bytes)
{
    size_t page = 4096, whole = (bytes + page - 1) / page * page;
    void *p = aligned_alloc(page, whole ? whole : page);
#ifdef MADV_POPULATE_WRITE
    if (p && whole)
        madvise(p, whole, MADV_POPULATE_WRITE);
#endif
    return p;
}
