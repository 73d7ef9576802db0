/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the libd3dq tests.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_TESTS_LIB_UTIL_H
#define D3DQ_TESTS_LIB_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <d3dq/d3dq.h>

/*
 * The objects most tests start from: a device, two queues, a mapped
 * buffer and three fences (f with the given initial value and flags, g
 * and done at 0). Embed it in a fixture and use UTIL_ENV_FIXTURE().
 */
struct util_env {
	struct d3dq_device *dev;
	struct d3dq_queue *a, *b;
	struct d3dq_buffer *buf;
	struct d3dq_fence *f, *g, *done;
};

/*
 * 0, -ENODEV when there is no d3dq device (the caller skips), or the
 * -errno of the step that failed. util_env_close() undoes whatever was
 * made, also after a failure.
 */
int util_env_open(struct util_env *e, uint64_t buf_size, uint64_t f_value,
		  uint32_t f_flags);
void util_env_close(struct util_env *e);

/*
 * In a fixture setup (needs the harness's _metadata): open @e, skip the
 * test without a device, fail it if anything else went wrong.
 */
#define UTIL_ENV_OPEN(e, buf_size, f_value, f_flags)			\
	do {								\
		int _ret = util_env_open(e, buf_size, f_value, f_flags); \
									\
		if (_ret == -ENODEV)					\
			SKIP(return, "no d3dq device");			\
		ASSERT_EQ(0, _ret);					\
	} while (0)

/*
 * Setup and teardown of a fixture whose data has a struct util_env e and
 * nothing else to set up, for use right after FIXTURE(name).
 */
#define UTIL_ENV_FIXTURE(name, buf_size, f_value, f_flags)		\
	FIXTURE_SETUP(name)						\
	{								\
		UTIL_ENV_OPEN(&self->e, buf_size, f_value, f_flags);	\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		util_env_close(&self->e);				\
	}

/* Job timeout of the module's default parameters is 2 s. */
#define MS 1000000ull

/* Open the d3dq device; NULL (and a printed reason) if there is none. */
struct d3dq_device *util_open(void);

/*
 * Open the d3dq node @path (NULL: the first) with @cb as the device's
 * signal_event callback and @context as its context; NULL on failure.
 * Inline: d3dq_device_open_desc() is 0.2's, and only the programs that
 * call this may need that node (tests/lib/symbols).
 */
static inline struct d3dq_device *util_open_callback(const char *path,
						     d3dq_signal_event_fn cb,
						     void *context)
{
	struct d3dq_device_desc desc = D3DQ_DEVICE_DESC_INIT;
	struct d3dq_device *dev = NULL;

	desc.path = path;
	desc.signal_event = cb;
	desc.context = context;
	if (d3dq_device_open_desc(&desc, &dev))
		return NULL;
	return dev;
}

struct d3dq_queue *util_queue(struct d3dq_device *dev);

/* A closed list holding one command, for one-shot executions. */
struct d3dq_cmdlist *util_list_write64(struct d3dq_device *dev,
				       struct d3dq_buffer *b, uint64_t offset,
				       uint64_t value);
struct d3dq_cmdlist *util_list_delay(struct d3dq_device *dev, uint64_t ns);
struct d3dq_cmdlist *util_list_timestamp(struct d3dq_device *dev,
					 struct d3dq_buffer *b,
					 uint64_t offset);

/* Record-close-execute-destroy a one-command list. 0 or -errno. */
int util_exec_write64(struct d3dq_device *dev, struct d3dq_queue *q,
		      struct d3dq_buffer *b, uint64_t offset, uint64_t value);
int util_exec_delay(struct d3dq_device *dev, struct d3dq_queue *q,
		    uint64_t ns);
int util_exec_timestamp(struct d3dq_device *dev, struct d3dq_queue *q,
			struct d3dq_buffer *b, uint64_t offset);

/* Read a 64-bit value of a buffer mapping. */
uint64_t util_read64(struct d3dq_buffer *b, uint64_t offset);

/* Sleep for ms milliseconds. */
void util_sleep_ms(unsigned int ms);

/* Read (and so reset) a non-blocking eventfd's counter; 0 if unset. */
uint64_t util_event_take(int efd);

/*
 * util_event_take() once the eventfd is set, or 0 after @timeout_ms (a
 * hang detector, not a timing check). An event may be written just after
 * the value it waits for becomes visible, as with any asynchronous event.
 */
uint64_t util_event_wait(int efd, int timeout_ms);

/* A non-blocking eventfd. */
int util_eventfd(void);

/* Number of threads of this process (entries of /proc/self/task). */
int util_thread_count(void);

/* Wait until the queue has finished everything queued so far. */
int util_queue_idle(struct d3dq_device *dev, struct d3dq_queue *q);

#endif
