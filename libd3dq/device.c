// SPDX-License-Identifier: MIT
/*
 * libd3dq: devices, the kernel calls everything else uses, the library's
 * references to eventfds, and the ready list.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

int d3dq_ioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

int syncobj_create(int fd, uint32_t *handle)
{
	struct drm_syncobj_create args = { 0 };
	int ret = d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &args);

	if (!ret)
		*handle = args.handle;
	return ret;
}

void syncobj_destroy(int fd, uint32_t handle)
{
	struct drm_syncobj_destroy args = { .handle = handle };

	if (handle)
		d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &args);
}

int syncobj_query(int fd, uint32_t *handles, uint64_t *points, uint32_t n,
		  uint32_t flags)
{
	struct drm_syncobj_timeline_array args = {
		.handles = (uintptr_t)handles,
		.points = (uintptr_t)points,
		.count_handles = n,
		.flags = flags,
	};

	return d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_QUERY, &args);
}

int syncobj_timeline_signal_many(int fd, const uint32_t *handles,
				 const uint64_t *points, uint32_t n)
{
	struct drm_syncobj_timeline_array args = {
		.handles = (uintptr_t)handles,
		.points = (uintptr_t)points,
		.count_handles = n,
	};

	return d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &args);
}

int syncobj_timeline_signal(int fd, uint32_t handle, uint64_t point)
{
	return syncobj_timeline_signal_many(fd, &handle, &point, 1);
}

int syncobj_timeline_wait(int fd, uint32_t *handles, uint64_t *points,
			  uint32_t n, int64_t abs_timeout_ns, uint32_t flags,
			  uint32_t *first)
{
	struct drm_syncobj_timeline_wait args = {
		.handles = (uintptr_t)handles,
		.points = (uintptr_t)points,
		.timeout_nsec = abs_timeout_ns,
		.count_handles = n,
		.flags = flags,
	};
	int ret = d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &args);

	if (!ret && first)
		*first = args.first_signaled;
	return ret;
}

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t abs_timeout(uint64_t timeout_ns)
{
	int64_t now = now_ns();

	if (timeout_ns >= (uint64_t)(INT64_MAX - now))
		return INT64_MAX;
	return now + (int64_t)timeout_ns;
}

/* What creating an object returns: 0, or the removal reason. */
int dev_removal_error(struct d3dq_device *dev)
{
	if (!dev_removed(dev))
		return 0;
	/* Stored before the device stopped (dev_remove()). */
	return atomic_load_explicit(&dev->removed_reason,
				    memory_order_relaxed);
}

/*
 * Make an object visible to device removal and d3dq_device_close().
 * Checked under the device lock, which removal holds while it takes its
 * snapshot of the lists: an object is either in the snapshot or refused.
 */
int dev_link_object(struct d3dq_device *dev, struct list *link,
		    struct list *head)
{
	int ret;

	pthread_mutex_lock(&dev->lock);
	ret = dev_removal_error(dev);
	if (!ret)
		list_add_tail(link, head);
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

/*
 * Ask for @q to be flushed (holdback.c) once the caller dropped its
 * locks. Takes a reference to the queue until then.
 */
void dev_ready_push(struct d3dq_device *dev, struct d3dq_queue *q)
{
	pthread_mutex_lock(&dev->ready_lock);
	if (!q->ready_queued) {
		q->ready_queued = true;
		queue_ref(q);
		q->ready_next = NULL;
		if (dev->ready_tail)
			dev->ready_tail->ready_next = q;
		else
			dev->ready_head = q;
		dev->ready_tail = q;
		atomic_fetch_add(&dev->nready, 1);
	}
	pthread_mutex_unlock(&dev->ready_lock);
}

/*
 * Wake the worker: it waits for the doorbell's next point. The lock keeps
 * the points in order; it is only taken here.
 */
void dev_ring(struct d3dq_device *dev)
{
	pthread_mutex_lock(&dev->doorbell_lock);
	dev->doorbell_point++;
	syncobj_timeline_signal(dev->fd, dev->doorbell, dev->doorbell_point);
	atomic_store(&dev->doorbell_seen, dev->doorbell_point);
	pthread_mutex_unlock(&dev->doorbell_lock);
}

/* Eventfd references. */

static struct evref **evtab_slot(struct d3dq_device *dev, int app_fd)
{
	return &dev->evtab[(unsigned int)app_fd % EVTAB_SIZE];
}

static struct evref *evtab_find_locked(struct d3dq_device *dev, int app_fd)
{
	struct evref *e;

