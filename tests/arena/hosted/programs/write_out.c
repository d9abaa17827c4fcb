/* Hostile: writes outside its folders. Each PATH argument (and its own code folder /bot, the
 * system, the root) gets a file created in it; reports each to stderr; exit status 1 if any
 * write went through. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int try(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/hostile-was-here", dir);
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0) { fprintf(stderr, "%s: %s\n", dir, strerror(errno)); return 0; }
    close(fd);
    fprintf(stderr, "WROTE %s\n", path);
    return 1;
}

int main(int argc, char **argv) {
    const char *mine[] = {"/bot", "/usr", "/", "/etc", "/dev", "/proc/sys/kernel"};
    int wrote = 0;
    for (unsigned i = 0; i < sizeof mine / sizeof *mine; i++) wrote |= try(mine[i]);
    for (int i = 1; i < argc; i++) wrote |= try(argv[i]);
    int ok = try("/data") && try("/tmp");  /* its own folders: these must work */
    return wrote ? 1 : ok ? 0 : 2;
}
