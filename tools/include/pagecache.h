/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Page-cache reader: read a file chunk by chunk with preadv2(RWF_NOWAIT)
 * and say whether the page cache held the chunk (hit), part of it
 * (partial), none of it (miss), or whether the file cannot be read that
 * way at all (unsupported). One pc_reader context per open file; the
 * caller owns the file descriptor and every message.
 */
#ifndef NBIO_PAGECACHE_H
#define NBIO_PAGECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What a non-blocking read found. */
enum pc_outcome {
	PC_HIT = 0,		/* the whole chunk, or all bytes to EOF */
	PC_PARTIAL,		/* some bytes, then an uncached page */
	PC_MISS,		/* nothing cached at the offset */
	PC_UNSUPPORTED,		/* no RWF_NOWAIT here (EOPNOTSUPP...) */
	PC_EOF,			/* the offset is at or past EOF */
};

enum {
	PC_FL_SEEKABLE	  = (1 << 0),	/* regular file or blkdev */
	PC_FL_BLKDEV	  = (1 << 1),	/* size from BLKGETSIZE64 */
	PC_FL_PROBED	  = (1 << 2),	/* RWF_NOWAIT was tried */
	PC_FL_UNSUPPORTED = (1 << 3),	/* RWF_NOWAIT refused */
};

/*
 * How the page-cache residency of a file's pages can be learned without
 * changing it (pc_residency_init() decides, once per reader).
 */
enum pc_residency {
	PC_RES_UNKNOWN = 0,	/* pc_residency_init() not called yet */
	PC_RES_CACHESTAT,	/* cachestat(2): 6.5+, permitted for us */
	PC_RES_MINCORE,		/* mincore(2) of a PROT_READ mapping that
				 * tells us the truth (owner or writer) */
	PC_RES_PROBE,		/* only RWF_NOWAIT reads, and a miss starts
				 * no I/O on this kernel (before 6.12) */
	PC_RES_NONE,		/* only reads that would load the file */
};

struct pc_reader {
	int fd;			/* the caller opens and closes it */
	unsigned int flags;	/* PC_FL_* */
	mode_t type;		/* S_IFREG, S_IFBLK, S_IFIFO... */
	uint64_t size;		/* bytes at the last stat (0: stream) */
	dev_t dev;		/* st_dev and st_ino, to compare files */
	ino_t ino;
	uid_t uid;		/* st_uid: owner, for mincore's rule */
	enum pc_residency res;	/* PC_RES_*, from pc_residency_init() */
};

/* pc_reader_is_file - the reader's file is the regular file @dev, @ino. */
static inline bool pc_reader_is_file(const struct pc_reader *rd, dev_t dev,
				     ino_t ino)
{
	return rd->type == S_IFREG && rd->dev == dev && rd->ino == ino;
}

/* The result of one read. */
struct pc_result {
	enum pc_outcome outcome;
	size_t bytes;		/* bytes now in the buffer */
	uint64_t ns;		/* duration of the system call(s) */
	bool eof;		/* a read returned 0: end of file */
};

/*
 * pc_reader_init - set up a reader over an open file descriptor
 * @rd: context to fill
 * @fd: file descriptor open for reading
 *
 * Stats @fd and records its type and size. Directories are refused.
 * Returns 0, -EISDIR for a directory, or -errno from fstat()/ioctl().
 */
int pc_reader_init(struct pc_reader *rd, int fd);

/* pc_reader_deinit - forget the file; does not close the descriptor. */
void pc_reader_deinit(struct pc_reader *rd);

/* True for regular files and block devices (pread/preadv2 work). */
static inline bool pc_reader_is_seekable(const struct pc_reader *rd)
{
	return rd->flags & PC_FL_SEEKABLE;
}

/* True once a RWF_NOWAIT read was refused for this file. */
static inline bool pc_reader_is_unsupported(const struct pc_reader *rd)
{
	return rd->flags & PC_FL_UNSUPPORTED;
}

/* Size in bytes as of the last pc_reader_refresh() (0 for streams). */
static inline uint64_t pc_reader_get_size(const struct pc_reader *rd)
{
	return rd->size;
}

