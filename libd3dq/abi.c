// SPDX-License-Identifier: MIT
/*
 * libd3dq: what the ABI promises about itself: the version query and the
 * extensible descriptions (of a queue, whose D3D12 numbers are mapped to
 * the driver's here, and of a device).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <string.h>

#include "internal.h"

/* The first published layout: size, type, priority, flags, node_mask. */
#define QUEUE_DESC_SIZE_V0 20

_Static_assert(sizeof(struct d3dq_queue_desc) == QUEUE_DESC_SIZE_V0,
	       "a new member of struct d3dq_queue_desc needs a new size");

/* The first published layout: size, flags, path, signal_event, context. */
#define DEVICE_DESC_SIZE_V0 32

_Static_assert(sizeof(struct d3dq_device_desc) == DEVICE_DESC_SIZE_V0,
	       "a new member of struct d3dq_device_desc needs a new size");

/*
 * An extensible description of @known bytes as this library knows it,
 * whose caller says it has @size (its first member): at least the first
 * published layout (@v0), and members of a later layout only if they are
 * zero. Copied to @out. 0 or -EINVAL.
 */
static int desc_copy(const void *desc, uint32_t size, uint32_t v0,
		     void *out, size_t known)
{
	const unsigned char *tail = desc;
	uint32_t i;

	if (size < v0)
		return -EINVAL;
	for (i = known; i < size; i++)
		if (tail[i])
			return -EINVAL;
	memcpy(out, desc, known);
	return 0;
}

int d3dqp_device_desc_copy(const struct d3dq_device_desc *desc,
			   struct d3dq_device_desc *out)
{
	if (!desc || desc_copy(desc, desc->size, DEVICE_DESC_SIZE_V0, out,
			       sizeof(*out)))
		return -EINVAL;
	return out->flags ? -EINVAL : 0;
}

D3DQ_EXPORT uint32_t d3dq_version(void)
{
	return D3DQ_VERSION;
}

int d3dqp_queue_desc_to_uapi(const struct d3dq_queue_desc *desc,
			     struct drm_d3dq_queue_create *create)
{
	struct d3dq_queue_desc d;

	if (!desc || desc_copy(desc, desc->size, QUEUE_DESC_SIZE_V0, &d,
			       sizeof(d)))
		return -EINVAL;

	switch (d.type) {
	case D3DQ_QUEUE_DIRECT:
		create->type = DRM_D3DQ_QUEUE_TYPE_DIRECT;
		break;
	case D3DQ_QUEUE_COMPUTE:
		create->type = DRM_D3DQ_QUEUE_TYPE_COMPUTE;
		break;
	case D3DQ_QUEUE_COPY:
		create->type = DRM_D3DQ_QUEUE_TYPE_COPY;
		break;
	default:
		return -EINVAL;
	}
	switch (d.priority) {
	case D3DQ_QUEUE_PRIORITY_NORMAL:
		create->priority = DRM_D3DQ_QUEUE_PRIORITY_NORMAL;
		break;
	case D3DQ_QUEUE_PRIORITY_HIGH:
		create->priority = DRM_D3DQ_QUEUE_PRIORITY_HIGH;
		break;
	case D3DQ_QUEUE_PRIORITY_GLOBAL_REALTIME:
		/* Needs CAP_SYS_NICE in the driver (-EACCES without). */
		create->priority = DRM_D3DQ_QUEUE_PRIORITY_REALTIME;
		break;
	default:
		return -EINVAL;
	}
	if (d.flags || d.node_mask > 1)
		return -EINVAL;
	return 0;
}
