/* Scratch things for a unit test file: a directory, a file read back
 * whole, a free loopback port. scratch_dir() makes /tmp/<prefix>-XXXXXX once per process (exits 1 if it
 * cannot) and removes it, with everything in it, at exit. */
#ifndef STEWARD_TEST_SCRATCH_DIR_H
#define STEWARD_TEST_SCRATCH_DIR_H

#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/base/base.h"

static char scratch_path[64];

static int scratch_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void scratch_remove(void)
{
	if (scratch_path[0])
		nftw(scratch_path, scratch_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static SW_UNUSED const char *scratch_dir(const char *prefix)
{
	if (scratch_path[0])
		return scratch_path;
	snprintf(scratch_path, sizeof(scratch_path), "/tmp/%s-XXXXXX", prefix);
	if (!mkdtemp(scratch_path)) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(scratch_remove);
	return scratch_path;
}

/* The whole file at path, NUL-terminated (the caller frees), its length in
 * *ret_len (may be NULL); NULL when it cannot be read. */
static SW_UNUSED char *scratch_read(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	size_t got = b ? fread(b, 1, (size_t)n, f) : 0;
	if (b)
		b[got] = '\0';
	fclose(f);
	if (ret_len)
		*ret_len = got;
	return b;
}

/* The file at path into out, at most cap - 1 bytes, NUL-terminated; false
 * when it cannot be opened. */
static SW_UNUSED bool scratch_read_into(const char *path, char *out, size_t cap)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		return false;
	size_t n = fread(out, 1, cap - 1, fp);
	out[n] = '\0';
	fclose(fp);
	return true;
}

/* A loopback TCP port nothing listens on now (the kernel's choice). */
static SW_UNUSED int scratch_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		perror("a free port");
		exit(1);
	}
	close(fd);
	return ntohs(a.sin_port);
}

#endif
