/* The HTTP/1.1 of `hark serve` as pure code over bytes (conn.c moves them): a
 * request head of at most 16 kB parsed as strictly as RFC 9112 asks of a server
 * (CRLF line ends, no whitespace before a colon, no obsolete line folding, one
 * Host, one Content-Length and never beside Transfer-Encoding: else 400, so that
 * no proxy in front can read the message's length otherwise than we do), a body
 * sized by Content-Length or sent chunked, answers formatted into memory, and
 * multipart/form-data fields.  Every length comes from the peer, so each is
 * checked before it is used. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http.h"

enum { MAX_CHUNK_LINE = 1024, MAX_TRAILER = 8192 };

static int refuse(int status, char *why, size_t n, const char *reason)
{
    snprintf(why, n, "%s", reason);
    return status;
}

/* RFC 9110's tchar: what a method or a header's name is made of. */
static int tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The head's bytes as they come, one at a time: a CR not before an LF, an LF
 * not after a CR, or a NUL is refused at once (a head of bare LFs would
 * otherwise wait out the timeout); returns 1 at the blank line that ends it. */
static int head_byte(http_reader *rd, char c, char *why, size_t n, int *status)
{
    char prev = rd->have ? rd->buf[rd->have - 1] : 0;
    if (!c || (prev == '\r' && c != '\n') || (c == '\n' && prev != '\r')) {
        *status = refuse(400, why, n, "a request head whose lines are not ended by CRLF");
        return 1;
    }
    rd->buf[rd->have++] = c;
    rd->buf[rd->have] = 0;
    return c == '\n' && rd->have >= 4 && !memcmp(rd->buf + rd->have - 4, "\r\n\r\n", 4);
}

/* The request-target's path (origin-form, "*", or absolute-form's after its
 * authority), without its query, into r->path, and the query into r->query; 414
 * when either is longer. */
static int target_path(const char *t, size_t len, http_request *r, char *why, size_t n)
{
    const char *end = t + len;
    size_t scheme = !strncasecmp(t, "http://", len < 7 ? len : 7) ? 7
                    : !strncasecmp(t, "https://", len < 8 ? len : 8) ? 8 : 0;
    if (scheme && len > scheme) { /* absolute-form: http://host/path */
        t += scheme;
        while (t < end && *t != '/' && *t != '?')
            t++;
    } else if (*t != '/' && (*t != '*' || len != 1)) {
        return refuse(400, why, n, "a malformed request target");
    }
    const char *q = memchr(t, '?', (size_t)(end - t));
    size_t k = (size_t)((q ? q : end) - t);
    if (k >= sizeof r->path)
        return refuse(414, why, n, "the request's path is over 255 bytes");
    snprintf(r->path, sizeof r->path, "%.*s", (int)(k ? k : 1), k ? t : "/");
    size_t qk = q ? (size_t)(end - q - 1) : 0;
    if (qk >= sizeof r->query)
        return refuse(414, why, n, "the request's query is over 1023 bytes");
    snprintf(r->query, sizeof r->query, "%.*s", (int)qk, q ? q + 1 : "");
    return 0;
}

/* "METHOD SP TARGET SP HTTP/1.x": method and path are kept even when the line
 * is refused, for the log. */
static int request_line(const char *line, size_t len, http_request *r, char *why, size_t n)
{
    size_t m = 0;
    while (m < len && tchar((unsigned char)line[m]))
        m++;
    snprintf(r->method, sizeof r->method, "%.*s", (int)(m < 7 ? m : 7), line);
    const char *t = line + m + 1, *end = line + len, *sp = t < end ? memchr(t, ' ', (size_t)(end - t)) : NULL;
    if (m == 0 || m >= len || line[m] != ' ' || !sp || sp == t)
        return refuse(400, why, n, "a malformed request line");
    int rc = target_path(t, (size_t)(sp - t), r, why, n);
    for (const char *c = t; !rc && c < sp; c++)
        if (*c <= ' ' || *c == 0x7f)
            rc = refuse(400, why, n, "a control character in the request's path");
    const char *v = sp + 1;
    if (rc)
        return rc;
    if (end - v != 8 || memcmp(v, "HTTP/", 5) || v[5] < '0' || v[5] > '9' || v[6] != '.' ||
        v[7] < '0' || v[7] > '9')
        return refuse(400, why, n, "a malformed request line");
    if (v[5] != '1')
        return refuse(505, why, n, "HTTP/1.1 only");
    if (m > 7)
        return refuse(501, why, n, "no such method here");
    r->minor = v[7] == '0' ? 0 : 1; /* 1.2 and later are read as 1.1 (RFC 9110 2.5) */
    return 0;
}

