/* hark's stdout: what every command prints goes through cli_print, which
 * remembers why stdout first failed, so that a transcript that could not be
 * written (a full disk) makes the exit status and the last word at exit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Why stdout first failed, 0 while it has not; set under stdout's lock, as
 * batch workers print from their threads. */
static int stdout_errno;

void cli_flush_stdout(void)
{
    flockfile(stdout);
    if (fflush(stdout) != 0 && !stdout_errno)
        stdout_errno = errno;
    funlockfile(stdout);
}

void cli_print(const char *s)
{
    flockfile(stdout);
    if (fputs(s, stdout) == EOF && !stdout_errno)
        stdout_errno = errno;
    funlockfile(stdout);
}

void cli_check_stdout(void)
{
    int failed = ferror(stdout);
    errno = 0;
    if (fclose(stdout) != 0 && !stdout_errno)
        stdout_errno = errno;
    if (stdout_errno)
        fprintf(stderr, "hark: stdout: cannot write (%s)\n", strerror(stdout_errno));
    else if (failed) /* by a printf, whose errno is gone */
        fprintf(stderr, "hark: stdout: cannot write\n");
    if (failed || stdout_errno)
        _exit(1);
}