/*
 * pc_reader_refresh - stat the file again (it may have grown or shrunk)
 * Returns 0 or -errno; the new size is pc_reader_get_size().
 */
int pc_reader_refresh(struct pc_reader *rd);

/*
 * pc_read_nowait - read one chunk only if the page cache holds it
 * @rd: reader of a seekable file
 * @buf: destination, @len bytes
 * @len: bytes wanted (> 0)
 * @off: file offset
 * @res: outcome, bytes read and duration
 *
 * One preadv2(RWF_NOWAIT), retried on EINTR. Never blocks on I/O and,
 * on kernels where RWF_NOWAIT implies IOCB_NOIO (5.9 to 6.1 at least),
 * never starts any. The size is read again (fstat()) after a short
 * read, after a read that reaches the size known so far, and after an
 * EAGAIN at or past it, so pc_reader_get_size() follows a file that
 * grows or shrinks while it is read. A return of 0 (also the 5.9/5.10
 * bug) is PC_EOF only if the file really ends at @off, a PC_MISS
 * otherwise. A short read that ends before EOF is PC_PARTIAL.
 *
 * Returns 0 with @res filled (EAGAIN and EOPNOTSUPP are outcomes, not
 * errors), or -errno for real read errors (-EIO, ...).
 */
int pc_read_nowait(struct pc_reader *rd, void *buf, size_t len,
		   uint64_t off, struct pc_result *res);

/*
 * pc_page_cached - is the page holding byte @off of @fd's file in the
 * page cache? One RWF_NOWAIT read of that byte: nothing is loaded on
 * 6.1; on kernels that read ahead on a RWF_NOWAIT miss (6.12+,
 * pc_nowait_reads_ahead()) readahead starts there. False at or past the
 * end of the file and where RWF_NOWAIT is refused.
 */
bool pc_page_cached(int fd, uint64_t off);

/*
 * pc_read_full - blocking pread() until @len bytes or end of file
 * @fd: seekable file descriptor
 * @buf, @len, @off: as for pread()
 * @res: bytes read, duration; eof set when a read returned 0. The
 *       outcome is left as the caller set it.
 *
 * Safe to call from several threads on the same descriptor.
 * Returns 0 or -errno (bytes read before the error are in @res->bytes).
 */
int pc_read_full(int fd, void *buf, size_t len, uint64_t off,
		 struct pc_result *res);

/*
 * pc_read_stream - one read() on a pipe, terminal or socket, EINTR
 * retried. @res->bytes is 0 at end of input (and @res->eof is set).
 * Returns 0 or -errno.
 */
int pc_read_stream(int fd, void *buf, size_t len, struct pc_result *res);

/*
 * pc_nowait_reads_ahead - does a RWF_NOWAIT buffered read that misses the
 * page cache start readahead on the running kernel?
 *
 * 6.1: no, RWF_NOWAIT implies IOCB_NOIO (kiocb_set_rw_flags(); since
 * 5.9 by the kernel's history, "fs: RWF_NOWAIT should imply IOCB_NOIO").
 * 6.18: yes, the miss still fails with EAGAIN but reads ahead (measured);
 * the kernel's history puts the change in 6.12 ("mm: allow read-ahead
 * with IOCB_NOWAIT set"; not checked against that source). Decided by
 * the uname(2) release, so a vendor kernel with a backport is misjudged.
 * A release that does not parse: true (the careful answer).
 */
bool pc_nowait_reads_ahead(void);

/*
 * pc_residency_init - choose how to learn which pages of @rd's file are
 * cached without adding any. First a RWF_NOWAIT read of one byte at the
 * end of the file, which reads nothing but tells whether the file can be
 * read that way (if not: PC_RES_NONE and pc_reader_is_unsupported()).
 * Then cachestat(2) if the kernel has it and lets
 * us use it on this file; else mincore(2) if it tells this caller the
 * truth (since 5.0 it reports every page resident to a caller that
 * neither owns the file nor may write it); else RWF_NOWAIT probes if a
 * miss starts no I/O here; else nothing.
 *
 * Returns 0 (the choice is pc_reader_get_residency()), or -errno of an
 * unexpected failure. Changes nothing in the page cache.
 */
