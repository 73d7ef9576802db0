/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Make the driver refuse chosen ioctls in this process, as a driver that
 * fails them would: a seccomp filter on every thread (TSYNC). For the
 * library's answers to a refusal it cannot see coming (a wait that keeps
 * failing, REMOVE refused). Header only; x86-64 (other architectures
 * pass every call).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_TESTS_COMMON_SECCOMP_H
#define D3DQ_TESTS_COMMON_SECCOMP_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SECCOMP_REFUSE_MAX 8

/*
 * Every ioctl request of @reqs (@n, at most SECCOMP_REFUSE_MAX) fails
 * with @err from now on, in every thread of the process. 0 or -errno.
 */
static inline int seccomp_refuse_ioctls(const unsigned long *reqs,
					unsigned int n, int err)
{
	struct sock_filter f[SECCOMP_REFUSE_MAX + 8];
	struct sock_fprog prog = { .filter = f };
	unsigned int i, k = 0;

	if (!n || n > SECCOMP_REFUSE_MAX)
		return -EINVAL;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, nr));
	/* Not an ioctl: over the request's load, its tests and the errno. */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			__NR_ioctl, 0, (uint8_t)(n + 2));
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, args[1]));
	/* A match jumps to the errno; the last miss over it. */
	for (i = 0; i < n; i++)
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
				(uint32_t)reqs[i], (uint8_t)(n - 1 - i),
				i == n - 1 ? 1 : 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)k;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		    SECCOMP_FILTER_FLAG_TSYNC, &prog))
		return -errno;
	return 0;
}

#endif /* D3DQ_TESTS_COMMON_SECCOMP_H */
