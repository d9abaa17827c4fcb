/* Hostile: forks without end (at most 200 tries here, so that a sandbox without its pids limit
 * does not take the host down). Every child sleeps; the parent reports how many forks
 * succeeded and how many were refused, holds them a second more, and exits (its pid namespace
 * then kills the rest). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    int forked = 0, refused = 0;
    for (int i = 0; i < 200; i++) {
        pid_t pid = fork();
        if (pid == 0) { sleep(60); _exit(0); }
        if (pid > 0) forked++; else refused++;
    }
    fprintf(stderr, "forked %d refused %d\n", forked, refused);
    sleep(1);
    return 0;
}
