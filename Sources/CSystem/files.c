#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include "CFiles.h"

int csystem_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

int csystem_write_back(int fd, long long offset, long long length, int wait) {
    unsigned int flags = wait ? SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER
                              : SYNC_FILE_RANGE_WRITE;
    return sync_file_range(fd, (off_t)offset, (off_t)length, flags);
}
