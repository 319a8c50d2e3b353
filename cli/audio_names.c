/* Which files a directory walk takes (hark's batches, hark test's directories):
 * audio by its file name's extension. */
#include <string.h>
#include <strings.h>

#include "cli.h"

int cli_is_audio_name(const char *name)
{
    static const char *const ext[] = {"wav", "wave", "flac", "ogg", "oga", "opus", "mp3", "aiff",
                                      "aif", "aifc", "au", "snd", "caf", "w64", "rf64",
                                      /* and what hark reads through ffmpeg */
                                      "m4a", "mp4", "aac", "webm", "wma", "amr", "mka", "mkv",
                                      "mov", "avi", "3gp", "ac3"};
    const char *base = strrchr(name, '/'), *dot;
    base = base ? base + 1 : name;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        return 0;
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (strcasecmp(dot + 1, ext[i]) == 0)
            return 1;
    return 0;
}