/* What the header lines said of the body's length and of the request's host. */
typedef struct framing {
    int hosts, lengths, encodings, types, auths;
    char encoding[64]; /* Transfer-Encoding's value, lowercased, cut to fit */
} framing;

/* Content-Length: digits only; one too large to hold is read as too large to take. */
static int content_length(const char *v, size_t len, http_request *r, char *why, size_t n)
{
    size_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return refuse(400, why, n, "a malformed Content-Length");
        x = x > (SIZE_MAX - 9) / 10 ? SIZE_MAX : x * 10 + (size_t)(v[i] - '0');
    }
    if (!len)
        return refuse(400, why, n, "a malformed Content-Length");
    r->content_length = x;
    return 0;
}

/* A copy of a header's value into out (n bytes, cut to fit). */
static void keep(char *out, size_t n, const char *v, size_t len)
{
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), v);
}

/* The header name: value (surrounding whitespace gone) for the request. */
static int header_field(const char *name, size_t nl, const char *v, size_t vl, http_request *r,
                        framing *f, char *why, size_t n)
{
#define IS(h) (nl == sizeof h - 1 && !strncasecmp(name, h, nl))
    if (IS("host"))
        f->hosts++;
    else if (IS("content-length"))
        return f->lengths++ ? refuse(400, why, n, "more than one Content-Length")
                            : content_length(v, vl, r, why, n);
    else if (IS("transfer-encoding") && f->encodings++)
        return refuse(400, why, n, "more than one Transfer-Encoding");
    else if (IS("transfer-encoding"))
        for (size_t i = 0; i < vl && i + 1 < sizeof f->encoding; i++)
            f->encoding[i] = (char)(v[i] | (v[i] >= 'A' && v[i] <= 'Z' ? 0x20 : 0));
    else if (IS("content-type"))
        return f->types++ ? refuse(400, why, n, "more than one Content-Type")
                          : (keep(r->content_type, sizeof r->content_type, v, vl), 0);
    else if (IS("authorization"))
        return f->auths++ ? refuse(400, why, n, "more than one Authorization")
                          : (keep(r->authorization, sizeof r->authorization, v, vl), 0);
    else if (IS("expect"))
        r->expect_continue = vl == 12 && !strncasecmp(v, "100-continue", 12);
    return 0;
#undef IS
}

/* One header line: a token, the colon right after it, the value (whitespace
 * around it dropped) of visible characters, spaces and tabs. */
static int header_line(const char *line, size_t len, http_request *r, framing *f, char *why,
                       size_t n)
{
    if (*line == ' ' || *line == '\t')
        return refuse(400, why, n, "a folded header line (obsolete line folding)");
    size_t k = 0;
    while (k < len && tchar((unsigned char)line[k]))
        k++;
    if (k < len && k > 0 && (line[k] == ' ' || line[k] == '\t'))
        return refuse(400, why, n, "whitespace between a header's name and its colon");
    if (k == 0 || k == len || line[k] != ':')
        return refuse(400, why, n, "a malformed header line");
    const char *v = line + k + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    for (const char *c = v; c < end; c++)
        if ((unsigned char)*c < ' ' && *c != '\t')
            return refuse(400, why, n, "a control character in a header's value");
    return header_field(line, k, v, (size_t)(end - v), r, f, why, n);
}

