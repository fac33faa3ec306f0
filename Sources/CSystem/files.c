#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include "CFiles.h"

int csystem_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
