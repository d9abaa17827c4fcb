/* Hostile: tries the network. A TCP connection to each HOST:PORT argument (the referee's
 * address, the host's own address) and a UDP datagram to a public resolver. Each attempt's
 * outcome goes to stderr; exit status 1 if any got through. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int tcp(const char *host, int port) {
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, host, &to.sin_addr);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) { fprintf(stderr, "socket: %s\n", strerror(errno)); return 0; }
    int ok = connect(s, (struct sockaddr *)&to, sizeof to) == 0;
    fprintf(stderr, "connect %s:%d: %s\n", host, port, ok ? "CONNECTED" : strerror(errno));
    close(s);
    return ok;
}

int main(int argc, char **argv) {
    int got = 0;
    for (int i = 1; i + 1 < argc; i += 2) got |= tcp(argv[i], atoi(argv[i + 1]));
    struct sockaddr_in dns = {.sin_family = AF_INET, .sin_port = htons(53)};
    inet_pton(AF_INET, "1.1.1.1", &dns.sin_addr);
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    int sent = u >= 0 && sendto(u, "x", 1, 0, (struct sockaddr *)&dns, sizeof dns) == 1;
    fprintf(stderr, "udp 1.1.1.1:53: %s\n", sent ? "SENT" : strerror(errno));
    return got || sent;
}