/* How the body's length is told (RFC 9112 6.1 and 6.3), and the Host rule (3.2). */
static int check_framing(const framing *f, http_request *r, char *why, size_t n)
{
    if (f->hosts > 1 || (r->minor && !f->hosts))
        return refuse(400, why, n, f->hosts ? "more than one Host" : "no Host header (HTTP/1.1 needs one)");
    if (!f->encodings)
        return 0;
    if (f->lengths)
        return refuse(400, why, n, "both Content-Length and Transfer-Encoding");
    if (!r->minor)
        return refuse(400, why, n, "Transfer-Encoding in an HTTP/1.0 request");
    if (strcmp(f->encoding, "chunked")) {
        size_t k = strlen(f->encoding);
        int last_chunked = k > 7 && !strcmp(f->encoding + k - 7, "chunked");
        return refuse(last_chunked ? 501 : 400, why, n, last_chunked
                      ? "a Transfer-Encoding other than chunked alone"
                      : "a Transfer-Encoding that does not end in chunked");
    }
    r->chunked = 1;
    return 0;
}

/* The whole head in rd->buf (CRLF-checked by head_byte): its lines in turn. */
static int parse_head(http_reader *rd, char *why, size_t n)
{
    http_request *r = &rd->r;
    char *line = rd->buf, *end = strstr(line, "\r\n");
    int rc = request_line(line, (size_t)(end - line), r, why, n);
    framing f = {0};
    for (line = end + 2; !rc && line[0] != '\r'; line = end + 2) {
        end = strstr(line, "\r\n");
        rc = header_line(line, (size_t)(end - line), r, &f, why, n);
    }
    return rc ? rc : check_framing(&f, r, why, n);
}

/* The head's bytes, until the blank line after it. */
static int feed_head(http_reader *rd, const char *in, size_t len, size_t *used, char *why,
                     size_t n)
{
    if (!rd->buf && !(rd->buf = malloc(HTTP_MAX_HEAD + 1)))
        return refuse(503, why, n, "out of memory");
    int status = 0;
    for (; *used < len; ++*used) {
        if (!rd->have && (in[*used] == '\r' || in[*used] == '\n'))
            continue; /* empty lines before the request line (RFC 9112 2.2) */
        if (rd->have == HTTP_MAX_HEAD)
            return refuse(431, why, n, "the request head is over 16 kB");
        if (head_byte(rd, in[*used], why, n, &status)) {
            ++*used;
            if (status)
                return status;
            rd->phase = 1;
            status = parse_head(rd, why, n);
            return status ? status : HTTP_HEAD;
        }
    }
    return HTTP_MORE;
}

/* Room in r.body for k more bytes, within max_body; grown as the bytes come, so
 * that a large Content-Length claims no memory before its bytes arrive. */
static int body_room(http_reader *rd, size_t k, char *why, size_t n)
{
    size_t need = rd->r.body_len + k + 1;
    if (rd->r.body_len + k > rd->max_body)
        return refuse(413, why, n, "the body is larger than --max-upload-mb allows");
    if (need <= rd->body_cap)
        return 0;
    size_t cap = rd->body_cap ? rd->body_cap : 65536;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (!rd->r.chunked && cap > rd->r.content_length + 1)
        cap = rd->r.content_length + 1;
    char *b = realloc(rd->r.body, cap);
    if (!b)
        return refuse(413, why, n, "no memory for a body that large");
    rd->r.body = b;
    rd->r.body[rd->r.body_len] = 0;
    rd->body_cap = cap;
    return 0;
}

static void append(http_reader *rd, const char *in, size_t k)
{
    memcpy(rd->r.body + rd->r.body_len, in, k);
    rd->r.body_len += k;
    rd->r.body[rd->r.body_len] = 0;
}

static int feed_length(http_reader *rd, const char *in, size_t len, size_t *used, char *why,
                       size_t n)
{
    size_t k = len - *used, left = rd->r.content_length - rd->r.body_len;
    k = k < left ? k : left;
    int rc = body_room(rd, k, why, n);
    if (rc)
        return rc;
    append(rd, in + *used, k);
    *used += k;
    return rd->r.body_len == rd->r.content_length ? (rd->phase = 2, 0) : HTTP_MORE;
}

enum { CS_SIZE, CS_EXT, CS_SIZE_LF, CS_DATA, CS_DATA_CR, CS_DATA_LF, CS_TRAILER,
       CS_TRAILER_LINE, CS_TRAILER_LF, CS_END_LF };

static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
}

