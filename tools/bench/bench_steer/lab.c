// SPDX-License-Identifier: GPL-2.0
/* bench_steer's lab: namespaces, the generator, each variant's set-up. */
#include <fcntl.h>
#include <linux/if_link.h>
#include "steer.h"

const char *const variant_name[NR_VARIANTS] = { "no_silo", "rps", "rfs",
						"reuseport", "steering" };

/* Removes the namespaces (their veths and XDP attachments) and the pins. */
void lab_down(void)
{
	sh("for n in %s %s; do ip netns del $n 2>/dev/null; done; rm -rf %s; true",
	   NS_CLIENT, NS_SERVER, PIN_ROOT);
}

int lab_up(void)
{
	return sh(
		"set -e\n"
		"for n in %1$s %2$s; do ip netns add $n; ip -n $n link set lo up; done\n"
		/* The client stays silent: no IPv6 (MLD, DAD, RS). */
		"ip netns exec %1$s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1\n"
		"ip netns exec %2$s sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0\n"
		"ip -n %1$s link add %3$s type veth peer name %4$s netns %2$s\n"
		"ip -n %2$s link add %5$s type veth peer name %5$sp\n"
		"ip -n %2$s addr add fd03::2/64 dev %4$s nodad\n"
		/* The prober's address, on bsc0 only, and no chatter: no
		 * link-local address, DAD or solicitations. */
		"ip netns exec %1$s sysctl -qw net.ipv6.conf.%3$s.addr_gen_mode=1 net.ipv6.conf.%3$s.accept_dad=0 net.ipv6.conf.%3$s.router_solicitations=0 net.ipv6.conf.%3$s.disable_ipv6=0\n"
		"ip -n %1$s addr add fd03::100:0/128 dev %3$s nodad\n"
		/* Requests with full checksums, as a NIC receives them. */
		"ip netns exec %1$s ethtool -K %3$s gro off tx off >/dev/null\n"
		"ip netns exec %2$s ethtool -K %4$s gro off\n"
		"ip -n %1$s link set %3$s up\n"
		"ip -n %2$s link set %4$s up\n"
		"ip -n %1$s route add fd03::2/128 dev %3$s\n",
		NS_CLIENT, NS_SERVER, DEV_CLIENT, DEV_SERVER, DEV_HOLD);
}

/* Each side's neighbour, for the prober's requests and their answers. */
int lab_neighbours(void)
{
	const uint8_t *c = L.spec.smac, *s = L.spec.dmac;

	return sh(
		"set -e\n"
		"ip -n %s neigh add fd03::2 lladdr %02x:%02x:%02x:%02x:%02x:%02x dev %s nud permanent\n"
		"ip -n %s neigh add fd03::100:0 lladdr %02x:%02x:%02x:%02x:%02x:%02x dev %s nud permanent\n",
		NS_CLIENT, s[0], s[1], s[2], s[3], s[4], s[5], DEV_CLIENT,
		NS_SERVER, c[0], c[1], c[2], c[3], c[4], c[5], DEV_SERVER);
}

/*
 * The source: a pump (tools/lib/source.h) in the client's namespace, whose
 * copies go out of bsc0, run by this thread's CPU (GEN_CPU); one class
 * per service (its port), checked through BPF_PROG_TEST_RUN (no live
 * frames) to write exactly the frames it should. Enters the client.
 */
int gen_setup(void)
{
	struct source_opts o = { .shape = SOURCE_PUMP,
				 .entry = DEV_CLIENT,
				 .loop = LOOP,
				 .cpu = -1 };
	static uint8_t frames[MAX_SVC][PKT_MAX];
	struct source_class cls[MAX_SVC] = {};
	struct pkt_spec sp = L.spec;
	__u8 pat[MAX_SVC];
	int i, err;

	for (i = 0; i < MAX_SVC; i++) {
		sp.dport = PORT + i;
		cls[i].frame = frames[i];
		cls[i].len = pkt_build(frames[i], &sp);
		pat[i] = i;
	}
	if (bench_enter("bench_steer", L.ns_client))
		return -1;
	err = source_open(&L.src, &o)			      ?:
		      source_set_classes(L.src, cls, MAX_SVC) ?:
		      source_set_pattern(L.src, pat, MAX_SVC, SRC_BASE, SOURCES) ?:
		      source_check(L.src);
	L.cannot_run = source_cannot_run(err);
	if (err)
		fprintf(stderr, "bench_steer: the traffic source %s\n",
			L.cannot_run ? "cannot run here" :
				       "does not send what it should");
	return err ? -1 : 0;
}

/* n more datagrams from the pump: 0, or -1 (said). */
int gen_send(unsigned long n)
{
	int err = source_credit(L.src, n);

	if (err) {
		fprintf(stderr, "bench_steer: the source: %s\n",
			strerror(-err));
		return -1;
	}
	L.nr_sent += n;
	return 0;
}

/*
 * The generator's flows: frames to each service in turn, from SOURCES
 * sources, or from one (SRC_BASE, the peer a connected reader connects
 * to): a connected socket takes one flow only.
 */
void gen_flows(bool connected)
{
	__u8 pat[MAX_SVC];
	int i;

	for (i = 0; i < L.nsvc; i++)
		pat[i] = i;
	source_set_pattern(L.src, pat, L.nsvc, SRC_BASE,
			   connected ? 1 : SOURCES);
}

