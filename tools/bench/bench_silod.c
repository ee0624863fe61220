// SPDX-License-Identifier: GPL-2.0
/*
 * bench_silod: silod under route churn, scoped invalidation side by side
 * with a global genid bump per route change, in one run.
 *
 * In a network namespace of its own, with silo forwarding on a veth: a
 * steady set of cached flows is forwarded through BPF_PROG_TEST_RUN while
 * another thread changes unrelated routes at a fixed rate (add, then delete,
 * over netlink) for a while. Meanwhile a probe caches a destination, changes
 * its route, and times how long until the entry is unusable (gone, or stale
 * under the current genid). For each mode it reports the hit rate of the
 * steady flows, silod's CPU time as a share of one core, and the probe's
 * p50/p99, one JSON object per line.
 *
 * --scale (silod_scale): the same churn with the route cache filled to
 * 1,000,000 entries first. Admission keeps the data path from inserting
 * that many quickly, so the entries (unrelated destinations in 12.0.0.0/8,
 * current genid) are written from user space with batch updates before
 * silod starts; silod then takes them in with its startup walk. Only the
 * scoped mode runs: it is the one that must hold at this size.
 *
 *   bench_silod [--seconds N] [--rate UPDATES_PER_S] [--flows N]
 *               [--scale [--fill N]]
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include "fwd.h"
#include "bench.h"

#define PROBE_EVERY_MS 40
#define MAX_PROBES 4096

static atomic_bool stop;
static int seconds = 10, rate = 10000, nr_flows = 64;
static long fill; /* --scale: entries written before silod starts */
static atomic_long updates;
static bool via_gw2[256] = { [0 ... 255] = true }; /* probes' routes */

/* An IPv4 route message: add (replace) or delete dst/len via gw. */
static size_t route_msg(char *buf, int type, __u32 dst, int len, __u32 gw)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags =
		NLM_F_REQUEST |
		(type == RTM_NEWROUTE ? NLM_F_CREATE | NLM_F_REPLACE : 0);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = len;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_DST, dst);
	if (type == RTM_NEWROUTE)
		mnl_attr_put_u32(nlh, RTA_GATEWAY, gw);
	return nlh->nlmsg_len;
}

static struct mnl_socket *nl_open(void)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	int buf = 4 << 20;

	if (nl && mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		mnl_socket_close(nl);
		return NULL;
	}
	if (nl)
		setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUFFORCE,
			   &buf, sizeof(buf));
	return nl;
}

/* Unrelated churn: 11.X.Y.0/24 added, then deleted, at a fixed rate. */
static void *churn(void *arg)
{
	struct mnl_socket *nl = nl_open();
	char buf[256], sink[8192];
	__u32 gw = htonl(0x0A020002); /* 10.2.0.2 */
	double start = bench_mono();
	long i = 0;

	(void)arg;
	if (!nl)
		return NULL;
	while (!atomic_load(&stop)) {
		long due = (long)((bench_mono() - start) * rate);

		for (; i < due; i++) {
			__u32 n = (i / 2) % 65536;
			__u32 dst = htonl(0x0B000000 | n << 8);
			size_t len = route_msg(
				buf, i % 2 ? RTM_DELROUTE : RTM_NEWROUTE, dst,
				24, gw);

			mnl_socket_sendto(nl, buf, len);
		}
		atomic_store(&updates, i);
		/* errors only (no acks asked): throw them away */
		while (recv(mnl_socket_get_fd(nl), sink, sizeof(sink),
			    MSG_DONTWAIT) > 0)
			;
		usleep(500);
	}
	mnl_socket_close(nl);
	return NULL;
}

