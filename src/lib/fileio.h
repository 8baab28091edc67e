/*
 * fileio: the small file helpers several modules need: a whole buffer
 * written (or sent on a socket) despite short writes and EINTR, and a directory
 * fsynced so a rename or a new file in it survives a crash.
 */
#ifndef LIB_FILEIO_H
#define LIB_FILEIO_H

#include <stddef.h>

/* Writes all len bytes of data to fd; 0, or -1 (errno set). */
int fileio_write_all(int fd, const void *data, size_t len);
/* The same on a socket, with send(MSG_NOSIGNAL): a peer gone is -1
 * (EPIPE), never a SIGPIPE. */
int fileio_send_all(int fd, const void *data, size_t len);
/* fsyncs the directory dir; 0, or -1 (errno set). */
int fileio_sync_dir(const char *dir);

#endif
