// SPDX-License-Identifier: MIT
/*
 * d3dq-interop: the synchronisation of a D3D12-on-Vulkan layer, written
 * against libd3dq's calls for other drivers' work (issue 41), with vgem
 * standing in for the Vulkan device. Documentation/interop.rst explains it.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * The layer keeps a D3D12 fence as a d3dq fence F, and its D3D12 queue's
 * own work runs on a d3dq queue. Work it translates to Vulkan runs on the
 * other driver; here, "Vulkan work" is a vgem buffer with a write fence
 * (VGEM_FENCE_ATTACH) that ends when the program says so
 * (VGEM_FENCE_SIGNAL), and the buffer's dma-buf gives its sync_file.
 *
 *   queue Signal(F, v) after Vulkan work: the submission's sync_file
 *     becomes d3dq_fence_signal_on_sync_file(F, v, sync_file). No thread
 *     of the layer waits for the work; the kernel sets F and releases d3dq
 *     queues waiting for v.
 *   queue Wait(F, v) before Vulkan work: d3dq_fence_export_sync_file(F, v)
 *     gives a sync_file the Vulkan submission waits for (here it goes into
 *     the buffer's reservation with DMA_BUF_IOCTL_IMPORT_SYNC_FILE, and
 *     vgem refuses new work on the buffer until it signals). -ENODATA says
 *     that nothing brings v yet: a dma-fence may not wait for the program,
 *     so the layer holds the submission back until v's eventfd
 *     (d3dq_fence_set_event_on_completion) is readable, then exports again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <xf86drm.h>

#include <d3dq/d3dq.h>

#include "util/vgem.h"

#ifndef DMA_BUF_IOCTL_IMPORT_SYNC_FILE	/* Linux 6.0 */
struct dma_buf_import_sync_file {
	uint32_t flags;
	int32_t fd;
};
#define DMA_BUF_IOCTL_IMPORT_SYNC_FILE \
	_IOW(DMA_BUF_BASE, 3, struct dma_buf_import_sync_file)
#endif

#define WAIT_NS 10000000000ull	/* below vgem's own 10 s fence timer */

