/* Hostile: looks for what is not its own. Each PATH argument (another bot's folder, a token's
 * file, /etc/shadow) is read or listed; its environment and every /proc/PID/environ and
 * cmdline it can read are searched for the word given backwards with -w (a token), so that
 * its own command line does not hold it.
 * Reports each find to stderr; exit status 1 if it found anything. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static int has(const char *path, const char *word) {
    char buf[65536];
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    for (ssize_t i = 0; i < n; i++) if (!buf[i]) buf[i] = ' ';
    buf[n] = 0;
    return strstr(buf, word) != NULL;
}

int main(int argc, char **argv) {
    int found = 0;
    const char *word = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-w") && i + 1 < argc) {
            size_t n = strlen(argv[++i]);
            char *w = malloc(n + 1);
            for (size_t k = 0; k < n; k++) w[k] = argv[i][n - 1 - k];
            w[n] = 0;
            word = w;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) if (e->d_name[0] != '.') {
                fprintf(stderr, "FOUND %s/%s\n", argv[i], e->d_name);
                found = 1;
            }
            closedir(d);
            continue;
        }
        char buf[256];
        int fd = open(argv[i], O_RDONLY);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
        if (n >= 0) { fprintf(stderr, "FOUND %s (%zd bytes)\n", argv[i], n); found = 1; }
        else fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
        if (fd >= 0) close(fd);
    }
    if (word) {
        for (char **e = environ; *e; e++)
            if (strstr(*e, word)) { fprintf(stderr, "FOUND %s in its environment\n", word); found = 1; }
        DIR *proc = opendir("/proc");
        struct dirent *e;
        int seen = 0;
        while (proc && (e = readdir(proc))) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
            seen++;
            const char *files[] = {"environ", "cmdline"};
            for (int f = 0; f < 2; f++) {
                char path[300];
                snprintf(path, sizeof path, "/proc/%s/%s", e->d_name, files[f]);
                if (has(path, word)) { fprintf(stderr, "FOUND %s in %s\n", word, path); found = 1; }
            }
        }
        fprintf(stderr, "searched %d processes for %s\n", seen, word);
    }
    return found;
}
