// SPDX-License-Identifier: GPL-2.0
/*
 * prog_size: what silo's XDP program costs the kernel to hold and to verify,
 * for comparing two builds of the data path (a refactoring must not change
 * it). In a network namespace of its own, silo is loaded with forwarding on
 * two veths: one bound to its device (silo_xdp_dev, where the driver reports
 * VLAN tags as RX metadata) and one unbound (silo_xdp). For each program one
 * JSON line: the xlated and jited sizes (what "bpftool prog show" says) and
 * the instructions the verifier processed (bpf_prog_info.verified_insns).
 *
 *   prog_size
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "silo/silo.h"

static int print_prog(const char *variant, __u32 id)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd, err = 0;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto close_fd;
	}
	printf("{\"bench\":\"prog_size\",\"variant\":\"%s\",\"name\":\"%s\","
	       "\"xlated\":%u,\"jited\":%u,\"verified_insns\":%u}\n",
	       variant, info.name, info.xlated_prog_len, info.jited_prog_len,
	       info.verified_insns);
close_fd:
	close(fd);
	return err;
}

int main(void)
{
	struct silo_xdp_load_opts bound = { .forward = true };
	struct silo_xdp_load_opts unbound = { .forward = true,
					      .unbound = true };
	char pin_root[64], cmd[128];
	struct silo_opts opts = { .pin_root = pin_root };
	struct silo_xdp_dev *devs = NULL;
	struct silo *s = NULL;
	size_t n = 0, i;
	int err, ret = 1;

	/* A namespace of the process's own: it goes, veths and all, with it. */
	if (unshare(CLONE_NEWNET)) {
		perror("prog_size: unshare (run as root)");
		return 1;
	}
	snprintf(pin_root, sizeof(pin_root), "/sys/fs/bpf/silo-size-%d",
		 (int)getpid());
	if (system("ip link add sz0 type veth peer name sz0p && "
		   "ip link add sz1 type veth peer name sz1p && "
		   "for d in sz0 sz0p sz1 sz1p; do ip link set $d up; done")) {
		fprintf(stderr, "prog_size: cannot make the veths\n");
		return 1;
	}
	err = silo_open(&s, &opts);
	if (err)
		goto fail;
	err = silo_xdp_load(s, "sz0", &bound);
	if (!err)
		err = silo_xdp_load(s, "sz1", &unbound);
	if (!err)
		err = silo_xdp_list(s, &devs, &n);
	for (i = 0; !err && i < n; i++)
		err = print_prog(devs[i].ifindex == if_nametoindex("sz0") ?
					 "bound" :
					 "unbound",
				 devs[i].prog_id);
	if (!err)
		ret = 0;
fail:
	if (err)
		fprintf(stderr, "prog_size: %s\n", strerror(-err));
	free(devs);
	if (s) {
		silo_xdp_unload(s, "sz0");
		silo_xdp_unload(s, "sz1");
		silo_close(s);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", pin_root);
	if (system(cmd))
		ret = 1;
	return ret;
}
