// SPDX-License-Identifier: MIT
/*
 * libd3dq: command lists, recorded in user memory as the engine's command
 * stream (see "Commands" in d3dq_drm.h). A call holds a reference of
 * the list (and of the buffers it names) until it returns; a list
 * destroyed meanwhile is dead (-ENODEV) under its lock. A list holds a
 * reference of each buffer its commands name until it is reset or
 * freed, so that the handle it recorded stays that buffer's (buffer.c);
 * d3dq_queue_execute() refuses it once one of them was destroyed.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Drop the buffers @l names (its lock held, or its last reference). */
static void list_drop_buffers(struct d3dq_cmdlist *l)
{
	size_t i;

	for (i = 0; i < l->nbufs; i++)
		d3dqp_buffer_put(l->bufs[i]);
	l->nbufs = 0;
}

void d3dqp_cmdlist_put(struct d3dq_cmdlist *l)
{
	struct d3dq_device *dev = l->dev;

	if (atomic_fetch_sub(&l->refs, 1) != 1)
		return;
	list_drop_buffers(l);
	free(l->bufs);
	pthread_mutex_destroy(&l->lock);
	free(l->data);
	free(l);
	d3dqp_dev_put(dev);
}

/*
 * A call on @l: its lock held and a reference, or -ENODEV (inherited,
 * its device closed, or destroyed) and neither.
 */
static int list_lock(struct d3dq_cmdlist *l)
{
	int ret = d3dqp_dev_usable(l->dev);

	if (ret)
		return ret;
	obj_get(l);
	pthread_mutex_lock(&l->lock);
	if (l->dead) {
		pthread_mutex_unlock(&l->lock);
		d3dqp_cmdlist_put(l);
		return -ENODEV;
	}
	return 0;
}

static void list_unlock(struct d3dq_cmdlist *l)
{
	pthread_mutex_unlock(&l->lock);
	d3dqp_cmdlist_put(l);
}

D3DQ_EXPORT int d3dq_cmdlist_create(struct d3dq_device *dev,
				    struct d3dq_cmdlist **out)
{
	struct d3dq_cmdlist *l;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev)
		return -EINVAL;
	ret = d3dqp_dev_enter(dev);
	if (ret)
		return ret;
	ret = d3dqp_dev_removal_error(dev);
	l = ret ? NULL : calloc(1, sizeof(*l));
	if (!ret && !l)
		ret = -ENOMEM;
	if (l) {
		l->dev = dev;
		d3dqp_dev_get(dev);
		atomic_init(&l->refs, 1);
		l->state = CMDLIST_RECORDING;
		pthread_mutex_init(&l->lock, NULL);
		list_init(&l->dev_link);
		ret = d3dqp_dev_link_object(dev, &l->dev_link, &dev->cmdlists);
		if (ret)
			d3dqp_cmdlist_put(l);
		else
			*out = l;
	}
	d3dqp_dev_put(dev);
	return ret;
}

/*
 * Once (the device's close may destroy it too). An inherited list (fork)
 * is the parent's: nothing is done, not even its lock taken.
 */
D3DQ_EXPORT void d3dq_cmdlist_destroy(struct d3dq_cmdlist *l)
{
	if (!l || d3dqp_inherited(l->dev) || atomic_exchange(&l->destroyed,
							     true))
		return;
	pthread_mutex_lock(&l->dev->lock);
	list_del(&l->dev_link);
	pthread_mutex_unlock(&l->dev->lock);
	pthread_mutex_lock(&l->lock);
	l->dead = true;
	pthread_mutex_unlock(&l->lock);
	d3dqp_cmdlist_put(l);
}

D3DQ_EXPORT int d3dq_cmdlist_close(struct d3dq_cmdlist *l)
{
	int ret;

	if (!l)
		return -EINVAL;
	ret = list_lock(l);
	if (ret)
		return ret;
	if (l->state != CMDLIST_RECORDING) {
		ret = -EINVAL;
	} else {
		l->state = CMDLIST_CLOSED;
		ret = l->error;
	}
	list_unlock(l);
	return ret;
}

D3DQ_EXPORT int d3dq_cmdlist_reset(struct d3dq_cmdlist *l)
{
	int ret;

	if (!l)
		return -EINVAL;
	ret = list_lock(l);
	if (ret)
		return ret;
	l->state = CMDLIST_RECORDING;
	l->error = 0;
	l->len = 0;
	list_drop_buffers(l);
	list_unlock(l);
	return 0;
}

/*
 * Keep a reference of @b for @l's commands (its lock held): once per
 * buffer among the last few named, which is what a list mostly names.
 */
static int list_keep_buffer(struct d3dq_cmdlist *l, struct d3dq_buffer *b)
{
	struct d3dq_buffer **bufs;
	size_t i, cap;

	for (i = l->nbufs; i > 0 && i + 8 > l->nbufs; i--)
		if (l->bufs[i - 1] == b)
			return 0;
	if (l->nbufs == l->bufs_cap) {
		cap = l->bufs_cap ? l->bufs_cap * 2 : 8;
		bufs = realloc(l->bufs, cap * sizeof(*bufs));
		if (!bufs)
			return -ENOMEM;
		l->bufs = bufs;
		l->bufs_cap = cap;
	}
	obj_get(b);
	l->bufs[l->nbufs++] = b;
	return 0;
}