/* The steady flows, forwarded in a loop. */
static void *traffic(void *arg)
{
	struct pkt_spec sp;
	uint8_t pkt[PKT_MAX], out[PKT_MAX];
	char dst[32];
	__u32 out_len;
	long n = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		snprintf(dst, sizeof(dst), "10.200.%ld.%ld", n % nr_flows / 250,
			 n % nr_flows % 250 + 1);
		sp = spec4(dst);
		run_on(prog_in0, in0, pkt, pkt_build(pkt, &sp), out, &out_len);
		n++;
	}
	return NULL;
}

static pid_t silod_start(const char *mode)
{
	char bin[PATH_MAX];
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/silod", getenv("BUILD"));
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(bin, bin, "-q", "--pin-root", test_pin_root(),
		      "--invalidation", mode, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static double cpu_seconds(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long utime, stime;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	p = strrchr(buf, ')'); /* comm may hold spaces */
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
		   &utime, &stime) != 2)
		return 0;
	return (double)(utime + stime) / sysconf(_SC_CLK_TCK);
}

/* Caches probe k, moves its route, times until the entry is unusable. */
static double probe(struct mnl_socket *nl, int cache_fd, int genid_fd, int k)
{
	struct silo_route_key key = { .ifindex = in0, .family = SILO_AF_INET };
	struct silo_route_entry e;
	struct silo_genid g;
	uint8_t pkt[PKT_MAX], out[PKT_MAX];
	char buf[256], dst[32];
	struct pkt_spec sp;
	__u32 out_len, zero = 0;
	double t0, t;
	size_t len;

	snprintf(dst, sizeof(dst), "10.201.%d.1", k);
	sp = spec4(dst);
	run_on(prog_in0, in0, pkt, pkt_build(pkt, &sp), out, &out_len);
	/* the key as the data path makes it: the source only if it counts */
	if (bpf_map_lookup_elem(genid_fd, &zero, &g))
		return -1;
	key.format = g.flags & SILO_GENID_KEY_MASK;
	if (g.flags & SILO_GENID_KEY_SRC_V4)
		memcpy(key.src, sp.src, 16);
	memcpy(key.dst, sp.dst, 16);
	if (bpf_map_lookup_elem(cache_fd, &key, &e))
		return -1; /* not cached: nothing to time */
	/* each change moves the route to the other gateway */
	via_gw2[k] = !via_gw2[k];
	len = route_msg(buf, RTM_NEWROUTE, htonl(0x0AC90000 | k << 8), 24,
			htonl(via_gw2[k] ? 0x0A020003 : 0x0A020002));
	t0 = bench_mono();
	mnl_socket_sendto(nl, buf, len);
	for (;;) {
		t = bench_mono();
		if (bpf_map_lookup_elem(cache_fd, &key, &e) ||
		    (!bpf_map_lookup_elem(genid_fd, &zero, &g) &&
		     e.genid != g.genid))
			return (t - t0) * 1e3;
		if (t - t0 > 1.0)
			return 1e3; /* a second: report it as such */
		usleep(20);
	}
}

/*
 * Writes n entries for unrelated destinations (12.0.0.0/8, spread over
 * every /24) into node 0's cache, valid under the current genid and flags,
 * as the data path would have stored them.
 */
