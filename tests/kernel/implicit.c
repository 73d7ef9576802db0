// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: implicit sync. A job's finished fence is published in the
 * reservation object of every buffer it uses, write usage for the buffers
 * it writes and read usage for those it only reads, so that a dma-buf
 * user (DMA_BUF_IOCTL_EXPORT_SYNC_FILE here) sees the buffer busy until
 * the job has finished.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

/* Long enough for the checks made while the job runs; below the timeout. */
#define DELAY_MS	1500

FIXTURE(implicit) {
	int fd;
	uint32_t q, tl, dst, src;
	uint64_t *mdst, *msrc;
	int buf_dst, buf_src;
};

FIXTURE_SETUP(implicit)
{
	self->buf_dst = -1;
	self->buf_src = -1;
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->q = t_queue(self->fd, 0, 0);
	self->tl = t_syncobj(self->fd);
	self->dst = t_bo(self->fd, 4096, (void **)&self->mdst);
	self->src = t_bo(self->fd, 4096, (void **)&self->msrc);
	ASSERT_NE(0, self->q);
	ASSERT_NE(0, self->tl);
	ASSERT_NE(0, self->dst);
	ASSERT_NE(0, self->src);
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->dst,
					DRM_CLOEXEC | DRM_RDWR,
					&self->buf_dst));
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->src,
					DRM_CLOEXEC | DRM_RDWR,
					&self->buf_src));
}

FIXTURE_TEARDOWN(implicit)
{
	if (self->buf_dst >= 0)
		close(self->buf_dst);
	if (self->buf_src >= 0)
		close(self->buf_src);
	if (self->mdst)
		munmap(self->mdst, 4096);
	if (self->msrc)
		munmap(self->msrc, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/*
 * The fences a user of @dmabuf must wait for before it reads
 * (DMA_BUF_SYNC_READ: the writers) or writes (DMA_BUF_SYNC_WRITE: every
 * user), as a sync_file; -errno on failure.
 */
static int export_sync_file(int dmabuf, uint32_t flags)
{
	struct dma_buf_export_sync_file a = { .flags = flags, .fd = -1 };

	if (ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &a))
		return -errno;
	return a.fd;
}

/* A delayed job, submitted from @fd on @q, copies src[0] to dst[1]. */
static int delayed_copy(int fd, uint32_t q, uint32_t tl, uint32_t dst,
			uint32_t src)
{
	struct drm_d3dq_sync s = t_tl(tl, 1);
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_delay(&cs, DELAY_MS * T_MS);
	t_cs_copy(&cs, dst, 8, src, 0, 8);
	t_cs_write64(&cs, dst, 16, 0x5678);
	return t_submit(fd, q, NULL, 0, &s, 1, &cs);
}

/*
 * A reader of the destination waits for the job; a reader of the source
 * does not (the job only reads it), a writer of the source does.
 */
TEST_F(implicit, export_sync_file_sees_the_job)
{
	int rd_dst, rd_src, wr_src;

	self->msrc[0] = 0x1234;
	ASSERT_EQ(0, delayed_copy(self->fd, self->q, self->tl, self->dst,
				  self->src));

	rd_dst = export_sync_file(self->buf_dst, DMA_BUF_SYNC_READ);
	rd_src = export_sync_file(self->buf_src, DMA_BUF_SYNC_READ);
	wr_src = export_sync_file(self->buf_src, DMA_BUF_SYNC_WRITE);
	ASSERT_LE(0, rd_dst);
	ASSERT_LE(0, rd_src);
	ASSERT_LE(0, wr_src);

	/* Taken while the job was still delaying. */
	ASSERT_EQ(0, t_fence_status(self->fd, self->tl, 1));
	EXPECT_EQ(0, t_sync_file_signalled(rd_dst, 0));
	EXPECT_EQ(1, t_sync_file_signalled(rd_src, 0));
	EXPECT_EQ(0, t_sync_file_signalled(wr_src, 0));

	/* Signalled once the job has finished, and its writes are there. */
	ASSERT_EQ(1, t_sync_file_signalled(rd_dst, 10000));
	EXPECT_EQ(1, t_fence_status(self->fd, self->tl, 1));
	EXPECT_EQ(0x1234, self->mdst[1]);
	EXPECT_EQ(0x5678, self->mdst[2]);
	EXPECT_EQ(1, t_sync_file_signalled(wr_src, 10000));

	close(rd_dst);
	close(rd_src);
	close(wr_src);
}

/*
 * Another file imports the buffer and its job writes it: the exporter's
 * dma-buf sees that job too (one reservation object per buffer).
 */
TEST_F(implicit, importer_job_seen_by_exporter)
{
	uint32_t dst2, src2, q2, tl2;
	int fd2, rd;

	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, drmPrimeFDToHandle(fd2, self->buf_dst, &dst2));
	ASSERT_EQ(0, drmPrimeFDToHandle(fd2, self->buf_src, &src2));
	q2 = t_queue(fd2, 0, 0);
	tl2 = t_syncobj(fd2);
	ASSERT_NE(0, q2);
	ASSERT_NE(0, tl2);

	self->msrc[0] = 0x4321;
	ASSERT_EQ(0, delayed_copy(fd2, q2, tl2, dst2, src2));
	rd = export_sync_file(self->buf_dst, DMA_BUF_SYNC_READ);
	ASSERT_LE(0, rd);
	ASSERT_EQ(0, t_fence_status(fd2, tl2, 1));
	EXPECT_EQ(0, t_sync_file_signalled(rd, 0));

	ASSERT_EQ(1, t_sync_file_signalled(rd, 10000));
	EXPECT_EQ(1, t_fence_status(fd2, tl2, 1));
	EXPECT_EQ(0x4321, self->mdst[1]);
	close(rd);
	close(fd2);
}

