/*
 * The least CPU one IO can cost on a socket-carried soft RDMA device, whatever the code around
 * it: RTRS carries an IO as two messages (the request's SEND or WRITE_WITH_IMM, the answer's
 * WRITE_WITH_IMM), and rdma-soft carries each as one frame on a loopback TCP connection, received
 * by a thread that sleeps in epoll_wait until it arrives. This does exactly that and nothing
 * else, in C: write the request, the peer thread wakes, reads it whole, writes the answer, the
 * first thread wakes and reads it whole. CPU per round trip (both threads, getrusage) is the
 * floor the transport adds to every IO at rates where messages arrive one at a time (the rbd
 * backend's: each IO waits about a millisecond for the OSD).
 *
 *   transport-floor REQUEST_BYTES ANSWER_BYTES ROUND_TRIPS
 *
 * prints one JSON line: cpuUsPerIo, wallUsPerIo, wakeUpsPerIo (epoll_wait returns).
 * Run it pinned to one CPU (taskset -c 0) for the optimistic floor: no wake-up crosses CPUs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int request_bytes, answer_bytes;
static long rounds;
static int server_fd;
static long server_wakeups;

static void die(const char *what) {
    perror(what);
    exit(1);
}

static int epoll_on(int fd) {
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        die("epoll");
    return ep;
}

/* Sleep until the message is there and read it whole; returns the wake-ups it took. */
static long receive(int ep, int fd, char *buf, int bytes) {
    struct epoll_event ev;
    long wakeups = 0;
    for (int got = 0; got < bytes;) {
        if (epoll_wait(ep, &ev, 1, -1) < 0)
            die("epoll_wait");
        wakeups++;
        ssize_t n = read(fd, buf + got, bytes - got);
        if (n <= 0)
            die("read");
        got += n;
    }
    return wakeups;
}

static void send_all(int fd, const char *buf, int bytes) {
    for (int sent = 0; sent < bytes;) {
        ssize_t n = write(fd, buf + sent, bytes - sent);
        if (n <= 0)
            die("write");
        sent += n;
    }
}

static void *server(void *unused) {
    char *buf = calloc(1, request_bytes > answer_bytes ? request_bytes : answer_bytes);
    int ep = epoll_on(server_fd);
    for (long i = 0; i < rounds; i++) {
        server_wakeups += receive(ep, server_fd, buf, request_bytes);
        send_all(server_fd, buf, answer_bytes);
    }
    free(buf);
    return unused;
}

static double seconds(struct timeval t) {
    return t.tv_sec + t.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s REQUEST_BYTES ANSWER_BYTES ROUND_TRIPS\n", argv[0]);
        return 2;
    }
    request_bytes = atoi(argv[1]);
    answer_bytes = atoi(argv[2]);
    rounds = atol(argv[3]);
    if (request_bytes <= 0 || answer_bytes <= 0 || rounds <= 0) {
        fprintf(stderr, "sizes and round trips must be positive\n");
        return 2;
    }
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || c < 0 || bind(l, (void *)&a, sizeof a) < 0 || listen(l, 1) < 0
            || getsockname(l, (void *)&a, &al) < 0 || connect(c, (void *)&a, sizeof a) < 0)
        die("loopback connection");
    if ((server_fd = accept(l, NULL, NULL)) < 0)
        die("accept");
    /* as rdma-soft's sockets: no Nagle delay on a frame */
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(server_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

    pthread_t t;
    if (pthread_create(&t, NULL, server, NULL))
        die("pthread_create");
    char *buf = calloc(1, request_bytes > answer_bytes ? request_bytes : answer_bytes);
    int ep = epoll_on(c);
    long client_wakeups = 0;
    struct rusage r0, r1;
    struct timespec w0, w1;
    getrusage(RUSAGE_SELF, &r0);
    clock_gettime(CLOCK_MONOTONIC, &w0);
    for (long i = 0; i < rounds; i++) {
        send_all(c, buf, request_bytes);
        client_wakeups += receive(ep, c, buf, answer_bytes);
    }
    clock_gettime(CLOCK_MONOTONIC, &w1);
    pthread_join(t, NULL);
    getrusage(RUSAGE_SELF, &r1);
    double cpu = seconds(r1.ru_utime) - seconds(r0.ru_utime) + seconds(r1.ru_stime) - seconds(r0.ru_stime);
    double wall = w1.tv_sec - w0.tv_sec + (w1.tv_nsec - w0.tv_nsec) / 1e9;
    printf("{\"requestBytes\":%d,\"answerBytes\":%d,\"roundTrips\":%ld,\"cpuUsPerIo\":%.2f,"
           "\"wallUsPerIo\":%.2f,\"wakeUpsPerIo\":%.2f}\n",
           request_bytes, answer_bytes, rounds, cpu * 1e6 / rounds, wall * 1e6 / rounds,
           (double)(client_wakeups + server_wakeups) / rounds);
    return 0;
}