	for (e = *evtab_slot(dev, app_fd); e; e = e->hnext)
		if (e->app_fd == app_fd)
			return e;
	return NULL;
}

static void evtab_unlink_locked(struct d3dq_device *dev, struct evref *e)
{
	struct evref **p;

	if (!e->in_table)
		return;
	for (p = evtab_slot(dev, e->app_fd); *p; p = &(*p)->hnext) {
		if (*p == e) {
			*p = e->hnext;
			break;
		}
	}
	e->in_table = false;
}

void evref_put(struct d3dq_device *dev, struct evref *e)
{
	bool last;

	pthread_mutex_lock(&dev->evtab_lock);
	last = --e->refs == 0;
	if (last)
		evtab_unlink_locked(dev, e);
	pthread_mutex_unlock(&dev->evtab_lock);
	if (!last)
		return;
	if (e->fd >= 0)
		close(e->fd);
	if (e->item)
		dispatch_item_free(e->item);
	free(e);
}

/*
 * Do @a and @b name the same open file? 1 yes, 0 no, -errno if the
 * kernel cannot tell (no kcmp(2): CONFIG_KCMP off, or a seccomp policy).
 */
static int same_file(int a, int b)
{
	pid_t pid = getpid();
	long r = syscall(SYS_kcmp, pid, pid, KCMP_FILE, a, b);

	if (r < 0)
		return -errno;
	return r == 0;
}

/* Take a reference on the table's entry for @app_fd if it is that file. */
static int evref_lookup(struct d3dq_device *dev, int app_fd, int fd,
			struct evref **out)
{
	struct evref *e;
	int same;