/* A chunk-size line: hex digits, perhaps extensions (skipped), CRLF. */
static int chunk_size_byte(http_reader *rd, char c, char *why, size_t n)
{
    if (++rd->line_len > MAX_CHUNK_LINE)
        return refuse(400, why, n, "a chunk-size line over 1 kB");
    if (rd->chunk_state == CS_SIZE && hex(c) >= 0) {
        if (rd->chunk_left > SIZE_MAX >> 4)
            return refuse(413, why, n, "the body is larger than --max-upload-mb allows");
        rd->chunk_left = rd->chunk_left << 4 | (size_t)hex(c);
        return 0;
    }
    if (rd->line_len == 1 || (c != '\r' && (unsigned char)c < ' ' && c != '\t'))
        return refuse(400, why, n, "a malformed chunk size");
    if (c == '\r')
        rd->chunk_state = CS_SIZE_LF;
    else if (rd->chunk_state == CS_SIZE && c != ';' && c != ' ' && c != '\t')
        return refuse(400, why, n, "a malformed chunk size");
    else
        rd->chunk_state = CS_EXT;
    return 0;
}

/* The framing bytes of a chunked body (all but the chunks' data), one at a time. */
static int chunk_byte(http_reader *rd, char c, char *why, size_t n)
{
    int s = rd->chunk_state, lf = c == '\n';
    if (s == CS_SIZE || s == CS_EXT)
        return chunk_size_byte(rd, c, why, n);
    if (s == CS_SIZE_LF && lf) {
        rd->chunk_state = rd->chunk_left ? CS_DATA : CS_TRAILER;
        rd->line_len = 0;
        return rd->chunk_left ? body_room(rd, rd->chunk_left, why, n) : 0;
    }
    if ((s == CS_DATA_CR && c == '\r') || (s == CS_TRAILER_LF && lf) || (s == CS_TRAILER && c == '\r')) {
        rd->chunk_state = s == CS_DATA_CR ? CS_DATA_LF : s == CS_TRAILER_LF ? CS_TRAILER : CS_END_LF;
        return 0;
    }
    if (s == CS_DATA_LF && lf) {
        rd->chunk_state = CS_SIZE;
        rd->line_len = 0;
        return 0;
    }
    if (s == CS_END_LF && lf) {
        rd->phase = 2;
        return 0;
    }
    if ((s == CS_TRAILER || s == CS_TRAILER_LINE) && c != '\n' && (c != '\r' || s == CS_TRAILER_LINE)) {
        rd->chunk_state = c == '\r' ? CS_TRAILER_LF : CS_TRAILER_LINE;
        return ++rd->line_len > MAX_TRAILER ? refuse(431, why, n, "trailer fields over 8 kB") : 0;
    }
    return refuse(400, why, n, "a malformed chunked body");
}

static int feed_chunked(http_reader *rd, const char *in, size_t len, size_t *used, char *why,
                        size_t n)
{
    while (*used < len && rd->phase == 1) {
        if (rd->chunk_state == CS_DATA) {
            size_t k = len - *used < rd->chunk_left ? len - *used : rd->chunk_left;
            append(rd, in + *used, k); /* room made when the size came */
            *used += k;
            rd->chunk_left -= k;
            rd->chunk_state = rd->chunk_left ? CS_DATA : CS_DATA_CR;
            continue;
        }
        int rc = chunk_byte(rd, in[(*used)++], why, n);
        if (rc)
            return rc;
    }
    return rd->phase == 2 ? 0 : HTTP_MORE;
}

int http_reader_feed(http_reader *rd, const char *in, size_t len, size_t *used, char *why,
                     size_t n)
{
    *used = 0;
    if (rd->phase == 0)
        return feed_head(rd, in, len, used, why, n);
    if (rd->phase == 2)
        return 0;
    return rd->r.chunked ? feed_chunked(rd, in, len, used, why, n)
                         : feed_length(rd, in, len, used, why, n);
}

int http_reader_body(http_reader *rd, size_t max, char *why, size_t n)
{
    rd->max_body = max;
    if (!rd->r.chunked && rd->r.content_length > max)
        return refuse(413, why, n, "the body is larger than --max-upload-mb allows");
    int rc = body_room(rd, 0, why, n); /* a body, if only an empty one */
    if (rc)
        return rc;
    if (!rd->r.chunked && !rd->r.content_length)
        return rd->phase = 2, 0;
    return HTTP_MORE;
}