/* Writes val to a file of rx-0 of the server's veth, through the server's
 * sysfs (this process's shows another namespace's devices): 0 or -EIO. */
static int server_sysfs(const char *file, const char *val)
{
	return sh("ip netns exec %s sh -c 'echo %s > /sys/class/net/%s/queues/rx-0/%s'",
		  NS_SERVER, val, DEV_SERVER, file) ?
		       -EIO :
		       0;
}

/* The readers' CPUs as rps_cpus takes a mask: 32-bit hex words, the
 * highest first, commas between. */
static void readers_mask(char *buf, size_t len)
{
	int words = 1, w, i;
	size_t off = 0;
	__u32 word;

	for (i = 0; i < L.nsvc; i++)
		if (L.svc[i].cpu / 32 + 1 > words)
			words = L.svc[i].cpu / 32 + 1;
	for (w = words - 1; w >= 0 && off < len; w--) {
		for (word = 0, i = 0; i < L.nsvc; i++)
			if (L.svc[i].cpu / 32 == w)
				word |= 1U << (L.svc[i].cpu % 32);
		off += snprintf(buf + off, len - off, "%s%08x",
				w == words - 1 ? "" : ",", word);
	}
}

/* The host's rps_sock_flow_entries (init_net's only): set to val, the
 * first value kept in L.rfs_saved. Enters the original namespace. */
static int rfs_entries(int val)
{
	char buf[32];
	ssize_t n;
	int fd, err = bench_enter("bench_steer", L.ns_orig);

	if (err)
		return err;
	fd = open("/proc/sys/net/core/rps_sock_flow_entries", O_RDWR);
	if (fd < 0)
		return -errno;
	if (L.rfs_saved < 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		buf[n] = '\0';
		L.rfs_saved = atoi(buf);
	}
	n = snprintf(buf, sizeof(buf), "%d\n", val);
	err = pwrite(fd, buf, n, 0) == n ? 0 : -errno;
	close(fd);
	return err;
}

/* Puts back the host's rps_sock_flow_entries, when this run changed it. */
int rfs_restore(void)
{
	int err;

	if (L.rfs_saved < 0)
		return 0;
	err = rfs_entries(L.rfs_saved);
	if (!err)
		L.rfs_saved = -1;
	return err;
}

/*
 * The kernel's own steering on the receiving queue: RPS to the readers'
 * CPUs (rps_cpus: each flow to one of them by its hash), and with RFS each
 * flow to the CPU that last read its socket (rps_flow_cnt on the queue,
 * rps_sock_flow_entries on the host), or neither. Enters the server's
 * namespace.
 */
static int set_rps(bool rps, bool rfs)
{
	char mask[512] = "0", cnt[16];
	int err = 0;

	if (rps || rfs)
		readers_mask(mask, sizeof(mask));
	snprintf(cnt, sizeof(cnt), "%d", rfs ? RFS_ENTRIES : 0);
	if (rfs)
		err = rfs_entries(RFS_ENTRIES);
	if (!err)
		err = bench_enter("bench_steer", L.ns_server);
	if (!err)
		err = server_sysfs("rps_cpus", mask);
	if (!err)
		err = server_sysfs("rps_flow_cnt", cnt);
	return err;
}

/* The receiving veth's program: silo (steering) or XDP_PASS (veth takes
 * redirected frames only with a program on the receiving end). */
static int set_xdp(bool silo)
{
	struct silo_xdp_load_opts o = { .mode = SILO_XDP_NATIVE };
	int err;

	if (L.server_silo && !silo) {
		err = silo_xdp_unload(L.s, DEV_SERVER);
		if (err)
			return err;
		L.server_silo = false;
	}
	if (L.server_pass && silo) {
		err = bpf_xdp_detach(L.server_ifindex, XDP_FLAGS_DRV_MODE,
				     NULL);
		if (err)
			return err;
		L.server_pass = false;
	}
	if (silo && !L.server_silo) {
		err = silo_xdp_load(L.s, DEV_SERVER, &o);
		if (err)
			return err;
		L.server_silo = true;
	}
	if (!silo && !L.server_pass) {
		err = bpf_xdp_attach(L.server_ifindex,
				     bpf_program__fd(L.skel->progs.xdp_pass),
				     XDP_FLAGS_DRV_MODE, NULL);
		if (err)
			return err;
		L.server_pass = true;
	}
	return 0;
}

/*
 * Variant v in the server's namespace: RPS and RFS, the readers connected
 * or not (connected: the case's, or RFS's, which steers only connected
 * flows), the receiving veth's program, and the groups' program (off
 * without silo: the kernel's own selection).
 */
int set_variant(int v, bool connected)
{
	bool conn = connected || v == RFS;
	int err, i, unused = 0;

	err = set_rps(v == RPS, v == RFS);
	if (!err)
		err = set_xdp(v == STEERING);
	gen_flows(conn);
	for (i = 0; !err && i < L.nsvc; i++) {
		struct svc *c = &L.svc[i];

		err = svc_connect(c, conn);
		if (err || !c->g)
			continue;
		if (v == REUSEPORT || v == STEERING)
			err = silo_group_attach(c->g, c->sock);
		else if (setsockopt(c->sock, SOL_SOCKET,
				    SO_DETACH_REUSEPORT_BPF, &unused,
				    sizeof(unused)) &&
			 errno != ENOENT)
			err = -errno;
	}
	if (!err && v == STEERING)
		err = silo_service_sync(L.s) < 0 ? -EIO : 0;
	return err;
}
