/* libFuzzer target: arbitrary bytes as the request `hark serve` reads (through a
 * socket pair, as from a peer), then its multipart fields, or (odd sizes) the
 * rest read and dropped as for a request refused after its head.
 * Build: make fuzz; run: build/fuzz/fuzz_http -max_total_time=60 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (size > 60000 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        return 0;
    if (write(sv[0], data, size) != (ssize_t)size) { /* the pair's buffer holds it all */
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    shutdown(sv[0], SHUT_WR);
    http_request r;
    char why[200];
    form_field f;
    const http_limits lim = {1 << 20, 1};
    int head = http_read_head(sv[1], &lim, &r, why, sizeof why);
    if (head == 0 && size % 2) /* odd sizes: refused after the head (hark serve's 401) */
        http_linger(sv[1]);
    else if (head == 0 && http_read_body(sv[1], &r, why, sizeof why) == 0) {
        static const char *const names[] = {"file", "response_format", "language", "x"};
        for (int i = 0; i < 4; i++)
            for (int found = http_form_field(&r, names[i], &f) == 0; found;
                 found = http_form_next(&r, names[i], &f) == 0)
                if (f.data < r.body || f.data + f.len > r.body + r.body_len)
                    __builtin_trap(); /* a field reaching outside the body */
    }
    http_request_free(&r);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
