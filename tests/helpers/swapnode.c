// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * swapnode.so - LD_PRELOAD race injection for loopctl's device checks:
 * the first open() of one path renames another file over it just before
 * the real open, as if the node were replaced between the stat() that
 * checked it and the open() that uses it. Deterministic, no timing:
 *
 *   NBIO_SWAP_PATH  the path loopctl checks, then opens
 *   NBIO_SWAP_WITH  the file renamed over it at that open
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

typedef int (*open_fn)(const char *, int, ...);

static void maybe_swap(const char *path)
{
	const char *target = getenv("NBIO_SWAP_PATH");
	const char *with = getenv("NBIO_SWAP_WITH");
	static int done;

	if (done || !target || !with || strcmp(path, target))
		return;
	done = 1;
	rename(with, target);
}

static int do_open(const char *name, const char *path, int flags,
		   va_list ap)
{
	open_fn real = (open_fn)dlsym(RTLD_NEXT, name);
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;

	maybe_swap(path);
	return real(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = do_open("open", path, flags, ap);
	va_end(ap);
	return fd;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = do_open("open64", path, flags, ap);
	va_end(ap);
	return fd;
}
