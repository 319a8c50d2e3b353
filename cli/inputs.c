/* The file list of a batch.  Inputs are files (taken as named, whatever their
 * extension) and directories, walked for audio files by extension (recursively
 * with -r).  The list is sorted bytewise and deduplicated so that every run, on
 * every machine, sees the same order, which shards slice; a file found in a
 * walked directory is named after its path below it, so that a/x.wav and b/x.wav
 * write different outputs. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "inputs.h"

typedef cli_file item;
typedef cli_files list;

/* "dir/a/b.wav" -> "dir/a/b" (only the last component loses its extension). */
static char *strip_ext(const char *path)
{
    char *s = strdup(path);
    if (!s)
        return NULL;
    char *base = strrchr(s, '/'), *dot;
    base = base ? base + 1 : s;
    dot = strrchr(base, '.');
    if (dot && dot != base)
        *dot = 0;
    return s;
}

/* "dir/a/b.wav" -> "b"; "-" -> "stdin". */
static char *stem_of(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strip_ext(strcmp(path, "-") == 0 ? "stdin" : base);
}

/* dir + "/" + name, without doubling a trailing slash of dir. */
static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t len = n + strlen(name) + 2;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%.*s%s%s", (int)n, dir, n && dir[n - 1] == '/' ? "" : "/", name);
    return s;
}

/* Takes ownership of path and name. */
static void list_add(list *l, char *path, char *name)
{
    if (path && name && l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        item *v = realloc(l->v, cap * sizeof *v);
        if (v)
            l->v = v, l->cap = cap;
    }
    if (!path || !name || l->n == l->cap) {
        fprintf(stderr, "hark: out of memory for the file list\n");
        free(path), free(name), l->failed++;
        return;
    }
    l->v[l->n++] = (item){path, name, NULL, NULL, NULL, PENDING, 0};
}

static void walk_dir(list *l, const char *dir, const char *rel, int recursive);

/* One directory entry: a subdirectory (walked with -r; symbolic links to
 * directories are not followed, so a walk cannot loop) or an audio file. */
static void add_entry(list *l, const char *path, const char *rel, int recursive)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return; /* gone since readdir */
    if (S_ISDIR(st.st_mode)) {
        if (recursive)
            walk_dir(l, path, rel, 1);
        return;
    }
    if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
        st.st_mode = S_IFREG; /* dangling: reading it will say why */
    if (S_ISREG(st.st_mode) && cli_is_audio_name(rel))
        list_add(l, strdup(path), strip_ext(rel));
}

/* rel is the path below the directory named on the command line (NULL at its
 * top): the output name mirrors it.  Hidden entries (".x", macOS "._x.wav")
 * are skipped. */
static void walk_dir(list *l, const char *dir, const char *rel, int recursive)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "hark: %s: %s\n", dir, strerror(errno));
        l->failed++;
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char *path = join_path(dir, e->d_name);
        char *sub = rel ? join_path(rel, e->d_name) : strdup(e->d_name);
        if (path && sub)
            add_entry(l, path, sub, recursive);
        else
            l->failed++;
        free(path);
        free(sub);
    }
    closedir(d);
}

/* Files are taken as named, whatever their extension; directories are walked. */
static void collect(list *l, char **inputs, int n, int recursive)
{
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") == 0 || stat(inputs[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            list_add(l, strdup(inputs[i]), stem_of(inputs[i]));
            continue;
        }
        size_t had = l->n;
        int failed = l->failed;
        l->any_dir = 1;
        walk_dir(l, inputs[i], NULL, recursive);
        if (l->n == had && l->failed == failed) {
            fprintf(stderr, "hark: %s: no audio files%s\n", inputs[i],
                    recursive ? "" : " (-r walks subdirectories)");
            l->failed++;
        }
    }
}

void cli_file_free(item *it)
{
    free(it->path);
    free(it->name);
    free(it->text);
    free(it->clash);
    free(it->error);
}

static int by_path(const void *a, const void *b)
{
    const item *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : strcmp(x->name, y->name);
}

/* Bytewise order by full path (strcmp compares unsigned bytes, whatever the
 * locale), each path once: the same list on every machine. */
static void sort_unique(list *l)
{
    if (l->n)
        qsort(l->v, l->n, sizeof *l->v, by_path);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (k && strcmp(l->v[k - 1].path, l->v[i].path) == 0)
            cli_file_free(&l->v[i]);
        else
            l->v[k++] = l->v[i];
    }
    l->n = k;
}

static int by_name(const void *a, const void *b)
{
    const item *x = *(const item *const *)a, *y = *(const item *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->path, y->path);
}

/* Inputs that would write the same outputs (x.wav and x.flac side by side, or
 * two named files x.wav): all but the first in path order fail, decided on
 * the whole list so that every shard agrees. */
void cli_mark_clashes(list *l)
{
    item **p = malloc((l->n ? l->n : 1) * sizeof *p);
    if (!p)
        return;
    for (size_t i = 0; i < l->n; i++)
        p[i] = &l->v[i];
    qsort(p, l->n, sizeof *p, by_name);
    for (size_t i = 1, first = 0; i < l->n; i++) {
        if (strcmp(p[i]->name, p[first]->name) == 0)
            p[i]->clash = strdup(p[first]->path); /* outlives the shard */
        else
            first = i;
    }
    free(p);
}

void cli_collect_inputs(list *l, char **inputs, int n, int recursive)
{
    collect(l, inputs, n, recursive);
    sort_unique(l);
}

void cli_files_free(list *l)
{
    for (size_t i = 0; i < l->n; i++)
        cli_file_free(&l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}