static int cache_fill_bulk(long n)
{
	enum { CHUNK = 8192 };
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct silo_route_entry *vals = calloc(CHUNK, sizeof(*vals));
	struct silo_route_key *keys = calloc(CHUNK, sizeof(*keys));
	int cache_fd, genid_fd, err = -1;
	char path[PATH_MAX];
	struct silo_genid g;
	__u32 zero = 0, cnt;
	long i, j;

	snprintf(path, sizeof(path), "%s/route_cache_n0", silo_pin_dir(s));
	cache_fd = bpf_obj_get(path);
	snprintf(path, sizeof(path), "%s/genid", silo_pin_dir(s));
	genid_fd = bpf_obj_get(path);
	if (!keys || !vals || cache_fd < 0 || genid_fd < 0 ||
	    bpf_map_lookup_elem(genid_fd, &zero, &g))
		goto out;
	for (i = 0; i < n; i += cnt) {
		cnt = n - i < CHUNK ? n - i : CHUNK;
		for (j = 0; j < cnt; j++) {
			struct silo_route_key *k = &keys[j];
			struct silo_route_entry *e = &vals[j];
			/* odd stride: distinct addresses, every /24 used */
			__u32 a = htonl(0x0C000000 |
					(((i + j) * 4099) & 0xFFFFFF));

			memset(k, 0, sizeof(*k));
			k->ifindex = in0;
			k->family = SILO_AF_INET;
			k->format = g.flags & SILO_GENID_KEY_MASK;
			memcpy(k->dst, &a, 4);
			memset(e, 0, sizeof(*e));
			e->genid = g.genid;
			e->ifindex = out0;
			e->mtu = 1500;
			e->family = SILO_AF_INET;
			memcpy(e->smac, mac_out0, 6);
			memcpy(e->dmac, (__u8[]){ 2, 0, 0, 0, 2, 2 }, 6);
			memcpy(e->nexthop, (__u8[]){ 10, 2, 0, 2 }, 4);
			e->key = *k;
		}
		if (bpf_map_update_batch(cache_fd, keys, vals, &cnt, &opts)) {
			fprintf(stderr, "bench_silod: filling the cache: %s\n",
				strerror(errno));
			goto out;
		}
	}
	err = 0;
out:
	free(keys);
	free(vals);
	if (cache_fd >= 0)
		close(cache_fd);
	if (genid_fd >= 0)
		close(genid_fd);
	return err;
}

struct result_line {
	double hit_rate, cpu, p50, p99;
	long updates, probes;
};

static int run_mode(const char *mode, struct result_line *res)
{
	static double lat[MAX_PROBES];
	struct silo_stats before, after;
	struct mnl_socket *nl = nl_open();
	pthread_t t_churn, t_traffic;
	char path[PATH_MAX];
	double t0, cpu0, elapsed;
	int cache_fd, genid_fd, n = 0, k = 0, i;
	struct silo_daemon_info di;
	pid_t pid;

	if (fill && cache_fill_bulk(fill))
		return -1;
	pid = silod_start(mode);
	/* at scale, the startup walk of the cache comes first */
	for (i = 0; i < (fill ? 6000 : 500); i++) {
		if (!silo_daemon_info(s, &di) && di.running &&
		    di.state.pid == (__u32)pid && di.state.resyncs)
			break;
		usleep(10000);
	}
	if (i == (fill ? 6000 : 500) || !nl)
		return -1;
	snprintf(path, sizeof(path), "%s/route_cache_n0", silo_pin_dir(s));
	cache_fd = bpf_obj_get(path);
	snprintf(path, sizeof(path), "%s/genid", silo_pin_dir(s));
	genid_fd = bpf_obj_get(path);

	atomic_store(&stop, false);
	pthread_create(&t_traffic, NULL, traffic, NULL);
	usleep(200000); /* every steady flow cached */
	stats_total(&before);
	cpu0 = cpu_seconds(pid);
	t0 = bench_mono();
	pthread_create(&t_churn, NULL, churn, NULL);
	while (bench_mono() - t0 < seconds) {
		double l = probe(nl, cache_fd, genid_fd, k++ % 256);

		if (l >= 0 && n < MAX_PROBES)
			lat[n++] = l;
		usleep(PROBE_EVERY_MS * 1000);
	}
	elapsed = bench_mono() - t0;
	res->cpu = (cpu_seconds(pid) - cpu0) / elapsed;
	stats_total(&after);
	atomic_store(&stop, true);
	pthread_join(t_churn, NULL);
	pthread_join(t_traffic, NULL);

	/* Probes count one fill each; the steady flows should only hit. */
	res->hit_rate =
		(double)(after.cache_hit - before.cache_hit) /
		(after.cache_hit - before.cache_hit + after.cache_miss -
		 before.cache_miss + after.cache_stale - before.cache_stale +
		 after.pass_no_daemon - before.pass_no_daemon - k);
	res->updates = atomic_load(&updates);
	res->probes = n;
	res->p50 = n ? bench_quantile(lat, n, 0.50) : -1;
	res->p99 = n ? bench_quantile(lat, n, 0.99) : -1;
	close(cache_fd);
	close(genid_fd);
	mnl_socket_close(nl);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	return 0;
}

