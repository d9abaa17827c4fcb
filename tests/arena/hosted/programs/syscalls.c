/* Hostile: tries the kernel's ways out. ptrace on its own child, mount of a tmpfs, unshare of
 * a user namespace (and, in it, a mount namespace and a mount). Reports each to stderr; exit
 * status 1 if any was allowed. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static int report(const char *what, int result) {
    fprintf(stderr, "%s: %s\n", what, result == 0 ? "ALLOWED" : strerror(errno));
    return result == 0;
}

int main(void) {
    int allowed = 0;
    pid_t child = fork();
    if (child == 0) { pause(); _exit(0); }
    long traced = ptrace(PTRACE_ATTACH, child, 0, 0);
    allowed |= report("ptrace", traced == 0 ? 0 : -1);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    allowed |= report("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
    if (report("unshare user", unshare(CLONE_NEWUSER))) {
        allowed = 1;
        if (report("unshare mount", unshare(CLONE_NEWNS)))
            report("mount in it", mount("none", "/tmp", "tmpfs", 0, NULL));
    }
    return allowed;
}
