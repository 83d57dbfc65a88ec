/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small C helpers every file of the project may use (util-linux keeps
 * the same in include/c.h).
 */
#ifndef NBIO_C_H
#define NBIO_C_H

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#endif /* NBIO_C_H */
