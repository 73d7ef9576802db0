// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: devices, module parameters, files and the ioctl table.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_fdinfo.h"
#include "d3dq_gem.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"

#define CREATE_TRACE_POINTS
#include "d3dq_trace.h"

#define D3DQ_MAX_DEVICES	16

static unsigned int d3dq_num_devices = 1;
module_param_named(num_devices, d3dq_num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of virtual devices (1-16, default 1)");

unsigned int d3dq_max_queues = 1024;
module_param_named(max_queues, d3dq_max_queues, uint, 0444);
MODULE_PARM_DESC(max_queues, "Queues per open file (default 1024)");

unsigned int d3dq_max_syncs = 1024;
module_param_named(max_syncs, d3dq_max_syncs, uint, 0444);
MODULE_PARM_DESC(max_syncs, "Waits, and signals, per submit (default 1024)");

unsigned int d3dq_max_cmd_bytes = 65536;
module_param_named(max_cmd_bytes, d3dq_max_cmd_bytes, uint, 0444);
MODULE_PARM_DESC(max_cmd_bytes,
		 "Command stream bytes per submit, multiple of 8 (default 65536)");

unsigned int d3dq_max_pending_jobs = 1024;
module_param_named(max_pending_jobs, d3dq_max_pending_jobs, uint, 0444);
MODULE_PARM_DESC(max_pending_jobs,
		 "Unfinished jobs per queue before submit sleeps (default 1024)");

unsigned int d3dq_job_timeout_ms = 2000;
module_param_named(job_timeout_ms, d3dq_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms, "Job timeout in milliseconds (default 2000)");

unsigned long long d3dq_max_delay_ns = 10ULL * NSEC_PER_SEC;
module_param_named(max_delay_ns, d3dq_max_delay_ns, ullong, 0444);
MODULE_PARM_DESC(max_delay_ns, "Longest DELAY command in ns (default 10 s)");

unsigned long long d3dq_max_bo_size = 64ULL << 20;
module_param_named(max_bo_size, d3dq_max_bo_size, ullong, 0444);
MODULE_PARM_DESC(max_bo_size, "Largest buffer in bytes (default 64 MiB)");

static struct d3dq_device *d3dq_devices[D3DQ_MAX_DEVICES];

static int d3dq_params_check(void)
{
	if (d3dq_num_devices < 1 || d3dq_num_devices > D3DQ_MAX_DEVICES)
		return -EINVAL;
	if (d3dq_max_queues < 1 || d3dq_max_queues > 65536)
		return -EINVAL;
	if (d3dq_max_syncs < 1 || d3dq_max_syncs > 65536)
		return -EINVAL;
	if (d3dq_max_cmd_bytes < 8 || d3dq_max_cmd_bytes > SZ_16M ||
	    d3dq_max_cmd_bytes % 8)
		return -EINVAL;
	if (d3dq_max_pending_jobs < 1 || d3dq_max_pending_jobs > 1 << 20)
		return -EINVAL;
	if (d3dq_job_timeout_ms < 1 || d3dq_job_timeout_ms > 3600 * MSEC_PER_SEC)
		return -EINVAL;
	if (d3dq_max_delay_ns > 3600ULL * NSEC_PER_SEC)
		return -EINVAL;
	if (d3dq_max_bo_size < PAGE_SIZE || d3dq_max_bo_size > SZ_1G)
		return -EINVAL;
	return 0;
}

int d3dq_ioctl_get_param(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_d3dq_get_param *args = data;

	if (args->pad)
		return -EINVAL;

	switch (args->param) {
	case DRM_D3DQ_PARAM_UAPI_VERSION:
		args->value = (DRM_D3DQ_UAPI_MAJOR << 16) | DRM_D3DQ_UAPI_MINOR;
		break;
	case DRM_D3DQ_PARAM_FEATURES:
		args->value = DRM_D3DQ_FEATURE_TIMELINE |
			      DRM_D3DQ_FEATURE_PRIME |
			      DRM_D3DQ_FEATURE_TIMEOUT |
			      DRM_D3DQ_FEATURE_WAIT_RELEASE |
			      DRM_D3DQ_FEATURE_PRIORITY;
		break;
	case DRM_D3DQ_PARAM_MAX_QUEUES:
		args->value = d3dq_max_queues;
		break;
	case DRM_D3DQ_PARAM_MAX_SYNCS:
		args->value = d3dq_max_syncs;
		break;
	case DRM_D3DQ_PARAM_MAX_CMD_BYTES:
		args->value = d3dq_max_cmd_bytes;
		break;
	case DRM_D3DQ_PARAM_MAX_PENDING_JOBS:
		args->value = d3dq_max_pending_jobs;
		break;
	case DRM_D3DQ_PARAM_JOB_TIMEOUT_NS:
		args->value = (u64)d3dq_job_timeout_ms * NSEC_PER_MSEC;
		break;
	case DRM_D3DQ_PARAM_TIMESTAMP_FREQUENCY:
		args->value = NSEC_PER_SEC;
		break;
	case DRM_D3DQ_PARAM_MAX_DELAY_NS:
		args->value = d3dq_max_delay_ns;
		break;
	case DRM_D3DQ_PARAM_MAX_BO_SIZE:
		args->value = d3dq_max_bo_size;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int d3dq_ioctl_remove(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct drm_d3dq_remove *args = data;

	if (args->flags || args->pad)
		return -EINVAL;

	d3dq_file_remove_queues(file->driver_priv);
	return 0;
}

static int d3dq_open(struct drm_device *drm, struct drm_file *file)
{
	struct d3dq_device *ddev = to_d3dq_dev(drm);
	struct d3dq_file *dfile;

	dfile = kzalloc(sizeof(*dfile), GFP_KERNEL);
	if (!dfile)
		return -ENOMEM;
	dfile->usage = d3dq_usage_create(file);
	if (!dfile->usage) {
		kfree(dfile);
		return -ENOMEM;
	}

	dfile->ddev = ddev;
	dfile->drm_file = file;
	mutex_init(&dfile->lock);
	xa_init_flags(&dfile->queues, XA_FLAGS_ALLOC1);
	file->driver_priv = dfile;

	mutex_lock(&ddev->files_lock);
	list_add_tail(&dfile->link, &ddev->files);
	mutex_unlock(&ddev->files_lock);
	atomic_inc(&ddev->count.files);
	return 0;
}

static void d3dq_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct d3dq_device *ddev = to_d3dq_dev(drm);
	struct d3dq_file *dfile = file->driver_priv;

	mutex_lock(&ddev->files_lock);
	list_del(&dfile->link);
	mutex_unlock(&ddev->files_lock);

	d3dq_file_destroy_queues(dfile);
	xa_destroy(&dfile->queues);
	mutex_destroy(&dfile->lock);
	d3dq_usage_put(dfile->usage);
	kfree(dfile);
	atomic_dec(&ddev->count.files);
}

static const struct drm_ioctl_desc d3dq_ioctls[] = {
#define D3DQ_IOCTL(n, func) \
	DRM_IOCTL_DEF_DRV(D3DQ_##n, d3dq_ioctl_##func, DRM_RENDER_ALLOW)
	D3DQ_IOCTL(GET_PARAM, get_param),
	D3DQ_IOCTL(BO_CREATE, bo_create),
	D3DQ_IOCTL(BO_MMAP_OFFSET, bo_mmap_offset),
	D3DQ_IOCTL(QUEUE_CREATE, queue_create),
	D3DQ_IOCTL(QUEUE_DESTROY, queue_destroy),
	D3DQ_IOCTL(QUEUE_GET_STATE, queue_get_state),
	D3DQ_IOCTL(SUBMIT, submit),
	D3DQ_IOCTL(REMOVE, remove),
	D3DQ_IOCTL(WAIT_RELEASE, wait_release),
#undef D3DQ_IOCTL
};

static const struct file_operations d3dq_fops = {
	.owner = THIS_MODULE,
	DRM_GEM_FOPS,
	D3DQ_FOPS_SHOW_FDINFO
};

static const struct drm_driver d3dq_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = d3dq_open,
	.postclose = d3dq_postclose,
	.ioctls = d3dq_ioctls,
	.num_ioctls = ARRAY_SIZE(d3dq_ioctls),
	.fops = &d3dq_fops,
	/*
	 * No gem_prime_import_sg_table: PRIME import only accepts buffers
	 * this device exported (it then returns the same object). No
	 * dumb_create: every buffer comes from BO_CREATE and is mapped.
	 */
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
	D3DQ_DRM_DRIVER_PRIME_MMAP
	.gem_create_object = d3dq_gem_create_object,
	.debugfs_init = d3dq_debugfs_init,
	D3DQ_DRM_DRIVER_SHOW_FDINFO
	.name = D3DQ_DRIVER_NAME,
	.desc = D3DQ_DRIVER_DESC,
	D3DQ_DRM_DRIVER_DATE
	.major = D3DQ_DRIVER_MAJOR,
	.minor = D3DQ_DRIVER_MINOR,
};

static void d3dq_device_release_wqs(struct d3dq_device *ddev)
{
	if (ddev->teardown_wq)
		destroy_workqueue(ddev->teardown_wq);
	if (ddev->engine_wq) {
		d3dq_dispatch_fini(&ddev->dispatch);
		destroy_workqueue(ddev->engine_wq);
	}
	if (ddev->sched_wq)
		destroy_workqueue(ddev->sched_wq);
}

static int d3dq_device_create(unsigned int index)
{
	struct platform_device *pdev;
	struct d3dq_device *ddev;
	int ret;

	pdev = platform_device_register_simple(D3DQ_DRIVER_NAME, index,
					       NULL, 0);
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);

	if (!devres_open_group(&pdev->dev, NULL, GFP_KERNEL)) {
		ret = -ENOMEM;
		goto out_unregister;
	}

	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto out_devres;

	ddev = devm_drm_dev_alloc(&pdev->dev, &d3dq_driver,
				  struct d3dq_device, drm);
	if (IS_ERR(ddev)) {
		ret = PTR_ERR(ddev);
		goto out_devres;
	}
	ddev->pdev = pdev;
	mutex_init(&ddev->files_lock);
	INIT_LIST_HEAD(&ddev->files);
	mutex_init(&ddev->sched_pool_lock);
	INIT_LIST_HEAD(&ddev->sched_pool);
	init_waitqueue_head(&ddev->idle_wq);

	/*
	 * Both workqueues sit in the fence signalling path, so they must
	 * make progress under memory pressure.
	 */
	ret = -ENOMEM;
	if (d3dq_sched_has_submit_wq()) {
		ddev->sched_wq = alloc_workqueue("d3dq-sched.%u",
						 WQ_MEM_RECLAIM | WQ_UNBOUND,
						 0, index);
		if (!ddev->sched_wq)
			goto out_devres;
	}
	/*
	 * Not WQ_HIGHPRI: the engine runs work any user can submit, in
	 * bounded steps, one at a time per device, at a normal priority.
	 */
	ddev->engine_wq = alloc_workqueue("d3dq-engine.%u",
					  WQ_MEM_RECLAIM | WQ_UNBOUND, 0,
					  index);
	if (!ddev->engine_wq)
		goto out_wqs;
	d3dq_dispatch_init(&ddev->dispatch, ddev->engine_wq);
	ddev->teardown_wq = alloc_workqueue("d3dq-teardown.%u", WQ_UNBOUND,
					    0, index);
	if (!ddev->teardown_wq)
		goto out_wqs;

	ret = drm_dev_register(&ddev->drm, 0);
	if (ret)
		goto out_wqs;

	d3dq_devices[index] = ddev;
	return 0;

out_wqs:
	d3dq_device_release_wqs(ddev);
out_devres:
	devres_release_group(&pdev->dev, NULL);
out_unregister:
	platform_device_unregister(pdev);
	return ret;
}

static void d3dq_device_destroy(unsigned int index)
{
	struct d3dq_device *ddev = d3dq_devices[index];
	struct platform_device *pdev;

	if (!ddev)
		return;

	pdev = ddev->pdev;
	drm_dev_unregister(&ddev->drm);
	/*
	 * Every file is closed (the module could not be unloaded
	 * otherwise); queue teardowns they started may still run.
	 */
	wait_event(ddev->idle_wq, !atomic_read(&ddev->count.queues));
	flush_workqueue(ddev->teardown_wq);
	d3dq_sched_pool_fini(ddev);
	d3dq_device_release_wqs(ddev);
	devres_release_group(&pdev->dev, NULL);
	platform_device_unregister(pdev);
	d3dq_devices[index] = NULL;
}

static int __init d3dq_init(void)
{
	unsigned int i;
	int ret;

	ret = d3dq_params_check();
	if (ret) {
		pr_err("d3dq: invalid module parameters\n");
		return ret;
	}

	for (i = 0; i < d3dq_num_devices; i++) {
		ret = d3dq_device_create(i);
		if (ret)
			goto err;
	}
	return 0;

err:
	while (i--)
		d3dq_device_destroy(i);
	return ret;
}

static void __exit d3dq_exit(void)
{
	unsigned int i;

	for (i = 0; i < d3dq_num_devices; i++)
		d3dq_device_destroy(i);
}

module_init(d3dq_init);
module_exit(d3dq_exit);

MODULE_DESCRIPTION("d3dq: " D3DQ_DRIVER_DESC);
MODULE_AUTHOR("The d3dq authors");
MODULE_LICENSE("GPL");
