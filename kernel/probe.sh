#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Compile probes: which kernel interfaces the tree being built against
# has. Distributions backport DRM changes into older kernels, so the
# version number says little, and the text of a header says too much (a
# comment, an #if 0 or a reformatted declaration fools a grep): each
# answer is whether a C snippet that uses the interface as d3dq_compat.h
# does compiles against the kernel's headers with the module's own
# Kbuild flags. Kbuild runs the probes (kernel/Kbuild): each snippet is
# one object in .probe/ of the build directory, compiled in parallel and
# again only when the snippet or a header it read changes.
#
#   probe.sh list             the probes, one id per line
#   probe.sh source ID        the C source of probe ID
#   probe.sh header DIR       d3dq_config.h from DIR/ID.res (the compiler's
#                             exit status) and DIR/ID.log (its messages)
#
# The table below is the one place that says what each probe selects:
# "probe MACRO UPSTREAM" with its snippet on stdin. MACRO is defined when
# the snippet compiles; a macro with several snippets in a row (the same
# interface in the releases before and after a change of form) is defined
# when one of them compiles. The probe named "sanity" must compile: it
# only includes the headers every probe includes, so when it fails the
# tree or the flags are broken and no answer could be trusted. A probe
# that fails with anything but a compiler error (a missing header, a
# crash) fails the build too. d3dq_compat.h turns each macro into one
# shim; Documentation/driver.rst lists them.
set -eu

die() {
	echo "probe.sh: $*" >&2
	exit 1
}

# Every probe includes these (the sanity probe proves they compile), so
# a snippet fails only on the interface it uses. Test for a header that
# not every supported kernel has with __has_include in the snippet.
prologue() {
	cat <<'EOF'
#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/iosys-map.h>
#include <linux/platform_device.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <drm/gpu_scheduler.h>
EOF
}