	*out = NULL;
	pthread_mutex_lock(&dev->evtab_lock);
	e = evtab_find_locked(dev, app_fd);
	if (e)
		e->refs++;
	pthread_mutex_unlock(&dev->evtab_lock);
	if (!e)
		return 0;
	same = same_file(fd, e->fd);
	if (same == 1) {
		*out = e;
		return 0;
	}
	if (same == -EBADF && fd == app_fd) {
		/* Closed: not an eventfd (R19). */
		evref_put(dev, e);
		return -EINVAL;
	}
	if (same < 0)
		atomic_store(&dev->kcmp_state, -1);
	/* The application closed the number and reused it: forget it. */
	pthread_mutex_lock(&dev->evtab_lock);
	evtab_unlink_locked(dev, e);
	pthread_mutex_unlock(&dev->evtab_lock);
	evref_put(dev, e);
	return 0;
}

/*
 * The inode every eventfd shares (eventfd(2) files are anonymous inodes),
 * for when /proc is not mounted; anon_known false if it cannot be known.
 */
static pthread_once_t anon_once = PTHREAD_ONCE_INIT;
static bool anon_known;
static dev_t anon_dev;
static ino_t anon_ino;

static void anon_probe(void)
{
	int probe = eventfd(0, EFD_CLOEXEC);
	struct stat st;

	if (probe < 0)
		return;
	if (!fstat(probe, &st)) {
		anon_dev = st.st_dev;
		anon_ino = st.st_ino;
		anon_known = true;
	}
	close(probe);
}

static bool anon_inode(const struct stat *st)
{
	pthread_once(&anon_once, anon_probe);
	return anon_known && st->st_dev == anon_dev && st->st_ino == anon_ino;
}

/*
 * Rule R19: an event is an eventfd and nothing else. 0 if @fd is one;
 * -EINVAL for anything else (a pipe, a socket, a tty, a file, a closed
 * number), before anything is written to it. The kernel names an
 * eventfd "anon_inode:[eventfd]" in /proc/self/fd; without /proc, any
 * anonymous-inode file passes (eventfd, timerfd, signalfd, epoll...: a
 * write to the others fails and changes nothing).
 */
int evref_check(int fd)
{
	static const char name[] = "anon_inode:[eventfd]";
	char path[32], link[sizeof(name)];
	struct stat st;
	ssize_t len;

	if (fd < 0 || fstat(fd, &st))
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	len = readlink(path, link, sizeof(link));
	if (len >= 0)
		return len == (ssize_t)sizeof(name) - 1 &&
		       !memcmp(link, name, sizeof(name) - 1) ? 0 : -EINVAL;
	return anon_inode(&st) ? 0 : -EINVAL;
}

/*
 * A reference to the open file behind the application's @app_fd, which
 * must be an eventfd (-EINVAL otherwise, evref_check()). One
 * duplicate serves every registration with the same file; without
 * kcmp(2) every registration gets its own duplicate.
 */
int evref_get(struct d3dq_device *dev, int app_fd, struct evref **out)
{
	struct evref *e, *other;
	bool table = atomic_load(&dev->kcmp_state) >= 0;
	int ret, fd;

	if (table) {
		ret = evref_lookup(dev, app_fd, app_fd, &e);
		if (ret)
			return ret;
		if (e) {
			*out = e;
			return 0;
		}
		table = atomic_load(&dev->kcmp_state) >= 0;
	}
	/* A file already in the table was checked when it was added. */
	ret = evref_check(app_fd);
	if (ret)
		return ret;
	fd = fcntl(app_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	e = calloc(1, sizeof(*e));
	if (!e) {
		close(fd);
		return -ENOMEM;
	}
	e->app_fd = app_fd;
	e->fd = fd;
	e->refs = 1;
	if (table) {
		/* Another thread may have added the same file meanwhile. */
		ret = evref_lookup(dev, app_fd, fd, &other);
		if (!ret && other) {
			close(fd);
			free(e);
			*out = other;
			return 0;
		}
		pthread_mutex_lock(&dev->evtab_lock);
		other = evtab_find_locked(dev, app_fd);
		if (other)
			evtab_unlink_locked(dev, other);
		e->hnext = *evtab_slot(dev, app_fd);
		*evtab_slot(dev, app_fd) = e;
		e->in_table = true;
		pthread_mutex_unlock(&dev->evtab_lock);
		if (atomic_load(&dev->kcmp_state) == 0)
			atomic_store(&dev->kcmp_state, 1);
	}
	*out = e;
	return 0;
}

/*
 * A token event: the registration's own evref (never in the table), with
 * the call of the device's callback that firing hands to the dispatcher.
 */
int evref_token(struct d3dq_device *dev, void *token, struct evref **out)
{
	struct evref *e;

	if (!dev->signal_event)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->item = dispatch_item_new(dev->signal_event, token,
				    dev->event_context);
	if (!e->item) {
		free(e);
		return -ENOMEM;
	}
	e->app_fd = -1;
	e->fd = -1;
	e->refs = 1;
	e->token = token;
	*out = e;
	return 0;
}

static int get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_d3dq_get_param args = { .param = param };
	int ret = d3dq_ioctl(fd, DRM_IOCTL_D3DQ_GET_PARAM, &args);

	if (!ret)
		*value = args.value;
	return ret;
}

static bool is_d3dq(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	bool ok;

	if (!v)
		return false;
	ok = v->name && !strcmp(v->name, "d3dq");
	drmFreeVersion(v);
	return ok;
}

static int open_node(const char *path)
{
	char name[64];
	int i, fd;

	if (path) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (!is_d3dq(fd)) {
			close(fd);
			return -ENODEV;
		}
		return fd;
	}
	for (i = 128; i < 192; i++) {
		snprintf(name, sizeof(name), "%s/renderD%d", DRM_DIR_NAME, i);
		fd = open(name, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (is_d3dq(fd))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

static int device_open(const char *path, d3dq_signal_event_fn signal_event,
		       void *context, struct d3dq_device **out)
{
	struct d3dq_device *dev;
	uint64_t v;
	int fd, ret;

	fd = open_node(path);
	if (fd < 0)
		return fd;

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		close(fd);
		return -ENOMEM;
	}
	dev->fd = fd;
	dev->signal_event = signal_event;
	dev->event_context = context;
	ret = get_param(fd, DRM_D3DQ_PARAM_UAPI_VERSION, &v);
	if (ret)
		goto err;
	if ((v >> 16) != DRM_D3DQ_UAPI_MAJOR) {
		ret = -ENOTSUP;
		goto err;
	}
	ret = get_param(fd, DRM_D3DQ_PARAM_FEATURES, &v);
	if (ret)
		goto err;
	dev->can_release = v & DRM_D3DQ_FEATURE_WAIT_RELEASE;
	dev->has_realtime = v & DRM_D3DQ_FEATURE_PRIORITY;
	ret = get_param(fd, DRM_D3DQ_PARAM_MAX_SYNCS, &v);
	if (ret)
		goto err;
	dev->max_syncs = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	ret = get_param(fd, DRM_D3DQ_PARAM_MAX_CMD_BYTES, &v);
	if (ret)
		goto err;
	dev->max_cmd_bytes = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	ret = get_param(fd, DRM_D3DQ_PARAM_MAX_DELAY_NS, &v);
	if (ret)
		goto err;
	dev->max_delay_ns = v;
	if (dev->max_syncs < 2 || dev->max_cmd_bytes < 64) {
		ret = -ENOTSUP;
		goto err;
	}
	if (signal_event) {
		ret = dispatch_get();
		if (ret)
			goto err;
	}
	ret = syncobj_create(fd, &dev->doorbell);
	if (ret) {
		if (signal_event)
			dispatch_put();
		goto err;
	}

	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->remove_lock, NULL);
	pthread_mutex_init(&dev->apply_lock, NULL);
	pthread_mutex_init(&dev->ready_lock, NULL);
	pthread_mutex_init(&dev->evtab_lock, NULL);
	pthread_mutex_init(&dev->doorbell_lock, NULL);
	pthread_mutex_init(&dev->worker_lock, NULL);
	list_init(&dev->queues);
	list_init(&dev->fences);
	list_init(&dev->watched);
	list_init(&dev->active);
	list_init(&dev->buffers);
	list_init(&dev->cmdlists);
	*out = dev;
	return 0;

err:
	close(fd);
	free(dev);
	return ret;
}

D3DQ_EXPORT int d3dq_device_open(const char *path, struct d3dq_device **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	return device_open(path, NULL, NULL, out);
}

D3DQ_EXPORT int d3dq_device_open_desc(const struct d3dq_device_desc *desc,
				      struct d3dq_device **out)
{
	struct d3dq_device_desc d;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	ret = device_desc_copy(desc, &d);
	if (ret)
		return ret;
	return device_open(d.path, d.signal_event, d.context, out);
}

/*
 * Everything the application did not destroy is destroyed here, queues
 * first (their submitted work finishes, held work is dropped), so that
 * the waits they still had on fences are gone before the fences.
 */
D3DQ_EXPORT void d3dq_device_close(struct d3dq_device *dev)
{
	struct list *pos, *tmp;
	unsigned int i;

	if (!dev)
		return;
	worker_stop(dev);
	list_for_each_safe(pos, tmp, &dev->queues)
		d3dq_queue_destroy(container_of(pos, struct d3dq_queue,
						dev_link));
	list_for_each_safe(pos, tmp, &dev->fences)
		d3dq_fence_destroy(container_of(pos, struct d3dq_fence,
						dev_link));
	list_for_each_safe(pos, tmp, &dev->buffers)
		d3dq_buffer_destroy(container_of(pos, struct d3dq_buffer,
						 dev_link));
	list_for_each_safe(pos, tmp, &dev->cmdlists)
		d3dq_cmdlist_destroy(container_of(pos, struct d3dq_cmdlist,
						  dev_link));
	/* Only entries nobody references any more can be left. */
	for (i = 0; i < EVTAB_SIZE; i++) {
		while (dev->evtab[i]) {
			struct evref *e = dev->evtab[i];

			dev->evtab[i] = e->hnext;
			close(e->fd);
			free(e);
		}
	}
	/*
	 * Destroying the fences fired what was registered (R14): the
	 * callbacks are called before the close returns.
	 */
	if (dev->signal_event)
		dispatch_put();
	syncobj_destroy(dev->fd, dev->doorbell);
	close(dev->fd);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->remove_lock);
	pthread_mutex_destroy(&dev->apply_lock);
	pthread_mutex_destroy(&dev->ready_lock);
	pthread_mutex_destroy(&dev->evtab_lock);
	pthread_mutex_destroy(&dev->doorbell_lock);
	pthread_mutex_destroy(&dev->worker_lock);
	free(dev);
}

D3DQ_EXPORT int d3dq_device_removed_reason(struct d3dq_device *dev)
{
	/* -EFAULT means "not a device": dev_remove() never records it. */
	if (!dev)
		return -EFAULT;
	return dev_removal_error(dev);
}

D3DQ_EXPORT int d3dq_device_remove(struct d3dq_device *dev)
{
	if (!dev)
		return -EINVAL;
	dev_remove(dev, -ENODEV);
	run_flushes(dev);
	return 0;
}
