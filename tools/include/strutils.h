/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * String helpers shared by the CLIs: sizes with binary suffixes and
 * unsigned integers, parsed strictly (no sign, no trailing junk).
 */
#ifndef NBIO_STRUTILS_H
#define NBIO_STRUTILS_H

#include <stdint.h>

/*
 * strtosize - parse "4096", "128K", "128KiB", "1M", "2G", "1T" (powers of
 * 1024; "KB", "MB", ... are powers of 1000, as in util-linux).
 * @str: text to parse
 * @res: where to store the number of bytes
 *
 * Returns 0, or -EINVAL for a malformed string, -ERANGE on overflow.
 */
int strtosize(const char *str, uint64_t *res);

/*
 * strtou64_strict - parse a decimal unsigned integer.
 * Returns 0, -EINVAL or -ERANGE as strtosize().
 */
int strtou64_strict(const char *str, uint64_t *res);

#endif /* NBIO_STRUTILS_H */