static void print_result(const char *name, const struct result_line *r,
			 const struct result_line *base)
{
	/* What drives it is route churn, not traffic. */
	bench_line(name, "route_churn");
	printf(",\"seconds\":%d,\"updates_per_s\":%.0f,\"flows\":%d,\"cache_entries\":%ld,"
	       "\"hit_rate\":%.4f,\"silod_cpu\":%.3f,\"invalidate_ms_p50\":%.3f,"
	       "\"invalidate_ms_p99\":%.3f,\"probes\":%ld",
	       seconds, (double)r->updates / seconds, nr_flows, fill,
	       r->hit_rate, r->cpu, r->p50, r->p99, r->probes);
	if (base)
		printf(",\"vs\":\"silod_scoped\",\"hit_rate_ratio\":%.3f,\"cpu_ratio\":%.2f}\n",
		       r->hit_rate / base->hit_rate, r->cpu / base->cpu);
	else
		printf(",\"targets\":{\"hit_rate\":0.99,\"silod_cpu\":0.20,\"invalidate_ms_p99\":10},\"met\":%s}\n",
		       r->probes && r->hit_rate >= 0.99 && r->cpu < 0.20 &&
				       r->p99 <= 10 ?
			       "true" :
			       "false");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "flows", required_argument, NULL, 'f' },
		{ "scale", no_argument, NULL, 'S' },
		{ "fill", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct result_line scoped, global;
	bool scale = false;
	int c;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = atoi(optarg);
			break;
		case 'r':
			rate = atoi(optarg);
			break;
		case 'f':
			nr_flows = atoi(optarg);
			break;
		case 'S':
			scale = true;
			break;
		case 'F':
			fill = atol(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: bench_silod [--seconds N] [--rate UPDATES_PER_S] [--flows N] [--scale [--fill N]]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (scale && !fill)
		fill = 1000000;
	if (!scale)
		fill = 0;
	if (seconds < 1 || rate < 1 || nr_flows < 1 || nr_flows > 60000 ||
	    fill < 0 || fill > SILO_ROUTE_CACHE_MAX - 65536 ||
	    !getenv("BUILD")) {
		fprintf(stderr,
			"bench_silod: bad arguments (and BUILD must name the build directory)\n");
		return 2;
	}
	setenv("SILO_TEST_PIN_ROOT", "/sys/fs/bpf/silo-bench-silod", 1);
	/* room for the fill and the flows, in a power of 2 */
	for (fwd_cache_size = 65536; fill && fwd_cache_size < fill + 65536;)
		fwd_cache_size *= 2;
	if (test_init() ||
	    fwd_setup("ip route add 10.200.0.0/16 via 10.2.0.2\n"
		      "for k in $(seq 0 255); do"
		      " ip route add 10.201.$k.0/24 via 10.2.0.3; done\n")) {
		fprintf(stderr, "bench_silod: setup failed\n");
		return 1;
	}
	if (scale) {
		if (run_mode("scoped", &scoped)) {
			fprintf(stderr, "bench_silod: silod did not start\n");
			fwd_teardown();
			return 1;
		}
		print_result("silod_scale", &scoped, NULL);
		fwd_teardown();
		return 0;
	}
	if (run_mode("scoped", &scoped) || run_mode("global", &global)) {
		fprintf(stderr, "bench_silod: silod did not start\n");
		fwd_teardown();
		return 1;
	}
	print_result("silod_scoped", &scoped, NULL);
	print_result("silod_global", &global, &scoped);
	fwd_teardown();
	return 0;
}