table() {
probe sanity - <<'EOF'
static int __maybe_unused d3dq_probe(struct drm_device *dev)
{
	return drm_dev_register(dev, 0);
}
EOF

probe D3DQ_HAVE_SCHED_INIT_ARGS '6.15 796a9f55a8d1' <<'EOF'
static int __maybe_unused d3dq_probe(struct drm_gpu_scheduler *sched)
{
	const struct drm_sched_init_args args = { .name = "d3dq" };

	return drm_sched_init(sched, &args);
}
EOF

# The submission workqueue: a member of the arguments, or before 6.15 the
# third parameter.
probe D3DQ_HAVE_SCHED_SUBMIT_WQ '6.8 a6149f039369' <<'EOF'
static void __maybe_unused d3dq_probe(struct drm_sched_init_args *args,
				      struct workqueue_struct *wq)
{
	args->submit_wq = wq;
}
EOF
probe D3DQ_HAVE_SCHED_SUBMIT_WQ '6.8 a6149f039369' <<'EOF'
static int __maybe_unused d3dq_probe(struct drm_gpu_scheduler *sched,
				     const struct drm_sched_backend_ops *ops,
				     struct workqueue_struct *wq,
				     struct device *dev)
{
	return drm_sched_init(sched, ops, wq, DRM_SCHED_PRIORITY_COUNT, 1, 0,
			      1, NULL, NULL, "d3dq", dev);
}
EOF

# The number of run queues: a member of the arguments, or a parameter
# (6.7; 6.8 put the submission workqueue before it).
probe D3DQ_HAVE_SCHED_NUM_RQS '6.7 56e449603f0a' <<'EOF'
static void __maybe_unused d3dq_probe(struct drm_sched_init_args *args)
{
	args->num_rqs = DRM_SCHED_PRIORITY_COUNT;
}
EOF
probe D3DQ_HAVE_SCHED_NUM_RQS '6.7 56e449603f0a' <<'EOF'
static int __maybe_unused d3dq_probe(struct drm_gpu_scheduler *sched,
				     const struct drm_sched_backend_ops *ops,
				     struct device *dev)
{
	return drm_sched_init(sched, ops, DRM_SCHED_PRIORITY_COUNT, 1, 0, 1,
			      NULL, NULL, "d3dq", dev);
}
EOF
probe D3DQ_HAVE_SCHED_NUM_RQS '6.7 56e449603f0a' <<'EOF'
static int __maybe_unused d3dq_probe(struct drm_gpu_scheduler *sched,
				     const struct drm_sched_backend_ops *ops,
				     struct device *dev)
{
	return drm_sched_init(sched, ops, NULL, DRM_SCHED_PRIORITY_COUNT, 1, 0,
			      1, NULL, NULL, "d3dq", dev);
}
EOF

# The job's credits, with or without the client id after them (6.16).
probe D3DQ_HAVE_SCHED_JOB_CREDITS '6.8 a78422e9dff3' <<'EOF'
static int __maybe_unused d3dq_probe(struct drm_sched_job *job,
				     struct drm_sched_entity *entity)
{
	return drm_sched_job_init(job, entity, 1, NULL);
}
EOF
probe D3DQ_HAVE_SCHED_JOB_CREDITS '6.8 a78422e9dff3' <<'EOF'
static int __maybe_unused d3dq_probe(struct drm_sched_job *job,
				     struct drm_sched_entity *entity)
{
	return drm_sched_job_init(job, entity, 1, NULL, 0);
}
EOF

probe D3DQ_HAVE_SCHED_JOB_CLIENT_ID '6.16 2956554823ce' <<'EOF'
static int __maybe_unused d3dq_probe(struct drm_sched_job *job,
				     struct drm_sched_entity *entity,
				     struct drm_file *file)
{
	return drm_sched_job_init(job, entity, 1, NULL, file->client_id);
}
EOF

probe D3DQ_HAVE_SCHED_STAT_RESET '6.17 0a5dc1b67ef5' <<'EOF'
static enum drm_gpu_sched_stat __maybe_unused d3dq_probe(void)
{
	return DRM_GPU_SCHED_STAT_RESET;
}
EOF

probe D3DQ_HAVE_GEM_VMAP_UNLOCKED '6.2 79e2cf2e7a19' <<'EOF'
static void __maybe_unused d3dq_probe(struct drm_gem_object *obj,
				      struct iosys_map *map)
{
	if (!drm_gem_vmap_unlocked(obj, map))
		drm_gem_vunmap_unlocked(obj, map);
}
EOF

probe D3DQ_HAVE_GEM_SHMEM_VMAP_LOCKED '6.16 8f5c4871a014 954907f7147d' <<'EOF'
static void __maybe_unused d3dq_probe(struct drm_gem_shmem_object *shmem,
				      struct iosys_map *map)
{
	if (!drm_gem_shmem_vmap_locked(shmem, map))
		drm_gem_shmem_vunmap_locked(shmem, map);
}
EOF

# dma_buf_vmap() under the caller's reservation lock, and the variant
# that takes it (6.2, "dma-buf: Add unlocked variant of vmapping
# functions"; the commit id was not looked up). 6.1's dma_buf_vmap()
# takes the dma-buf's own mutex and needs no reservation lock.
probe D3DQ_HAVE_DMA_BUF_VMAP_UNLOCKED '6.2' <<'EOF'
#include <linux/dma-buf.h>

static void __maybe_unused d3dq_probe(struct dma_buf *buf,
				      struct iosys_map *map)
{
	if (!dma_buf_vmap_unlocked(buf, map))
		dma_buf_vunmap_unlocked(buf, map);
}
EOF

# A symbol namespace named by a bare token; 6.13 ("module: Convert
# symbol namespace to string literal"; the commit id was not looked up)
# made it a string literal, which older kernels would quote once more.
probe D3DQ_HAVE_MODULE_IMPORT_NS_TOKEN 'removed 6.13' <<'EOF'
#include <linux/module.h>

MODULE_IMPORT_NS(DMA_BUF);
EOF

probe D3DQ_HAVE_HRTIMER_SETUP '6.13 908a1d775422' <<'EOF'
static void __maybe_unused d3dq_probe(struct hrtimer *timer,
				      enum hrtimer_restart (*fn)(struct hrtimer *))
{
	hrtimer_setup(timer, fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
}
EOF

# drm_file.pid became __rcu, which only sparse sees; the same change
# added drm_file_update_pid().
probe D3DQ_HAVE_FILE_PID_RCU '6.7 1c7a387ffef8' <<'EOF'
static void __maybe_unused d3dq_probe(struct drm_file *file)
{
	drm_file_update_pid(file);
}
EOF

probe D3DQ_HAVE_FILE_CLIENT_ID '6.5 3f09a0cd4ea3' <<'EOF'
static u64 __maybe_unused d3dq_probe(struct drm_file *file)
{
	return file->client_id;
}
EOF

probe D3DQ_HAVE_DRIVER_DATE 'removed 6.14 cb2e1c2136f7' <<'EOF'
static const struct drm_driver d3dq_probe __maybe_unused = {
	.date = "20260101",
};
EOF

probe D3DQ_HAVE_DRIVER_GEM_PRIME_MMAP 'removed 6.6 0adec22702d4' <<'EOF'
static const struct drm_driver d3dq_probe __maybe_unused = {
	.gem_prime_mmap = drm_gem_prime_mmap,
};
EOF

# .remove returns void (6.11); 6.3's void .remove_new was a second member.
probe D3DQ_HAVE_PLATFORM_REMOVE_VOID '6.11 0edb555a65d1' <<'EOF'
static_assert(__same_type(((struct platform_driver *)NULL)->remove,
			  void (*)(struct platform_device *)));
EOF

probe D3DQ_HAVE_DRM_SHOW_FDINFO '6.5 3f09a0cd4ea3' <<'EOF'
static void d3dq_probe_show(struct drm_printer *p, struct drm_file *file)
{
}

static const struct drm_driver d3dq_probe_driver __maybe_unused = {
	.show_fdinfo = d3dq_probe_show,
};

static const struct file_operations d3dq_probe_fops __maybe_unused = {
	.show_fdinfo = drm_show_fdinfo,
};
EOF

probe D3DQ_HAVE_DRM_SHOW_MEMORY_STATS '6.5 686b21b5f6ca' <<'EOF'
static void __maybe_unused d3dq_probe(struct drm_printer *p,
				      struct drm_file *file)
{
	drm_show_memory_stats(p, file);
}
EOF

probe D3DQ_HAVE_GEM_OBJECT_STATUS '6.5 686b21b5f6ca' <<'EOF'
static enum drm_gem_object_status d3dq_probe(struct drm_gem_object *obj)
{
	return DRM_GEM_OBJECT_RESIDENT;
}

static const struct drm_gem_object_funcs d3dq_probe_funcs __maybe_unused = {
	.status = d3dq_probe,
};
EOF

# The members of DRM_GEM_FOPS that d3dq_compat.h lists beside its own
# .mmap: .fop_flags (6.12, "fs: move FMODE_UNSIGNED_OFFSET to fop_flags")
# and .get_unmapped_area (7.x; the commit was not looked up).
probe D3DQ_HAVE_GEM_FOPS_FLAGS '6.12' <<'EOF'
static const struct file_operations d3dq_probe __maybe_unused = {
	.fop_flags = FOP_UNSIGNED_OFFSET,
};
EOF

probe D3DQ_HAVE_GEM_FOPS_UNMAPPED_AREA '7.x' <<'EOF'
static const struct file_operations d3dq_probe __maybe_unused = {
	.get_unmapped_area = drm_gem_get_unmapped_area,
};
EOF

# eventfd_signal() lost its count in 6.8 ("eventfd: simplify
# eventfd_signal()").
probe D3DQ_HAVE_EVENTFD_SIGNAL_COUNT 'removed 6.8' <<'EOF'
#include <linux/eventfd.h>

static void __maybe_unused d3dq_probe(struct eventfd_ctx *ctx)
{
	eventfd_signal(ctx, 1);
}
EOF

probe D3DQ_HAVE_VM_FLAGS_SET '6.3' <<'EOF'
#include <linux/mm.h>

static void __maybe_unused d3dq_probe(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
	vm_flags_clear(vma, VM_MAYWRITE);
}
EOF
}

# The id of each snippet: its macro, then MACRO-2, MACRO-3 for the
# alternatives that follow it.
last=
n=0
next_id() {
	if [ "$1" = "$last" ]; then
		n=$((n + 1))
		id=$1-$n
	else
		case " $seen " in
		*" $1 "*) die "the snippets of $1 are not together in the table" ;;
		esac
		seen="$seen $1"
		last=$1
		n=1
		id=$1
	fi
}

