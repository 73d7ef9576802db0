/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels d3dq builds against lives here.
 * The D3DQ_HAVE_* macros come from d3dq_config.h, which probe.sh
 * generates by compiling a use of each interface against the headers of
 * the kernel being built against, never from LINUX_VERSION_CODE, because
 * distributions backport DRM changes (Debian's 6.1 and 6.12 have
 * struct drm_sched_init_args, which upstream added in 6.15). Each shim
 * names the upstream change that decides it. make check builds every
 * branch below against real headers (Debian's 6.1 and 6.12, and
 * trixie-backports' 7.2 and 7.3), except the positional
 * drm_sched_init() calls and the credits-without-client-id
 * drm_sched_job_init() call, which only plain upstream 6.1-6.15 kernels
 * take and for which no headers are at hand (Documentation/driver.rst).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_COMPAT_H_
#define _D3DQ_COMPAT_H_

#include <linux/atomic.h>
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/eventfd.h>
#include <linux/hrtimer.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/gpu_scheduler.h>

#include "d3dq_config.h"

struct drm_printer;
struct file;
struct seq_file;

/*
 * Scheduler initialisation. v6.15 (796a9f55a8d1) passes the parameters
 * in struct drm_sched_init_args; before, drm_sched_init() took them by
 * position. v6.7 (56e449603f0a) added the number of run queues and
 * v6.8 (a6149f039369) the submission workqueue: with it, all queues of a
 * device share one workqueue; without it, every scheduler runs its own
 * kthread. The positional calls are kept to the minimum: no hang limit,
 * no score, the scheduler's own timeout workqueue.
 */
static inline int d3dq_sched_init(struct drm_gpu_scheduler *sched,
				  const struct drm_sched_backend_ops *ops,
				  struct workqueue_struct *submit_wq,
				  struct workqueue_struct *timeout_wq,
				  u32 credit_limit, long timeout,
				  const char *name, struct device *dev)
{
#ifdef D3DQ_HAVE_SCHED_INIT_ARGS
	const struct drm_sched_init_args args = {
		.ops = ops,
#ifdef D3DQ_HAVE_SCHED_SUBMIT_WQ
		.submit_wq = submit_wq,
#endif
		.timeout_wq = timeout_wq,
#ifdef D3DQ_HAVE_SCHED_NUM_RQS
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
#endif
		.credit_limit = credit_limit,
		.timeout = timeout,
		.name = name,
		.dev = dev,
	};

	return drm_sched_init(sched, &args);
#elif defined(D3DQ_HAVE_SCHED_SUBMIT_WQ)
	return drm_sched_init(sched, ops, submit_wq, DRM_SCHED_PRIORITY_COUNT,
			      credit_limit, 0, timeout, NULL, NULL, name, dev);
#elif defined(D3DQ_HAVE_SCHED_NUM_RQS)
	return drm_sched_init(sched, ops, DRM_SCHED_PRIORITY_COUNT,
			      credit_limit, 0, timeout, NULL, NULL, name, dev);
#else
	return drm_sched_init(sched, ops, credit_limit, 0, timeout, NULL,
			      NULL, name, dev);
#endif
}

static inline bool d3dq_sched_has_submit_wq(void)
{
#ifdef D3DQ_HAVE_SCHED_SUBMIT_WQ
	return true;
#else
	return false;
#endif
}

/*
 * Job initialisation: v6.8 (a78422e9dff3) added the job's credits, v6.16
 * (2956554823ce) the DRM client id (drm_file.client_id, which every
 * kernel with the latter has).
 */
static inline int d3dq_sched_job_init(struct drm_sched_job *job,
				      struct drm_sched_entity *entity,
				      void *owner, struct drm_file *file)
{
#if defined(D3DQ_HAVE_SCHED_JOB_CLIENT_ID)
	return drm_sched_job_init(job, entity, 1, owner, file->client_id);
#elif defined(D3DQ_HAVE_SCHED_JOB_CREDITS)
	return drm_sched_job_init(job, entity, 1, owner);
#else
	return drm_sched_job_init(job, entity, owner);
#endif
}

/*
 * What the timeout handler returns once it has dealt with the job (and
 * freed it): v6.17 (0a5dc1b67ef5) renamed DRM_GPU_SCHED_STAT_NOMINAL to
 * DRM_GPU_SCHED_STAT_RESET. The same release added
 * DRM_GPU_SCHED_STAT_NO_HANG (0b1217bfdfdd), with which the scheduler
 * puts the job back on its pending list; d3dq cannot return it, since its
 * handler frees the job.
 */
#ifdef D3DQ_HAVE_SCHED_STAT_RESET
#define D3DQ_SCHED_STAT_RESET	DRM_GPU_SCHED_STAT_RESET
#else
#define D3DQ_SCHED_STAT_RESET	DRM_GPU_SCHED_STAT_NOMINAL
#endif

/*
 * Kernel mapping of a shmem object, taking the locks the helpers need.
 * v6.2 (79e2cf2e7a19) moved shmem mappings under the reservation lock and
 * added drm_gem_vmap_unlocked(), which takes it; v6.16 (8f5c4871a014,
 * 954907f7147d) renamed that to drm_gem_vmap() and the shmem helper to
 * drm_gem_shmem_vmap_locked(), whose name states the contract, so the
 * newest kernels get the lock taken here. v6.1's drm_gem_shmem_vmap()
 * takes its own vmap_lock.
 */
static inline int d3dq_gem_vmap(struct drm_gem_shmem_object *shmem,
				struct iosys_map *map)
{
#if defined(D3DQ_HAVE_GEM_SHMEM_VMAP_LOCKED)
	int ret;

	dma_resv_lock(shmem->base.resv, NULL);
	ret = drm_gem_shmem_vmap_locked(shmem, map);
	dma_resv_unlock(shmem->base.resv);
	return ret;
#elif defined(D3DQ_HAVE_GEM_VMAP_UNLOCKED)
	return drm_gem_vmap_unlocked(&shmem->base, map);
#else
	return drm_gem_shmem_vmap(shmem, map);
#endif
}

static inline void d3dq_gem_vunmap(struct drm_gem_shmem_object *shmem,
				   struct iosys_map *map)
{
#if defined(D3DQ_HAVE_GEM_SHMEM_VMAP_LOCKED)
	dma_resv_lock(shmem->base.resv, NULL);
	drm_gem_shmem_vunmap_locked(shmem, map);
	dma_resv_unlock(shmem->base.resv);
#elif defined(D3DQ_HAVE_GEM_VMAP_UNLOCKED)
	drm_gem_vunmap_unlocked(&shmem->base, map);
#else
	drm_gem_shmem_vunmap(shmem, map);
#endif
}

/*
 * Kernel mapping of another driver's dma-buf (PRIME import, uapi 1.12):
 * v6.2 ("dma-buf: Add unlocked variant of vmapping functions") made
 * dma_buf_vmap() a call under the buffer's reservation lock and added
 * dma_buf_vmap_unlocked(), which takes it; v6.1's dma_buf_vmap() takes
 * the dma-buf's own mutex. Either way the caller holds no reservation
 * lock.
 */
static inline int d3dq_dma_buf_vmap(struct dma_buf *buf,
				    struct iosys_map *map)
{
#ifdef D3DQ_HAVE_DMA_BUF_VMAP_UNLOCKED
	return dma_buf_vmap_unlocked(buf, map);
#else
	return dma_buf_vmap(buf, map);
#endif
}

static inline void d3dq_dma_buf_vunmap(struct dma_buf *buf,
				       struct iosys_map *map)
{
#ifdef D3DQ_HAVE_DMA_BUF_VMAP_UNLOCKED
	dma_buf_vunmap_unlocked(buf, map);
#else
	dma_buf_vunmap(buf, map);
#endif
}

/*
 * The dma-buf calls above are in the DMA_BUF symbol namespace, named by a
 * string literal since v6.13 ("module: Convert symbol namespace to
 * string literal"), by a bare token before.
 */
#ifdef D3DQ_HAVE_MODULE_IMPORT_NS_TOKEN
#define D3DQ_MODULE_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS(DMA_BUF)
#else
#define D3DQ_MODULE_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS("DMA_BUF")
#endif

/*
 * A timer with its callback: hrtimer_setup() since v6.13 (908a1d775422);
 * hrtimer_init() is gone since v6.16 (9779489a31d7).
 */
static inline void d3dq_hrtimer_setup(struct hrtimer *timer,
				      enum hrtimer_restart (*function)(struct hrtimer *),
				      clockid_t clock_id, enum hrtimer_mode mode)
{
#ifdef D3DQ_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, function, clock_id, mode);
#else
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
#endif
}

/* drm_driver.date is gone since v6.14 (cb2e1c2136f7). */
#ifdef D3DQ_HAVE_DRIVER_DATE
#define D3DQ_DRM_DRIVER_DATE	.date = "20260101",
#else
#define D3DQ_DRM_DRIVER_DATE
#endif

/*
 * The pid of the process that opened (or last used) a DRM file: an __rcu
 * pointer since v6.7 (1c7a387ffef8).
 */
static inline pid_t d3dq_file_pid(struct drm_file *file)
{
	pid_t nr;

#ifdef D3DQ_HAVE_FILE_PID_RCU
	rcu_read_lock();
	nr = pid_vnr(rcu_dereference(file->pid));
	rcu_read_unlock();
#else
	nr = pid_vnr(file->pid);
#endif
	return nr;
}

/*
 * platform_driver.remove returns void since v6.11 ("platform: Make
 * platform_driver::remove() return void"); before, the void variant was
 * .remove_new (v6.3, "platform: Provide a remove callback that returns
 * no value", also in Debian's 6.1).
 */
#ifdef D3DQ_HAVE_PLATFORM_REMOVE_VOID
#define D3DQ_PLATFORM_REMOVE(fn)	.remove = (fn)
#else
#define D3DQ_PLATFORM_REMOVE(fn)	.remove_new = (fn)
#endif

/*
 * Before v6.6 (0adec22702d4), mmap() of an exported dma-buf went through
 * the driver.
 */
#ifdef D3DQ_HAVE_DRIVER_GEM_PRIME_MMAP
#define D3DQ_DRM_DRIVER_PRIME_MMAP	.gem_prime_mmap = drm_gem_prime_mmap,
#else
#define D3DQ_DRM_DRIVER_PRIME_MMAP
#endif

/*
 * fdinfo. v6.5 (3f09a0cd4ea3, "drm: Add common fdinfo helper") added
 * drm_show_fdinfo(), which prints drm-driver and drm-client-id (struct
 * drm_file.client_id, same commit) and calls drm_driver.show_fdinfo; and
 * (686b21b5f6ca, "drm: Add fdinfo memory stats") drm_show_memory_stats(),
 * which reads drm_gem_object_funcs.status for the resident size. Before,
 * the driver prints all of it (d3dq_fdinfo.c) and numbers its clients
 * itself.
 */
void d3dq_show_fdinfo(struct drm_printer *p, struct drm_file *file);
void d3dq_show_fdinfo_legacy(struct seq_file *m, struct file *f);
void d3dq_show_memory_stats_legacy(struct drm_printer *p,
				   struct drm_file *file);

#ifdef D3DQ_HAVE_DRM_SHOW_FDINFO
#define D3DQ_DRM_DRIVER_SHOW_FDINFO	.show_fdinfo = d3dq_show_fdinfo,
#define D3DQ_FOPS_SHOW_FDINFO		.show_fdinfo = drm_show_fdinfo,
#else
#define D3DQ_DRM_DRIVER_SHOW_FDINFO
#define D3DQ_FOPS_SHOW_FDINFO		.show_fdinfo = d3dq_show_fdinfo_legacy,
#endif

static inline void d3dq_show_memory_stats(struct drm_printer *p,
					  struct drm_file *file)
{
#ifdef D3DQ_HAVE_DRM_SHOW_MEMORY_STATS
	drm_show_memory_stats(p, file);
#else
	d3dq_show_memory_stats_legacy(p, file);
#endif
}

/* drm-client-id: the core's, or the next of our own (@next). */
static inline u64 d3dq_drm_client_id(struct drm_file *file, atomic64_t *next)
{
#ifdef D3DQ_HAVE_FILE_CLIENT_ID
	return file->client_id;
#else
	return atomic64_inc_return(next);
#endif
}

#ifdef D3DQ_HAVE_GEM_OBJECT_STATUS
/* d3dq buffers keep their pages from creation until they are freed. */
static inline enum drm_gem_object_status
d3dq_gem_status(struct drm_gem_object *obj)
{
	return DRM_GEM_OBJECT_RESIDENT;
}

#define D3DQ_GEM_FUNCS_STATUS	.status = d3dq_gem_status,
#else
#define D3DQ_GEM_FUNCS_STATUS
#endif

/*
 * The render node's file operations are DRM_GEM_FOPS with d3dq's own
 * mmap (fence pages come first, d3dq_fence_page.c). DRM_GEM_FOPS names
 * .mmap itself, and overriding an initialiser is a W=1 warning, so the other
 * members are listed here: v6.12 ("fs: move FMODE_UNSIGNED_OFFSET to
 * fop_flags") added .fop_flags, a later release (present in 7.2,
 * absent in 6.12; the commit was not looked up) .get_unmapped_area for
 * huge pages of shmem objects.
 */
#ifdef D3DQ_HAVE_GEM_FOPS_FLAGS
#define D3DQ_FOPS_FLAGS		.fop_flags = FOP_UNSIGNED_OFFSET,
#else
#define D3DQ_FOPS_FLAGS
#endif
#ifdef D3DQ_HAVE_GEM_FOPS_UNMAPPED_AREA
#define D3DQ_FOPS_UNMAPPED_AREA	.get_unmapped_area = drm_gem_get_unmapped_area,
#else
#define D3DQ_FOPS_UNMAPPED_AREA
#endif
#define D3DQ_GEM_FOPS_BUT_MMAP			\
	.open = drm_open,			\
	.release = drm_release,			\
	.unlocked_ioctl = drm_ioctl,		\
	.compat_ioctl = drm_compat_ioctl,	\
	.poll = drm_poll,			\
	.read = drm_read,			\
	.llseek = noop_llseek,			\
	D3DQ_FOPS_UNMAPPED_AREA			\
	D3DQ_FOPS_FLAGS

/*
 * eventfd_signal() lost its count argument in v6.8 ("eventfd: simplify
 * eventfd_signal()"); d3dq always added 1.
 */
static inline void d3dq_eventfd_signal(struct eventfd_ctx *ctx)
{
#ifdef D3DQ_HAVE_EVENTFD_SIGNAL_COUNT
	eventfd_signal(ctx, 1);
#else
	eventfd_signal(ctx);
#endif
}

/*
 * VMA flags are changed through vm_flags_set()/vm_flags_clear() since
 * v6.3 ("mm: introduce vma->vm_flags wrapper functions"); before, the
 * field was written directly. Called from
 * f_op->mmap, with the mmap lock held for writing.
 */
static inline void d3dq_vm_flags_mod(struct vm_area_struct *vma,
				     unsigned long set, unsigned long clear)
{
#ifdef D3DQ_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, set);
	vm_flags_clear(vma, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

#endif /* _D3DQ_COMPAT_H_ */
