// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * noiouring - run a command where io_uring_setup(2) fails with EPERM, as
 * it does under kernel.io_uring_disabled=2 (6.6+) or a container's
 * seccomp profile, without root and without changing the machine: a
 * seccomp filter of this process (PR_SET_NO_NEW_PRIVS lets an
 * unprivileged one install it), inherited across execvp().
 *
 *   noiouring COMMAND [ARG]...
 *
 * Exit status: the command's; 1 if the filter cannot be installed or the
 * command not run; 77 (probe.h's skip) when the kernel has no seccomp
 * filters, so the test skips rather than fails.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "c.h"
#include "probe.h"

/* 5.1; older headers lack the number, which is 425 on every architecture */
#ifndef __NR_io_uring_setup
# define __NR_io_uring_setup	425
#endif

#if defined(__x86_64__)
# define NU_AUDIT_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
# define NU_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#endif

static int install_filter(void)
{
	struct sock_filter insns[] = {
#ifdef NU_AUDIT_ARCH
		/* another ABI (x32, i386) would number syscalls otherwise */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NU_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = ARRAY_SIZE(insns),
		.filter = insns,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	/* seccomp(2) has no glibc wrapper; prctl's form is the same filter */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2) {
		fputs("Usage: noiouring COMMAND [ARG]...\n", stderr);
		return PROBE_EXIT_FAIL;
	}
	rc = install_filter();
	if (rc == -EINVAL) {
		fprintf(stderr, "noiouring: no seccomp filters in this kernel\n");
		return PROBE_EXIT_SKIP;
	}
	if (rc) {
		fprintf(stderr, "noiouring: cannot install the filter: %s\n",
			strerror(-rc));
		return PROBE_EXIT_FAIL;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "noiouring: %s: %s\n", argv[1], strerror(errno));
	return PROBE_EXIT_FAIL;
}