seen=
mode=${1:-}
case $mode in
list)
	probe() {
		next_id "$1"
		echo "$id"
	}
	table
	;;
source)
	[ $# -eq 2 ] || die "usage: probe.sh source ID"
	want=$2
	found=
	probe() {
		next_id "$1"
		if [ "$id" = "$want" ]; then
			found=1
			echo "/* Generated by probe.sh: probe $id (upstream $2). */"
			prologue
			echo
			cat
		fi
	}
	table
	[ -n "$found" ] || die "no probe $want"
	;;
header)
	[ $# -eq 2 ] || die "usage: probe.sh header DIR"
	dir=$2
	# result ID: 0 if probe ID compiled, 1 if it failed with a compiler
	# error; anything else fails the build.
	result() {
		rc=$(cat "$dir/$1.res" 2>/dev/null) || die "no result for probe $1 in $dir"
		[ "$rc" = 0 ] && return 0
		if [ "$1" = sanity ]; then
			broken "the sanity probe does not compile against these headers with these flags"
		fi
		case $rc in
		1) ;;
		*) broken "probe $1: the compiler exited with status $rc" "$1" ;;
		esac
		if grep -q 'fatal error\|internal compiler error' "$dir/$1.log" ||
			! grep -q 'error:' "$dir/$1.log"; then
			broken "probe $1 failed, but not with a compiler error" "$1"
		fi
		return 1
	}
	# broken MESSAGE [ID]: fail loudly, and have every probe run again.
	broken() {
		echo "probe.sh: $1 ($dir/${2:-sanity}.c):" >&2
		sed 's/^/  /' "$dir/${2:-sanity}.log" | head -n 40 >&2
		rm -f "$dir"/*.res
		exit 1
	}
	out() {
		[ -n "$last" ] || return 0
		if [ -n "$have" ]; then
			echo "#define $last 1"
		else
			echo "/* #undef $last */"
		fi
	}
	have=
	probe() {
		if [ "$1" = sanity ]; then
			result sanity
			return
		fi
		[ "$1" = "$last" ] || { out; have=; }
		next_id "$1"
		! result "$id" || have=1
	}
	echo "/* Generated by probe.sh from the compile probes in .probe/; do not edit. */"
	echo "#ifndef _D3DQ_CONFIG_H_"
	echo "#define _D3DQ_CONFIG_H_"
	table
	out
	echo "#endif /* _D3DQ_CONFIG_H_ */"
	;;
*)
	die "usage: probe.sh list | source ID | header DIR"
	;;
esac
