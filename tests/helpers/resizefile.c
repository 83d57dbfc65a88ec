// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * resizefile.so - LD_PRELOAD hook that grows or shrinks a file at a known
 * point of a run, for the tests of a file resized while nbcat reads it.
 * No timing is involved: the resize happens inside the write() to
 * standard output that brings the bytes written there to at least
 * NBIO_RESIZE_AFTER, after the data was written and before the program
 * reads anything more (nbcat --cached-only has no other thread). Once.
 *
 *   NBIO_RESIZE_FD     a descriptor of the file open for writing,
 *                      inherited from the test (so the program itself
 *                      may run as a user who cannot write the file)
 *   NBIO_RESIZE_AFTER  bytes written to standard output before it
 *   NBIO_RESIZE_TO     the new size in bytes
 *   NBIO_RESIZE_HOW    truncate: ftruncate() (growing leaves a hole);
 *                      write: pwrite() bytes from the old end up to the
 *                      new size (they stay in the page cache, dirty);
 *                      write-evict: the same, then fdatasync() and
 *                      POSIX_FADV_DONTNEED, so they are not cached
 *
 * The bytes written are (offset % 251) + 1, so tests can compare the
 * output with the file as it is afterwards. A failed resize kills the
 * program with status 99, so a test cannot pass without its resize.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESIZE_EXIT_FAILED	99

typedef ssize_t (*write_fn)(int, const void *, size_t);

static unsigned long long written;
static int done;

static void die(const char *what)
{
	perror(what);
	_exit(RESIZE_EXIT_FAILED);
}

static unsigned long long env_num(const char *name)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		die(name);
	v = strtoull(s, &end, 10);
	if (*end)
		die(name);
	return v;
}

static void fill(int fd, unsigned long long from, unsigned long long to)
{
	unsigned char buf[65536];
	unsigned long long off;
	size_t i, n;

	for (off = from; off < to; off += n) {
		n = to - off < sizeof(buf) ? (size_t)(to - off) : sizeof(buf);
		for (i = 0; i < n; i++)
			buf[i] = (unsigned char)((off + i) % 251 + 1);
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			die("resizefile: pwrite");
	}
}

static void resize(void)
{
	int fd = (int)env_num("NBIO_RESIZE_FD");
	unsigned long long to = env_num("NBIO_RESIZE_TO");
	const char *how = getenv("NBIO_RESIZE_HOW");
	struct stat st;

	if (!how || fstat(fd, &st) < 0)
		die("resizefile: NBIO_RESIZE_HOW or NBIO_RESIZE_FD");
	if (!strcmp(how, "truncate")) {
		if (ftruncate(fd, (off_t)to) < 0)
			die("resizefile: ftruncate");
		return;
	}
	if (strcmp(how, "write") && strcmp(how, "write-evict"))
		die("resizefile: NBIO_RESIZE_HOW");
	if ((unsigned long long)st.st_size >= to)
		die("resizefile: write would not grow the file");
	fill(fd, (unsigned long long)st.st_size, to);
	if (!strcmp(how, "write-evict") &&
	    (fdatasync(fd) < 0 ||
	     posix_fadvise(fd, st.st_size, 0, POSIX_FADV_DONTNEED)))
		die("resizefile: evict");
}

ssize_t write(int fd, const void *buf, size_t len)
{
	write_fn real = (write_fn)dlsym(RTLD_NEXT, "write");
	ssize_t n = real(fd, buf, len);

	if (fd != STDOUT_FILENO || n <= 0 || done)
		return n;
	written += (unsigned long long)n;
	if (written >= env_num("NBIO_RESIZE_AFTER")) {
		done = 1;
		resize();
	}
	return n;
}