static int step;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	printf("%2d. ", ++step);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static int failed(const char *what, int err)
{
	fprintf(stderr, "d3dq-interop: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return -1;
}

#define TRY(x) do { int r_ = (x); if (r_) return failed(#x, r_); } while (0)

/* --- the "Vulkan" device ------------------------------------------------ */

static bool vgem_loaded;

/* A buffer of the Vulkan device, and its dma-buf. */
struct vbuf {
	uint32_t handle;
	int dmabuf;
};

static int vbuf_create(int vfd, struct vbuf *b)
{
	int ret = vgem_bo(vfd, &b->handle);

	if (ret)
		return ret;
	if (drmPrimeHandleToFD(vfd, b->handle, O_CLOEXEC | O_RDWR, &b->dmabuf))
		return -errno;
	return 0;
}

static void vbuf_destroy(int vfd, struct vbuf *b)
{
	struct drm_gem_close c = { .handle = b->handle };

	close(b->dmabuf);
	drmIoctl(vfd, DRM_IOCTL_GEM_CLOSE, &c);
}

/*
 * "Vulkan work" writing @b: a write fence on the buffer (-EBUSY while
 * fences the buffer must wait for are pending) and the submission's
 * sync_file.
 */
static int vulkan_submit(int vfd, struct vbuf *b, uint32_t *work, int *sf)
{
	int ret = vgem_attach_write(vfd, b->handle, work);

	if (ret)
		return ret;
	*sf = dmabuf_read_sync_file(b->dmabuf);
	return *sf < 0 ? *sf : 0;
}

static int vulkan_complete(int vfd, uint32_t work)
{
	return vgem_signal(vfd, work);
}

/* Are the buffer's fences, all of them, signalled? */
static bool vbuf_idle(struct vbuf *b)
{
	struct pollfd p = { .fd = b->dmabuf, .events = POLLOUT };

	return poll(&p, 1, 0) == 1;
}

/* --- the layer ---------------------------------------------------------- */

/* ID3D12CommandQueue::Signal(F, v) placed after Vulkan work. */
static int layer_signal_after_vulkan(struct d3dq_fence *f, uint64_t v,
				     int vulkan_sf)
{
	return d3dq_fence_signal_on_sync_file(f, v, vulkan_sf);
}

/*
 * ID3D12CommandQueue::Wait(F, v) placed before Vulkan work on @b: the
 * work's dependency as a fence in the buffer's reservation. Blocks on the
 * value's eventfd only while nothing brings v (a layer would park the
 * submission in its event loop instead).
 */
static int layer_wait_before_vulkan(struct d3dq_fence *f, uint64_t v,
				    struct vbuf *b)
{
	struct dma_buf_import_sync_file imp = { .flags = DMA_BUF_SYNC_WRITE };
	struct pollfd p = { .events = POLLIN };
	int ret, sf, efd;

	ret = d3dq_fence_export_sync_file(f, v, &sf);
	if (ret == -ENODATA) {
		say("export_sync_file(F, %llu): -ENODATA, nothing brings it yet; "
		    "waiting for its eventfd", (unsigned long long)v);
		efd = eventfd(0, EFD_CLOEXEC);
		if (efd < 0)
			return -errno;
		ret = d3dq_fence_set_event_on_completion(f, v, efd);
		if (!ret) {
			p.fd = efd;
			ret = poll(&p, 1, (int)(WAIT_NS / 1000000)) == 1 ?
			      0 : -ETIMEDOUT;
		}
		close(efd);
		if (ret)
			return ret;
		say("eventfd readable: F reached %llu; exporting again",
		    (unsigned long long)v);
		ret = d3dq_fence_export_sync_file(f, v, &sf);
	}
	if (ret)
		return ret;
	imp.fd = sf;
	ret = ioctl(b->dmabuf, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp) ?
	      -errno : 0;
	close(sf);
	return ret;
}

/* --- the scenes ----------------------------------------------------------- */

struct ctx {
	int vfd;
	struct d3dq_device *dev;
	struct d3dq_queue *q;
	struct d3dq_fence *f, *g, *done;
	struct d3dq_buffer *buf;
	struct d3dq_cmdlist *list, *slow;
};

/*
 * Scene 1: Vulkan work, then Signal(F, 1); a d3dq queue waits for F >= 1
 * before its own job. The queue's job runs when the Vulkan work ends.
 */
static int scene_signal(struct ctx *c)
{
	struct vbuf b;
	uint32_t work;
	int sf, ret;

	printf("\nScene 1: Vulkan work, then a queue Signal(F, 1)\n");
	TRY(vbuf_create(c->vfd, &b));
	TRY(vulkan_submit(c->vfd, &b, &work, &sf));
	say("Vulkan work submitted (vgem fence %u), its sync_file is fd %d",
	    work, sf);
	TRY(layer_signal_after_vulkan(c->f, 1, sf));
	close(sf);
	say("Signal(F, 1) is d3dq_fence_signal_on_sync_file(F, 1, sync_file): "
	    "returned at once, F = %llu",
	    (unsigned long long)d3dq_fence_get_completed_value(c->f));
	TRY(d3dq_queue_wait(c->q, c->f, 1));
	TRY(d3dq_queue_execute(c->q, &c->list, 1));
	TRY(d3dq_queue_signal(c->q, c->done, 1));
	say("d3dq queue: Wait(F, 1), a job, Signal(done, 1): held");
	ret = d3dq_fence_wait(c->done, 1, 100000000);
	if (ret != -ETIMEDOUT)
		return failed("the queue ran before the Vulkan work ended",
			      ret ? ret : -EPROTO);
	say("100 ms later: done = %llu, the queue is still held",
	    (unsigned long long)d3dq_fence_get_completed_value(c->done));
	TRY(vulkan_complete(c->vfd, work));
	say("Vulkan work completes (VGEM_FENCE_SIGNAL)");
	TRY(d3dq_fence_wait(c->done, 1, WAIT_NS));
	say("the kernel set F = %llu and released the queue: done = %llu",
	    (unsigned long long)d3dq_fence_get_completed_value(c->f),
	    (unsigned long long)d3dq_fence_get_completed_value(c->done));
	vbuf_destroy(c->vfd, &b);
	return 0;
}

/*
 * Scene 2: Wait(F, 2) before Vulkan work, where the d3dq queue's
 * Signal(F, 2) is on its way (after 200 ms of its engine work): the
 * Vulkan work waits for the armed value's sync_file.
 */
static int scene_wait_armed(struct ctx *c)
{
	uint32_t work;
	struct vbuf b;
	int sf, ret;

	printf("\nScene 2: a queue Wait(F, 2) before Vulkan work; a d3dq "
	       "queue's Signal(F, 2) is on its way\n");
	TRY(vbuf_create(c->vfd, &b));
	TRY(d3dq_queue_execute(c->q, &c->slow, 1));
	TRY(d3dq_queue_signal(c->q, c->f, 2));
	say("d3dq queue: 200 ms of engine work, Signal(F, 2)");
	TRY(layer_wait_before_vulkan(c->f, 2, &b));
	say("export_sync_file(F, 2) gave a sync_file; imported into the "
	    "Vulkan buffer's reservation (F = %llu)",
	    (unsigned long long)d3dq_fence_get_completed_value(c->f));
	ret = vulkan_submit(c->vfd, &b, &work, &sf);
	if (ret != -EBUSY)
		return failed("Vulkan work was not held back by F",
			      ret ? ret : -EPROTO);
	say("the buffer is %s; new Vulkan work on it: -EBUSY (vgem does not "
	    "queue work, a GPU's scheduler would hold it)",
	    vbuf_idle(&b) ? "idle" : "busy");
	TRY(d3dq_fence_wait(c->f, 2, WAIT_NS));
	say("F = %llu: the buffer is %s",
	    (unsigned long long)d3dq_fence_get_completed_value(c->f),
	    vbuf_idle(&b) ? "idle" : "busy");
	TRY(vulkan_submit(c->vfd, &b, &work, &sf));
	close(sf);
	TRY(vulkan_complete(c->vfd, work));
	say("Vulkan work ran after F reached 2");
	vbuf_destroy(c->vfd, &b);
	return 0;
}

/*
 * Scene 3: Wait(F, 3) before Vulkan work where nothing brings 3 yet: the
 * d3dq queue's Signal(F, 3) is held by its Wait(G, 1), which the
 * application signals on the CPU 200 ms later. The export is refused
 * with -ENODATA; the layer waits for 3's eventfd and exports again.
 */
static void *late_signal(void *arg)
{
	struct timespec ts = { 0, 200000000 };

	nanosleep(&ts, NULL);
	if (d3dq_fence_signal(arg, 1))
		fprintf(stderr, "d3dq-interop: the application's Signal(G, 1) failed\n");
	return NULL;
}

static int scene_wait_future(struct ctx *c)
{
	uint32_t work;
	struct vbuf b;
	pthread_t t;
	int sf, ret;

	printf("\nScene 3: a queue Wait(F, 3) before Vulkan work; nothing "
	       "brings 3 yet\n");
	TRY(vbuf_create(c->vfd, &b));
	TRY(d3dq_queue_wait(c->q, c->g, 1));
	TRY(d3dq_queue_signal(c->q, c->f, 3));
	say("d3dq queue: Wait(G, 1), Signal(F, 3): held; the application "
	    "signals G = 1 on the CPU in 200 ms");
	ret = pthread_create(&t, NULL, late_signal, c->g);
	if (ret)
		return failed("pthread_create", ret);
	ret = layer_wait_before_vulkan(c->f, 3, &b);
	pthread_join(t, NULL);
	if (ret)
		return failed("layer_wait_before_vulkan(F, 3)", ret);
	say("a signalled sync_file imported; the buffer is %s",
	    vbuf_idle(&b) ? "idle" : "busy");
	TRY(vulkan_submit(c->vfd, &b, &work, &sf));
	close(sf);
	TRY(vulkan_complete(c->vfd, work));
	say("Vulkan work ran after F reached 3");
	vbuf_destroy(c->vfd, &b);
	return 0;
}

/*
 * Scene 4: R4. A rewind while the Vulkan work is pending cancels nothing:
 * the value is written when the work completes.
 */
static int scene_rewind(struct ctx *c)
{
	uint32_t work;
	struct vbuf b;
	int sf;

	printf("\nScene 4: a rewind while the Vulkan work is pending (R4)\n");
	TRY(vbuf_create(c->vfd, &b));
	TRY(vulkan_submit(c->vfd, &b, &work, &sf));
	TRY(layer_signal_after_vulkan(c->f, 5, sf));
	close(sf);
	TRY(d3dq_fence_signal(c->f, 0));
	say("Signal(F, 5) after Vulkan work; then the CPU rewinds F to %llu",
	    (unsigned long long)d3dq_fence_get_completed_value(c->f));
	TRY(vulkan_complete(c->vfd, work));
	TRY(d3dq_fence_wait(c->f, 5, WAIT_NS));
	say("Vulkan work completes: F = %llu, the rewind cancelled nothing",
	    (unsigned long long)d3dq_fence_get_completed_value(c->f));
	vbuf_destroy(c->vfd, &b);
	return 0;
}

static void ctx_close(struct ctx *c)
{
	d3dq_queue_destroy(c->q);
	d3dq_cmdlist_destroy(c->list);
	d3dq_cmdlist_destroy(c->slow);
	d3dq_buffer_destroy(c->buf);
	d3dq_fence_destroy(c->f);
	d3dq_fence_destroy(c->g);
	d3dq_fence_destroy(c->done);
	d3dq_device_close(c->dev);
	if (c->vfd >= 0)
		close(c->vfd);
}

static int ctx_open(struct ctx *c)
{
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;

	TRY(d3dq_device_open(NULL, &c->dev));
	TRY(d3dq_queue_create(c->dev, &desc, &c->q));
	TRY(d3dq_fence_create(c->dev, 0, 0, &c->f));
	TRY(d3dq_fence_create(c->dev, 0, 0, &c->g));
	TRY(d3dq_fence_create(c->dev, 0, 0, &c->done));
	TRY(d3dq_buffer_create(c->dev, 4096, &c->buf));
	TRY(d3dq_cmdlist_create(c->dev, &c->list));
	TRY(d3dq_cmdlist_write64(c->list, c->buf, 0, 1));
	TRY(d3dq_cmdlist_close(c->list));
	TRY(d3dq_cmdlist_create(c->dev, &c->slow));
	TRY(d3dq_cmdlist_delay(c->slow, 200000000));
	TRY(d3dq_cmdlist_close(c->slow));
	return 0;
}

int main(void)
{
	struct ctx c = { .vfd = -1 };
	int ret = 1;

	if (d3dq_version() < D3DQ_MAKE_VERSION(0, 4, 0)) {
		fprintf(stderr, "d3dq-interop: libd3dq 0.4 or later needed\n");
		return 2;
	}
	c.vfd = vgem_open(&vgem_loaded);
	if (c.vfd < 0) {
		fprintf(stderr, "d3dq-interop: no vgem device (modprobe vgem) to play the Vulkan driver\n");
		return 2;
	}
	if (ctx_open(&c))
		goto out;
	printf("d3dq-interop: a D3D12 fence F on d3dq, \"Vulkan\" work on vgem\n");
	if (!scene_signal(&c) && !scene_wait_armed(&c) &&
	    !scene_wait_future(&c) && !scene_rewind(&c)) {
		printf("\nd3dq-interop: every scene ran as expected\n");
		ret = 0;
	}
out:
	ctx_close(&c);
	if (vgem_loaded && vgem_unload())
		fprintf(stderr, "d3dq-interop: rmmod vgem failed\n");
	return ret;
}