void http_reader_free(http_reader *rd)
{
    free(rd->buf);
    free(rd->r.body);
    memset(rd, 0, sizeof *rd);
}

const char *http_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 102: return "Processing";
    case 200: return "OK";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Internal Server Error";
    }
}

static const char *always_sent = "";

void http_always_send(const char *lines)
{
    always_sent = lines ? lines : "";
}

char *http_response(int status, const char *extra, const char *content_type, const char *body,
                    size_t body_len, size_t *len)
{
    char length[48] = "";
    if (status != 204) /* which has no body, and says no length */
        snprintf(length, sizeof length, "Content-Length: %zu\r\n", body_len);
    const char *fmt = "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%s%s%s%sConnection: close\r\n\r\n";
    const char *auth = status == 401 ? "WWW-Authenticate: Bearer\r\n" : "";
    extra = extra ? extra : "";
    int k = snprintf(NULL, 0, fmt, status, http_reason(status), content_type, length, auth,
                     always_sent, extra);
    char *out = k < 0 ? NULL : malloc((size_t)k + body_len + 1);
    if (!out)
        return NULL;
    snprintf(out, (size_t)k + 1, fmt, status, http_reason(status), content_type, length, auth,
             always_sent, extra);
    if (body_len)
        memcpy(out + k, body, body_len);
    *len = (size_t)k + body_len;
    return out;
}

/* The boundary parameter of a multipart/form-data content type, into out. */
static int boundary_of(const char *content_type, char *out, size_t n)
{
    const char *b = strstr(content_type, "boundary=");
    if (strncasecmp(content_type, "multipart/form-data", 19) || !b)
        return -1;
    b += 9;
    int quoted = *b == '"';
    b += quoted;
    size_t k = 0;
    while (b[k] && b[k] != (quoted ? '"' : ';') && b[k] != ' ' && k + 3 < n)
        k++;
    if (k == 0 || k > 70) /* RFC 2046: 1 to 70 characters */
        return -1;
    snprintf(out, n, "--%.*s", (int)k, b);
    return 0;
}

/* Within a part's head [h, end): parameter param (name, filename) of its
 * Content-Disposition, into out. */
static int disposition(const char *h, const char *end, const char *param, char *out, size_t n)
{
    char key[32];
    snprintf(key, sizeof key, " %s=\"", param);
    size_t klen = strlen(key);
    for (const char *p = h; p + klen < end; p++) {
        if (memcmp(p, key, klen) && (p[0] != ';' || memcmp(p + 1, key + 1, klen - 1)))
            continue;
        const char *v = p + klen, *q = memchr(v, '"', (size_t)(end - v));
        if (!q)
            return -1;
        snprintf(out, n, "%.*s", (int)(q - v), v);
        return 0;
    }
    return -1;
}

int http_form_field(const http_request *r, const char *name, form_field *f)
{
    f->data = NULL;
    return http_form_next(r, name, f);
}

int http_form_next(const http_request *r, const char *name, form_field *f)
{
    char delim[80], field[128];
    if (boundary_of(r->content_type, delim, sizeof delim))
        return -1;
    size_t dl = strlen(delim);
    const char *end = r->body + r->body_len, *from = f->data ? f->data + f->len : r->body;
    const char *p = memmem(from, (size_t)(end - from), delim, dl);
    while (p && (size_t)(end - p) > dl + 2 && p[dl] == '\r' && p[dl + 1] == '\n') {
        const char *h = p + dl + 2, *data = memmem(h, (size_t)(end - h), "\r\n\r\n", 4);
        if (!data)
            return -1;
        data += 4;
        const char *next = memmem(data, (size_t)(end - data), delim, dl);
        if (!next || next - data < 2)
            return -1;
        if (disposition(h, data, "name", field, sizeof field) == 0 && strcmp(field, name) == 0) {
            f->data = data;
            f->len = (size_t)(next - 2 - data); /* the CRLF before the delimiter */
            if (disposition(h, data, "filename", f->filename, sizeof f->filename))
                f->filename[0] = 0;
            return 0;
        }
        p = next;
    }
    return -1;
}
