// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Pins of an earlier release, whose XDP program took no multi-buffer
 * frames: the kernel ties a map that holds redirect targets (a cpumap, a
 * devmap) to the kind of the first program loaded with it, the frags flag
 * included (__bpf_prog_map_compatible()), and refuses any other program
 * that uses it, with EINVAL, after verification. So each such map is tried
 * with a program of this release's kind that does nothing, and one that
 * refuses it is made again, its entries copied, and pinned in its place.
 *
 * A refusal after verification of a program bound to its device can leave
 * the kernel (6.18) with a freed program on the device's offload list,
 * which the device's unregister then touches: the probe is never bound,
 * and it runs before any program of silo's is loaded over the pins.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "maps.h"
#include "pins.h"
#include "util.h"

/* 0 when a frags XDP program may use the map, -EINVAL when the kernel
 * refuses it, another negative errno when the probe could not be made. */
static int map_takes_frags(int map_fd)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_XDP,
		    .prog_flags = BPF_F_XDP_HAS_FRAGS);
	/* r1 = the map (so it is the program's), r0 = XDP_PASS, exit. */
	struct bpf_insn insns[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM,
		  .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map_fd },
		{},
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K,
		  .dst_reg = BPF_REG_0,
		  .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd;

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "silo_frags_ok", "GPL", insns,
			   ARRAY_SIZE(insns), &opts);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Copies every entry of from into to (same key and value sizes). A cpumap
 * entry is read with its program's id and written with an fd: silo's have
 * none, and one that has is refused. */
static int map_copy(int from, int to, __u32 key_size, __u32 value_size)
{
	void *key = calloc(1, key_size), *next = calloc(1, key_size);
	void *val = calloc(1, value_size);
	bool first = true;
	int err = 0;

	if (!key || !next || !val) {
		err = -ENOMEM;
		goto out_free;
	}
	while (!bpf_map_get_next_key(from, first ? NULL : key, next)) {
		memcpy(key, next, key_size);
		first = false;
		if (bpf_map_lookup_elem(from, key, val))
			continue; /* an empty cpumap slot */
		if (bpf_map_update_elem(to, key, val, BPF_ANY)) {
			err = -errno;
			goto out_free;
		}
	}
out_free:
	free(key);
	free(next);
	free(val);
	return err;
}

/*
 * Map i made again like the pinned one (type, sizes, flags, BTF), its
 * entries copied, and pinned in its place: beside it first, then renamed
 * over it, so that the pin is never missing. Programs loaded before keep
 * the old map until they are replaced.
 */
static int map_remake(struct silo *s, struct silo_maps *m, unsigned int i)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	int fd, btf_fd = -1, err;

	if (bpf_obj_get_info_by_fd(m->fd[i], &info, &len))
		return -errno;
	if (info.btf_id) {
		btf_fd = bpf_btf_get_fd_by_id(info.btf_id);
		if (btf_fd >= 0) {
			opts.btf_fd = btf_fd;
			opts.btf_key_type_id = info.btf_key_type_id;
			opts.btf_value_type_id = info.btf_value_type_id;
		}
	}
	opts.map_flags = info.map_flags;
	fd = bpf_map_create(info.type, info.name, info.key_size,
			    info.value_size, info.max_entries, &opts);
	err = fd < 0 ? -errno : 0;
	if (btf_fd >= 0)
		close(btf_fd);
	if (err)
		return err;
	err = map_copy(m->fd[i], fd, info.key_size, info.value_size);
	if (err)
		goto out_close;
	silo_pin_path(s, path, sizeof(path), silo_map_names[i]);
	/* bpffs takes no dot in a name. */
	snprintf(tmp, sizeof(tmp), "%s-new", path);
	unlink(tmp);
	if (bpf_obj_pin(fd, tmp)) {
		err = -errno;
		goto out_close;
	}
	if (rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
		goto out_close;
	}
	pr_info("the %s map pinned by an earlier release takes no multi-buffer program: made it again, in place of map %u (programs loaded before keep that one until they are loaded again)\n",
		silo_map_names[i], info.id);
	close(m->fd[i]);
	m->fd[i] = fd;
	return 0;

out_close:
	close(fd);
	return err;
}

int silo_maps_frags(struct silo *s, struct silo_maps *m)
{
	static const unsigned int owned[] = { SILO_MAP_CPUMAP,
					      SILO_MAP_TX_PORTS };
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(owned); i++) {
		err = map_takes_frags(m->fd[owned[i]]);
		if (err == -EINVAL)
			err = map_remake(s, m, owned[i]);
		if (err) {
			pr_err("cannot make the %s map pinned in %s take silo's program: %s\n",
			       silo_map_names[owned[i]], s->pin_dir,
			       strerror(-err));
			return err;
		}
	}
	return 0;
}
