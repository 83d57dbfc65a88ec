/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * String helpers shared by the CLIs: sizes with binary suffixes and
 * unsigned integers, parsed strictly (no sign, no trailing junk), sizes
 * and durations printed for people, text made valid UTF-8 for JSON, and
 * a small file (sysfs, a record under /run) read as one string.
 */
#ifndef NBIO_STRUTILS_H
#define NBIO_STRUTILS_H

#include <stddef.h>
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

/*
 * utf8_escape_dup - a copy of @str fit for JSON, whose strings must be
 * valid UTF-8: every byte that is not part of a valid UTF-8 sequence
 * (stray continuation bytes, overlong forms, surrogates, past U+10FFFF)
 * becomes the four characters \xNN. Valid text is copied unchanged.
 *
 * Returns a string to free(), or NULL with errno ENOMEM.
 */
char *utf8_escape_dup(const char *str);

/* Room for any string size_to_human() or ns_to_human() writes. */
#define HUMAN_LEN 16

/*
 * size_to_human - @bytes as lsblk prints sizes: "512B", "64M", "1.5G"
 * (powers of 1024, one decimal below 10 unless it is 0).
 * @buf: at least HUMAN_LEN bytes
 *
 * Returns @buf.
 */
char *size_to_human(char *buf, uint64_t bytes);

/*
 * ns_to_human - a duration in nanoseconds as "850ns", "8.4us", "12ms" or
 * "3.5s" (powers of 1000, decimals as size_to_human()).
 * @buf: at least HUMAN_LEN bytes
 *
 * Returns @buf.
 */
char *ns_to_human(char *buf, uint64_t ns);

/*
 * ratio_to_human - @part / @whole as a percentage with one decimal,
 * "99.5%", rounded down: only @part == @whole prints "100.0%" (20 MiB
 * less one page is 99.9%, not 100.0%). Integer arithmetic, so the
 * locale's decimal point plays no part.
 * @buf: at least HUMAN_LEN bytes; @whole > 0, @part <= @whole
 *
 * Returns @buf.
 */
char *ratio_to_human(char *buf, uint64_t part, uint64_t whole);

/*
 * ratio_to_exact - @part / @whole from 0 to 1 with six decimals,
 * "0.999805", rounded down like ratio_to_human(): "1.000000" only when
 * @part == @whole. For --bytes tables and JSON.
 * @buf: at least HUMAN_LEN bytes; @whole > 0, @part <= @whole
 *
 * Returns @buf.
 */
char *ratio_to_exact(char *buf, uint64_t part, uint64_t whole);

/*
 * read_file_str - read a small file (up to @len - 1 bytes) into @buf,
 * terminated, trailing newlines dropped. Returns 0 or -errno (@buf then
 * holds what was read before the error).
 */
int read_file_str(const char *path, char *buf, size_t len);

#endif /* NBIO_STRUTILS_H */
