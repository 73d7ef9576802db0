// SPDX-License-Identifier: MIT
/*
 * libd3dq: what the ABI promises about itself: the version query and the
 * extensible queue description, whose D3D12 numbers are mapped to the
 * driver's here.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <string.h>

#include "internal.h"

/* The first published layout: size, type, priority, flags, node_mask. */
#define QUEUE_DESC_SIZE_V0 20

_Static_assert(sizeof(struct d3dq_queue_desc) == QUEUE_DESC_SIZE_V0,
	       "a new member of struct d3dq_queue_desc needs a new size");

D3DQ_EXPORT uint32_t d3dq_version(void)
{
	return D3DQ_VERSION;
}

int queue_desc_to_uapi(const struct d3dq_queue_desc *desc,
		       struct drm_d3dq_queue_create *create)
{
	const unsigned char *tail;
	struct d3dq_queue_desc d;
	uint32_t i;

	if (!desc || desc->size < QUEUE_DESC_SIZE_V0)
		return -EINVAL;
	/* Members of a later layout are refused unless they are zero. */
	tail = (const unsigned char *)desc;
	for (i = sizeof(d); i < desc->size; i++)
		if (tail[i])
			return -EINVAL;
	memcpy(&d, desc, sizeof(d));

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
