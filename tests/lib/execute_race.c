// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq_queue_execute() racing a reset and re-record of one of its lists
 * on another thread (misuse): the call gets an error (executing a list
 * that is recording removes the device, as in D3D12) or submits a
 * consistent copy, never overruns its buffer.
 *
 * The race is made likely: the list that changes comes last, after
 * thousands of entries of a small closed list, so that a long time
 * passes between the moment the call first sees it and the moment it
 * copies it; the other thread keeps it closed and small most of the
 * time and grows it quickly.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "util/util.h"

#define ENTRIES 2000
#define CALLS 300

struct recorder {
	struct d3dq_cmdlist *l;
	_Atomic bool stop;
};

static void *record(void *arg)
{
	struct recorder *r = arg;
	int i;

	while (!atomic_load(&r->stop)) {
		d3dq_cmdlist_reset(r->l);
		d3dq_cmdlist_delay(r->l, 0);
		d3dq_cmdlist_close(r->l);
		for (i = 0; i < 20; i++)
			sched_yield();
		d3dq_cmdlist_reset(r->l);
		for (i = 0; i < 400; i++)
			d3dq_cmdlist_delay(r->l, 0);
		d3dq_cmdlist_close(r->l);
	}
	return NULL;
}

FIXTURE(x) {
	int unused;
};

FIXTURE_SETUP(x)
{
}

FIXTURE_TEARDOWN(x)
{
}

TEST_F_TIMEOUT(x, execute_while_rerecording, 600)
{
	struct d3dq_cmdlist **lists = calloc(ENTRIES + 1, sizeof(*lists));
	int calls = 0, ok = 0, refused = 0, rounds = 0;

	ASSERT_NE(NULL, lists);
	while (calls < CALLS) {
		struct d3dq_device *dev = util_open();
		struct recorder r = { 0 };
		struct d3dq_cmdlist *t;
		struct d3dq_queue *q;
		pthread_t th;
		int i, ret = 0;

		if (!dev)
			SKIP(return, "no d3dq device");
		q = util_queue(dev);
		ASSERT_NE(NULL, q);
		t = util_list_delay(dev, 0);
		ASSERT_NE(NULL, t);
		ASSERT_EQ(0, d3dq_cmdlist_create(dev, &r.l));
		ASSERT_EQ(0, d3dq_cmdlist_close(r.l));
		for (i = 0; i < ENTRIES; i++)
			lists[i] = t;
		lists[ENTRIES] = r.l;
		ASSERT_EQ(0, pthread_create(&th, NULL, record, &r));
		while (calls < CALLS && ret != -ENODEV) {
			ret = d3dq_queue_execute(q, lists, ENTRIES + 1);
			calls++;
			if (!ret)
				ok++;
			else if (ret == -EINVAL || ret == -ENODEV)
				refused++;
			else
				ASSERT_EQ(0, ret);
			if (ret == -EINVAL)
				ASSERT_EQ(-EINVAL, d3dq_device_removed_reason(dev));
		}
		atomic_store(&r.stop, true);
		pthread_join(th, NULL);
		d3dq_queue_destroy(q);
		d3dq_cmdlist_destroy(t);
		d3dq_cmdlist_destroy(r.l);
		d3dq_device_close(dev);
		rounds++;
	}
	TH_LOG("%d calls in %d devices: %d submitted, %d refused", calls,
	       rounds, ok, refused);
	free(lists);
}

TEST_HARNESS_MAIN