/*
 * A job naming more buffers than the driver keeps without allocating
 * (16), each twice: every one of them is published, once.
 */
TEST_F(implicit, many_buffers)
{
	uint32_t bo[24];
	int buf[24], sf[24], i;
	struct drm_d3dq_sync s = t_tl(self->tl, 1);
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_delay(&cs, DELAY_MS * T_MS);
	for (i = 0; i < 24; i++) {
		bo[i] = t_bo(self->fd, 4096, NULL);
		ASSERT_NE(0, bo[i]);
		ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, bo[i], DRM_CLOEXEC,
						&buf[i]));
		t_cs_write64(&cs, bo[i], 0, i);
		t_cs_copy(&cs, bo[i], 8, self->src, 0, 8);
	}
	ASSERT_EQ(0, t_submit(self->fd, self->q, NULL, 0, &s, 1, &cs));
	for (i = 0; i < 24; i++) {
		sf[i] = export_sync_file(buf[i], DMA_BUF_SYNC_READ);
		ASSERT_LE(0, sf[i]);
	}
	ASSERT_EQ(0, t_fence_status(self->fd, self->tl, 1));
	for (i = 0; i < 24; i++)
		EXPECT_EQ(0, t_sync_file_signalled(sf[i], 0));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, 10 * T_SEC));
	for (i = 0; i < 24; i++) {
		EXPECT_EQ(1, t_sync_file_signalled(sf[i], 0));
		close(sf[i]);
		close(buf[i]);
	}
}

/*
 * Jobs that run inside SUBMIT publish their fence before they write. A
 * writer thread submits small jobs on an exported buffer, which run
 * directly (DRM_D3DQ_SUBMIT_DONE): each writes the time it starts
 * (TIMESTAMP, in a buffer of its own), its number at the buffer's head,
 * a FILL, and its number at the buffer's tail. A reader takes the time,
 * exports a sync_file for reading and, if it is signalled at once (the
 * buffer looks idle), reads the tail, then the head. A head newer than
 * the tail means the head's job was writing during the reads; if that
 * job started before the export, it was writing then too, so the export
 * must have named its fence, unsignalled: the buffer cannot have looked
 * idle. Before, a direct job wrote first and published its fence
 * afterwards, and a reader saw the buffer idle while it was half written.
 *
 * (Comparing the fences of an export before and after the reads cannot
 * tell: an export leaves out the fences that have signalled, so both
 * name nothing once the buffer is idle.)
 */
