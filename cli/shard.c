/* --shard K/N: which files of the whole list a shard keeps, decided by every
 * shard alone from the list it sees, so that the N shards are disjoint and cover
 * the list with no coordination.  Striped by position (the default), or with
 * --balance duration by length: longest first, each to the shard with the least
 * audio so far, so that no shard gets all the two-hour files. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "inputs.h"

/* A file's length for balancing: its header's, else (ffmpeg's formats, a damaged
 * header) its size at 128 kbit/s, a common compressed rate; -1 when it cannot be
 * read at all, which sorts it last. */
static double file_seconds(const char *path)
{
    double s = hark_audio_file_seconds(path);
    struct stat st;
    if (s >= 0)
        return s;
    return stat(path, &st) == 0 ? (double)st.st_size / 16000.0 : -1;
}

/* Longest first; equal lengths in path order, so that all shards agree. */
static const cli_files *g_sorting;
static int longest_first(const void *a, const void *b)
{
    const cli_file *x = &g_sorting->v[*(const size_t *)a], *y = &g_sorting->v[*(const size_t *)b];
    if (x->seconds != y->seconds)
        return x->seconds > y->seconds ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Lengths compared in whole milliseconds: sums of integers are exact, so every
 * machine picks the same lightest shard. */
static long long ms(double seconds) { return seconds > 0 ? (long long)(seconds * 1000 + 0.5) : 0; }

static int balance(cli_files *l, int n, int *shard)
{
    size_t *order = malloc((l->n ? l->n : 1) * sizeof *order);
    long long *load = calloc((size_t)n, sizeof *load);
    if (!order || !load) {
        free(order), free(load);
        return -1;
    }
    for (size_t i = 0; i < l->n; i++)
        order[i] = i;
    g_sorting = l;
    qsort(order, l->n, sizeof *order, longest_first);
    for (size_t j = 0; j < l->n; j++) {
        int best = 0;
        for (int k = 1; k < n; k++)
            if (load[k] < load[best])
                best = k;
        load[best] += ms(l->v[order[j]].seconds);
        shard[order[j]] = best + 1;
    }
    free(order), free(load);
    return 0;
}

int cli_assign_shards(cli_files *l, int n, int by_duration, int *shard, cli_shard_total *totals)
{
    if (by_duration || totals)
        for (size_t i = 0; i < l->n; i++)
            l->v[i].seconds = file_seconds(l->v[i].path);
    if (by_duration && balance(l, n, shard))
        return -1;
    for (size_t i = 0; !by_duration && i < l->n; i++)
        shard[i] = (int)(i % (size_t)n) + 1; /* every N-th file from the K-th on */
    for (int k = 0; totals && k < n; k++)
        totals[k] = (cli_shard_total){0, 0};
    for (size_t i = 0; totals && i < l->n; i++) {
        totals[shard[i] - 1].files++;
        totals[shard[i] - 1].seconds += (double)ms(l->v[i].seconds) / 1000;
    }
    return 0;
}

void cli_keep_shard(cli_files *l, int k, int n, int by_duration)
{
    int *shard = malloc((l->n ? l->n : 1) * sizeof *shard);
    if (!shard || cli_assign_shards(l, n, by_duration, shard, NULL)) {
        free(shard);
        shard = NULL; /* out of memory: striped by position, which needs none */
    }
    size_t kept = 0;
    for (size_t i = 0; i < l->n; i++) {
        int s = shard ? shard[i] : (int)(i % (size_t)n) + 1;
        if (s == k)
            l->v[kept++] = l->v[i];
        else
            cli_file_free(&l->v[i]);
    }
    l->n = kept;
    free(shard);
}
