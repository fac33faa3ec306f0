#ifndef CFILES_H
#define CFILES_H

/* renameat2(2) with RENAME_NOREPLACE, relative to the working directory: moves `from` to
 * `to` only if nothing is at `to` (EEXIST otherwise), in one step. EINVAL or ENOSYS where
 * the file system cannot do it. Returns 0, or -1 with errno set. */
int csystem_rename_noreplace(const char *from, const char *to);

/* sync_file_range(2): `wait` 0 starts writing back the range and returns at once; 1 also
 * waits until the range is on the disk (its data, not the file's metadata). Returns 0, or
 * -1 with errno set. */
int csystem_write_back(int fd, long long offset, long long length, int wait);

#endif
