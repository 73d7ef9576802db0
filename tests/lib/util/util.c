// SPDX-License-Identifier: GPL-2.0
/*
 * Shared helpers of the libd3dq tests.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

struct d3dq_device *util_open(void)
{
	struct d3dq_device *dev = NULL;
	int ret = d3dq_device_open(NULL, &dev);

	if (ret) {
		fprintf(stderr, "# no d3dq device: %s\n", strerror(-ret));
		return NULL;
	}
	return dev;
}

struct d3dq_queue *util_queue(struct d3dq_device *dev)
{
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;
	struct d3dq_queue *q = NULL;

	if (d3dq_queue_create(dev, &desc, &q))
		return NULL;
	return q;
}

int util_env_open(struct util_env *e, uint64_t buf_size, uint64_t f_value,
		  uint32_t f_flags)
{
	int ret;

	*e = (struct util_env){ 0 };
	e->dev = util_open();
	if (!e->dev)
		return -ENODEV;
	e->a = util_queue(e->dev);
	e->b = util_queue(e->dev);
	if (!e->a || !e->b)
		return -ENOMEM;
	ret = d3dq_buffer_create(e->dev, buf_size, &e->buf);
	if (!ret)
		ret = d3dq_fence_create(e->dev, f_value, f_flags, &e->f);
	if (!ret)
		ret = d3dq_fence_create(e->dev, 0, 0, &e->g);
	if (!ret)
		ret = d3dq_fence_create(e->dev, 0, 0, &e->done);
	return ret;
}

void util_env_close(struct util_env *e)
{
	d3dq_fence_destroy(e->f);
	d3dq_fence_destroy(e->g);
	d3dq_fence_destroy(e->done);
	d3dq_buffer_destroy(e->buf);
	d3dq_queue_destroy(e->a);
	d3dq_queue_destroy(e->b);
	d3dq_device_close(e->dev);
	*e = (struct util_env){ 0 };
}

static struct d3dq_cmdlist *finish(struct d3dq_cmdlist *l, int ret)
{
	if (!ret)
		ret = d3dq_cmdlist_close(l);
	if (ret) {
		d3dq_cmdlist_destroy(l);
		return NULL;
	}
	return l;
}

struct d3dq_cmdlist *util_list_write64(struct d3dq_device *dev,
				       struct d3dq_buffer *b, uint64_t offset,
				       uint64_t value)
{
	struct d3dq_cmdlist *l;

	if (d3dq_cmdlist_create(dev, &l))
		return NULL;
	return finish(l, d3dq_cmdlist_write64(l, b, offset, value));
}

struct d3dq_cmdlist *util_list_delay(struct d3dq_device *dev, uint64_t ns)
{
	struct d3dq_cmdlist *l;

	if (d3dq_cmdlist_create(dev, &l))
		return NULL;
	return finish(l, d3dq_cmdlist_delay(l, ns));
}

struct d3dq_cmdlist *util_list_timestamp(struct d3dq_device *dev,
					 struct d3dq_buffer *b,
					 uint64_t offset)
{
	struct d3dq_cmdlist *l;

	if (d3dq_cmdlist_create(dev, &l))
		return NULL;
	return finish(l, d3dq_cmdlist_timestamp(l, b, offset));
}

static int exec_one(struct d3dq_queue *q, struct d3dq_cmdlist *l)
{
	int ret;

	if (!l)
		return -ENOMEM;
	ret = d3dq_queue_execute(q, &l, 1);
	d3dq_cmdlist_destroy(l);
	return ret;
}

int util_exec_write64(struct d3dq_device *dev, struct d3dq_queue *q,
		      struct d3dq_buffer *b, uint64_t offset, uint64_t value)
{
	return exec_one(q, util_list_write64(dev, b, offset, value));
}

int util_exec_delay(struct d3dq_device *dev, struct d3dq_queue *q,
		    uint64_t ns)
{
	return exec_one(q, util_list_delay(dev, ns));
}

int util_exec_timestamp(struct d3dq_device *dev, struct d3dq_queue *q,
			struct d3dq_buffer *b, uint64_t offset)
{
	return exec_one(q, util_list_timestamp(dev, b, offset));
}

uint64_t util_read64(struct d3dq_buffer *b, uint64_t offset)
{
	return __atomic_load_n((uint64_t *)((char *)d3dq_buffer_map(b) + offset),
			       __ATOMIC_SEQ_CST);
}

void util_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

uint64_t util_event_take(int efd)
{
	uint64_t v = 0;

	/* The eventfds of the tests are non-blocking: 0 when not set. */
	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

uint64_t util_event_wait(int efd, int timeout_ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) != 1)
		return 0;
	return util_event_take(efd);
}

int util_thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

int util_queue_idle(struct d3dq_device *dev, struct d3dq_queue *q)
{
	struct d3dq_fence *f;
	int ret = d3dq_fence_create(dev, 0, 0, &f);

	if (ret)
		return ret;
	ret = d3dq_queue_signal(q, f, 1);
	if (!ret)
		ret = d3dq_fence_wait(f, 1, 20000 * MS);
	d3dq_fence_destroy(f);
	return ret;
}

int util_eventfd(void)
{
	return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}