/* Small enough to run inside SUBMIT (16 KiB of work at most). */
#define DIRECT_FILL	(12u << 10)
#define DIRECT_JOBS	8000
/* Or fewer: the writer stops after this long (KASAN's kernel is slow). */
#define DIRECT_SECONDS	100

struct direct_writer {
	int fd;
	uint32_t q, bo, ts;
	unsigned int submitted;
	unsigned int done;		/* jobs run inside SUBMIT */
	int err;
	atomic_bool stop;
};

static void *direct_write_loop(void *arg)
{
	struct direct_writer *w = arg;
	struct t_cs cs;
	int64_t end = t_deadline(DIRECT_SECONDS * T_SEC);
	uint32_t out;
	int i;

	for (i = 1; i <= DIRECT_JOBS && !atomic_load(&w->stop) &&
	     (int64_t)t_now() < end; i++) {
		t_cs_init(&cs);
		t_cs_timestamp(&cs, w->ts, 8 * i);
		t_cs_write64(&cs, w->bo, 0, i);
		t_cs_fill(&cs, w->bo, 8, i & 0xff, DIRECT_FILL - 16);
		t_cs_write64(&cs, w->bo, DIRECT_FILL - 8, i);
		out = 0;
		w->err = t_submit_out(w->fd, w->q, NULL, 0, NULL, 0, &cs, &out,
				      NULL);
		if (w->err)
			break;
		w->submitted++;
		if (out & DRM_D3DQ_SUBMIT_DONE)
			w->done++;
	}
	atomic_store(&w->stop, true);
	return NULL;
}

TEST_F_TIMEOUT(implicit, direct_job_published_before_it_writes, 240)
{
	struct direct_writer w = { .fd = self->fd, .q = self->q };
	unsigned int idle = 0, torn = 0, unpublished = 0;
	uint64_t before, head, tail;
	volatile uint64_t *m;
	uint64_t *ts;
	void *map;
	int buf, sf;
	pthread_t t;

	w.bo = t_bo(self->fd, DIRECT_FILL, &map);
	w.ts = t_bo(self->fd, 8 * (DIRECT_JOBS + 1), (void **)&ts);
	ASSERT_NE(0, w.bo);
	ASSERT_NE(0, w.ts);
	m = map;
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, w.bo, DRM_CLOEXEC, &buf));
	ASSERT_EQ(0, pthread_create(&t, NULL, direct_write_loop, &w));

	while (!atomic_load(&w.stop)) {
		before = t_now();
		sf = export_sync_file(buf, DMA_BUF_SYNC_READ);
		if (sf < 0) {
			atomic_store(&w.stop, true);
			break;
		}
		if (t_sync_file_signalled(sf, 0) != 1) {
			/* Busy: a job is published. Wait, look again. */
			t_sync_file_signalled(sf, 10000);
			close(sf);
			continue;
		}
		close(sf);
		idle++;
		tail = m[DIRECT_FILL / 8 - 1];
		head = m[0];
		if (head == tail)
			continue;
		torn++;
		/* The head's job wrote during the reads: since when? */
		if (head <= DIRECT_JOBS && ts[head] && ts[head] < before)
			unpublished++;
	}
	ASSERT_EQ(0, pthread_join(t, NULL));
	TH_LOG("%u idle exports, %u torn reads after them, %u of a job that had started before the export; %u of %u jobs ran inside SUBMIT",
	       idle, torn, unpublished, w.done, w.submitted);
	EXPECT_EQ(0, w.err);
	EXPECT_EQ(0, unpublished);
	/* The test tested something: direct jobs, reads of an idle buffer. */
	EXPECT_LT(w.submitted / 2, w.done);
	EXPECT_LE(500, w.submitted);
	EXPECT_LT(0, idle);
	munmap(map, DIRECT_FILL);
	munmap(ts, 8 * (DIRECT_JOBS + 1));
	close(buf);
}

TEST_HARNESS_MAIN
