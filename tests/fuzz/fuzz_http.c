/* libFuzzer target: arbitrary bytes as a request `hark serve` reads, fed to
 * http.c's reader in pieces of the sizes recv might give (the first byte picks
 * them, so a run is deterministic), as conn.c feeds it: the head, then (but for
 * sizes that are a multiple of 3: refused after the head, as a 401 is) the body
 * under a limit, then its multipart fields and an answer formatted from it.
 * Checked: the reader takes no byte it was not given, stops at the request's
 * end, keeps its body within the limit and as long as its Content-Length says,
 * and fields lie inside the body.
 * Build: make fuzz; run: build/fuzz/fuzz_http -max_total_time=60 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

/* The request's multipart fields, each inside the body. */
static void fields(const http_request *r)
{
    static const char *const names[] = {"file", "response_format", "language", "x"};
    form_field f;
    for (int i = 0; i < 4; i++)
        for (int found = http_form_field(r, names[i], &f) == 0; found;
             found = http_form_next(r, names[i], &f) == 0)
            CHECK(f.data >= r->body && f.data + f.len <= r->body + r->body_len);
}

/* After the head: the body is read (to max bytes), or the request refused. */
static int decide(http_reader *rd, size_t size, size_t max, char *why, size_t n)
{
    if (size % 3 == 0)
        return snprintf(why, n, "refused"), 401;
    return http_reader_body(rd, max, why, n);
}

/* The request whole: its body as long as said, within max; an answer made of it. */
static void whole(const http_reader *rd, size_t max)
{
    const http_request *r = &rd->r;
    CHECK(r->body_len <= max && r->body && r->body[r->body_len] == 0);
    CHECK(r->chunked || r->body_len == r->content_length);
    CHECK(strlen(r->path) < sizeof r->path && r->path[0]);
    CHECK(strlen(r->query) < sizeof r->query && !strchr(r->query, ' '));
    fields(r);
    size_t len;
    char *answer = http_response(200, NULL, "text/plain", r->body, r->body_len, &len);
    CHECK(!answer || (len >= r->body_len && !memcmp(answer + len - r->body_len, r->body, r->body_len)));
    free(answer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 100000)
        return 0;
    size_t piece = 1 + data[0] % 64 * (data[0] & 0x40 ? 257 : 1), max = size % 2 ? 4096 : 1 << 20;
    const char *in = (const char *)data + 1, *end = (const char *)data + size;
    http_reader rd = {0};
    char why[200];
    int rc = HTTP_MORE;
    while (rc == HTTP_MORE && in < end) {
        size_t len = (size_t)(end - in) < piece ? (size_t)(end - in) : piece, used;
        rc = http_reader_feed(&rd, in, len, &used, why, sizeof why);
        CHECK(used <= len && (rc != HTTP_MORE || used == len));
        in += used;
        if (rc == HTTP_HEAD)
            rc = decide(&rd, size, max, why, sizeof why);
    }
    if (rc == 0)
        whole(&rd, max);
    else if (rc > 0)
        CHECK(rc >= 400 && rc < 600 && why[0]);
    http_reader_free(&rd);
    return 0;
}
