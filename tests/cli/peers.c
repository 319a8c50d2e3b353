/* Peers for test_serve.sh, which bash alone cannot be (build/tests/peers):
 *   peers storm PORT DRIPS BODIES SECONDS KEY
 *     DRIPS connections to 127.0.0.1:PORT that send a request head one byte a
 *     second, opened again whenever the server closes one, and BODIES uploads
 *     (with KEY) declaring 256 MiB and sending 1.1 kB/s, just over the server's
 *     minimum rate; for SECONDS, then all closed.  Says how many it opened.
 *   peers halfclose PORT
 *     the request on stdin sent whole, then our side shut (shutdown(SHUT_WR));
 *     the answer copied to stdout until the server closes. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MAX_PEERS = 1000 };

static int connect_to(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Whether the server has closed fd (what it sent, a 408 or 503, dropped). */
static int closed(int fd)
{
    char buf[4096];
    ssize_t k;
    while ((k = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
        ;
    return k == 0;
}

/* One tick (0.1 s) of peer i: opened if it is not, then its bytes sent. */
static int tick(int *fd, int body, int t, const char *key, int port)
{
    char head[512];
    int opened = 0;
    if (*fd >= 0 && closed(*fd)) {
        close(*fd);
        *fd = -1;
    }
    if (*fd < 0 && (*fd = connect_to(port)) >= 0) {
        opened = 1;
        if (body)
            snprintf(head, sizeof head, "POST /inference HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 268435456\r\n\r\n", key);
        else
            snprintf(head, sizeof head, "GET /health HTTP/1.1\r\nHost: x\r\nX-Drip: ");
        send_all(*fd, head, strlen(head));
    }
    static const char zeros[110];
    if (*fd >= 0 && (body || t % 10 == 0) && send_all(*fd, body ? zeros : "a", body ? 110 : 1)) {
        close(*fd);
        *fd = -1;
    }
    return opened;
}

static int storm(int port, int drips, int bodies, int seconds, const char *key)
{
    int n = drips + bodies, fd[MAX_PEERS], opened[2] = {0, 0};
    if (n > MAX_PEERS)
        return 2;
    for (int i = 0; i < n; i++)
        fd[i] = -1;
    for (int t = 0; t < seconds * 10; t++) {
        for (int i = 0; i < n; i++)
            opened[i >= drips] += tick(&fd[i], i >= drips, t, key, port);
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    for (int i = 0; i < n; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    printf("dripping heads opened %d, slow bodies opened %d\n", opened[0], opened[1]);
    return 0;
}

static int halfclose(int port)
{
    char buf[65536];
    size_t k;
    int fd = connect_to(port);
    if (fd < 0)
        return 1;
    while ((k = fread(buf, 1, sizeof buf, stdin)) > 0)
        if (send_all(fd, buf, k))
            return 1;
    shutdown(fd, SHUT_WR);
    ssize_t got;
    while ((got = recv(fd, buf, sizeof buf, 0)) > 0)
        fwrite(buf, 1, (size_t)got, stdout);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc == 7 && !strcmp(argv[1], "storm"))
        return storm(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), argv[6]);
    if (argc == 3 && !strcmp(argv[1], "halfclose"))
        return halfclose(atoi(argv[2]));
    fprintf(stderr, "usage: peers storm PORT DRIPS BODIES SECONDS KEY | peers halfclose PORT\n");
    return 2;
}