int pc_residency_init(struct pc_reader *rd);

/* The method pc_residency_init() chose. */
static inline enum pc_residency
pc_reader_get_residency(const struct pc_reader *rd)
{
	return rd->res;
}

/*
 * pc_resident - which pages of [@off, @off + @len) the page cache holds
 * @rd: reader after pc_residency_init() chose PC_RES_CACHESTAT or
 *      PC_RES_MINCORE
 * @off: byte offset (rounded down to a page)
 * @len: bytes (> 0; the last page rounded up)
 * @vec: one byte per page from the page holding @off: 1 resident, 0 not
 *
 * Never reads, faults in or evicts a page of the file. Returns 0, or
 * -EOPNOTSUPP when the reader's method cannot answer, or -errno.
 */
int pc_resident(struct pc_reader *rd, uint64_t off, uint64_t len,
		unsigned char *vec);

/*
 * pc_uncached_run - how far from @off no page is cached
 * @rd: reader after pc_residency_init() chose PC_RES_CACHESTAT or
 *      PC_RES_MINCORE
 * @off: byte offset (rounded down to a page)
 * @max: bytes from @off to look at, at most (> 0)
 * @run: out: bytes from @off, up to @max, before the first cached page
 *       (0 when the page holding @off is cached)
 *
 * For a caller that skips what is not cached: one answer for a whole
 * uncached stretch (a sparse or evicted file of any size) instead of one
 * per chunk. cachestat() is asked about ranges doubling in size, then
 * bisected to the first cached page: O(log n) calls. mincore() is asked
 * window by window (PC_MINCORE_WINDOW pages). Never reads, faults in or
 * evicts a page. Returns 0, -EOPNOTSUPP when the reader's method cannot
 * answer, or -errno.
 */
int pc_uncached_run(struct pc_reader *rd, uint64_t off, uint64_t max,
		    uint64_t *run);

/*
 * pc_cached_bytes - how many bytes of the reader's file (its size as of
 * the last pc_reader_refresh()) the page cache holds: cachestat(2) where
 * the kernel answers it for this file, else mincore(2) where it tells
 * this caller the truth (pc_residency_init()'s choice, without its
 * RWF_NOWAIT probe, which a count does not need). A cached last page
 * counts only the file's bytes in it. Never reads, faults in or evicts
 * a page. Returns 0, -EOPNOTSUPP when neither can answer for this
 * caller, or -errno.
 */
int pc_cached_bytes(struct pc_reader *rd, uint64_t *cached);

/*
 * pc_read_resident - copy bytes that pc_resident() found cached, adding
 * no page to the page cache
 * @rd, @buf, @len, @off, @res: as for pc_read_nowait()
 *
 * Where a RWF_NOWAIT miss starts no I/O (before 6.12), one
 * pc_read_nowait(); if it stops short (a page evicted since, or, in 6.1,
 * a cached folio marked PG_readahead, which ends an IOCB_NOIO read), the
 * rest as below. Elsewhere RWF_NOWAIT would start readahead, both on
 * a miss and on a cached page marked PG_readahead (seen on 6.18: reading
 * only the cached first 22 MiB of a file loaded all 64 MiB), so the
 * bytes are copied from a MADV_RANDOM mapping, each run of pages checked
 * with pc_resident() just before: the copy stops short at a page evicted
 * since (PC_PARTIAL or PC_MISS). A page evicted between that check and
 * the copy is read back from disk: the one page, blocking (the window
 * is one memcpy). A file truncated meanwhile gives a short PC_HIT.
 *
 * Returns 0 with @res filled, -EOPNOTSUPP when the reader has no
 * residency method, or -errno.
 */
int pc_read_resident(struct pc_reader *rd, void *buf, size_t len,
		     uint64_t off, struct pc_result *res);

/* Monotonic clock in nanoseconds. */
uint64_t pc_now_ns(void);

#endif /* NBIO_PAGECACHE_H */