/*
 * Append one command. A recording error is also remembered and returned
 * by d3dq_cmdlist_close(), as ID3D12GraphicsCommandList::Close does.
 */
static int append(struct d3dq_cmdlist *l, const void *cmd, size_t size,
		  int check, struct d3dq_buffer *b1, struct d3dq_buffer *b2)
{
	int ret = 0;

	if (!l)
		return -EINVAL;
	ret = list_lock(l);
	if (ret)
		return ret;
	if (l->state != CMDLIST_RECORDING) {
		ret = -EINVAL;
		goto out;
	}
	if (check) {
		ret = check;
		goto record;
	}
	if (l->len + size > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		uint8_t *data;

		while (cap < l->len + size)
			cap *= 2;
		data = realloc(l->data, cap);
		if (!data) {
			ret = -ENOMEM;
			goto record;
		}
		l->data = data;
		l->cap = cap;
	}
	ret = b1 ? list_keep_buffer(l, b1) : 0;
	if (!ret && b2)
		ret = list_keep_buffer(l, b2);
	if (ret)
		goto record;
	memcpy(l->data + l->len, cmd, size);
	l->len += size;
	goto out;
record:
	if (!l->error)
		l->error = ret;
out:
	list_unlock(l);
	return ret;
}

/*
 * A range of @b that @l's commands may use: its handle in @handle. A
 * buffer destroyed meanwhile is not one (its handle is closed).
 */
static int check_range(const struct d3dq_cmdlist *l, struct d3dq_buffer *b,
		       uint64_t offset, uint64_t size, uint64_t align,
		       uint32_t *handle)
{
	int ret = 0;

	if (!l || !b || b->dev != l->dev)
		return -EINVAL;
	obj_get(b);
	if (atomic_load(&b->destroyed) || offset % align || offset > b->size ||
	    size > b->size - offset)
		ret = -EINVAL;
	else
		*handle = b->handle;
	d3dqp_buffer_put(b);
	return ret;
}

D3DQ_EXPORT int d3dq_cmdlist_write64(struct d3dq_cmdlist *l,
				     struct d3dq_buffer *b, uint64_t offset,
				     uint64_t value)
{
	struct drm_d3dq_cmd_write64 c = {
		.hdr = { DRM_D3DQ_CMD_WRITE64, sizeof(c) },
		.offset = offset,
		.value = value,
	};

	return append(l, &c, sizeof(c),
		      check_range(l, b, offset, 8, 8, &c.handle), b, NULL);
}

D3DQ_EXPORT int d3dq_cmdlist_copy(struct d3dq_cmdlist *l,
				  struct d3dq_buffer *dst, uint64_t dst_offset,
				  struct d3dq_buffer *src, uint64_t src_offset,
				  uint64_t size)
{
	struct drm_d3dq_cmd_copy c = {
		.hdr = { DRM_D3DQ_CMD_COPY, sizeof(c) },
		.dst_offset = dst_offset,
		.src_offset = src_offset,
		.size = size,
	};
	int check = check_range(l, dst, dst_offset, size, 1, &c.dst_handle);

	if (!check)
		check = check_range(l, src, src_offset, size, 1, &c.src_handle);
	return append(l, &c, sizeof(c), check, dst, src);
}

D3DQ_EXPORT int d3dq_cmdlist_compare_store64(struct d3dq_cmdlist *l,
					     struct d3dq_buffer *b,
					     uint64_t offset, uint64_t expected,
					     uint64_t desired)
{
	struct drm_d3dq_cmd_cmp_store64 c = {
		.hdr = { DRM_D3DQ_CMD_CMP_STORE64, sizeof(c) },
		.offset = offset,
		.expected = expected,
		.desired = desired,
	};

	return append(l, &c, sizeof(c),
		      check_range(l, b, offset, 8, 8, &c.handle), b, NULL);
}

D3DQ_EXPORT int d3dq_cmdlist_timestamp(struct d3dq_cmdlist *l,
				       struct d3dq_buffer *b, uint64_t offset)
{
	struct drm_d3dq_cmd_timestamp c = {
		.hdr = { DRM_D3DQ_CMD_TIMESTAMP, sizeof(c) },
		.offset = offset,
	};

	return append(l, &c, sizeof(c),
		      check_range(l, b, offset, 8, 8, &c.handle), b, NULL);
}

D3DQ_EXPORT int d3dq_cmdlist_delay(struct d3dq_cmdlist *l, uint64_t ns)
{
	struct drm_d3dq_cmd_delay c = {
		.hdr = { DRM_D3DQ_CMD_DELAY, sizeof(c) },
	};
	uint64_t max;
	int ret;

	if (!l)
		return -EINVAL;
	/* Longer delays than the engine takes become several commands. */
	max = l->dev->max_delay_ns ? l->dev->max_delay_ns : ns;
	do {
		c.ns = ns < max ? ns : max;
		ret = append(l, &c, sizeof(c), 0, NULL, NULL);
		ns -= c.ns;
	} while (!ret && ns);
	return ret;
}
