// SPDX-License-Identifier: GPL-2.0
/*
 * silod: keeps silo's route cache exact while the kernel's routing state
 * changes. It listens to rtnetlink, removes exactly the cache entries a route
 * or neighbour change touched (sweep.c), bumps the generation id for what
 * cannot be scoped (rules, links, addresses, nexthop objects, lost
 * messages), keeps local_addrs, devices and cpu_node current, and beats a
 * heartbeat without which the data path stops trusting the cache.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include "config.h"
#include "silod.h"

static struct silod daemon_state = { .nr_dtables = -1 };
static int log_level = SILO_LOG_INFO;

/* Offset of CLOCK_MONOTONIC in this time namespace ("monotonic S NS"). */
static bool monotonic_offset(void)
{
	char line[128];
	long long sec, nsec;
	bool offset = false;
	FILE *f;

	f = fopen("/proc/self/timens_offsets", "re");
	if (!f)
		return false; /* a kernel without time namespaces */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "monotonic %lld %lld", &sec, &nsec) == 2)
			offset = sec || nsec;
	fclose(f);
	return offset;
}

/*
 * The heartbeat is stamped with CLOCK_MONOTONIC_COARSE and read by the data
 * path with bpf_ktime_get_coarse_ns, the kernel's own clock. A time
 * namespace shifts the first and not the second: the data path would trust
 * a dead silod or bypass the cache of a live one.
 */
static int check_time_ns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/time", &self))
		return 0; /* a kernel without time namespaces */
	if (!stat("/proc/1/ns/time", &init) &&
	    (self.st_ino != init.st_ino || self.st_dev != init.st_dev)) {
		pr_err("silod runs in another time namespace than pid 1: its CLOCK_MONOTONIC heartbeat would not match the kernel's bpf_ktime clock the data path reads; run silod in the initial time namespace\n");
		return -EINVAL;
	}
	if (monotonic_offset()) {
		pr_err("silod runs in a time namespace with a CLOCK_MONOTONIC offset: its heartbeat would not match the kernel's bpf_ktime clock the data path reads; run silod in the initial time namespace\n");
		return -EINVAL;
	}
	return 0;
}

static void print(enum silo_log_level level, const char *fmt, va_list ap)
{
	static const char *const names[] = { "error", "warning", "info",
					     "debug" };
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

	if ((int)level > log_level)
		return;
	if (use_syslog) {
		vsyslog(prio[level], fmt, ap);
		return;
	}
	fprintf(stderr, "silod: %s: ", names[level]);
	vfprintf(stderr, fmt, ap);
}

static int reload(struct silod *d, int argc, char **argv)
{
	struct silod_config c;
	struct silod_args a;
	int err;

	/* Before READY=1 there is nothing to reload: silod is starting. */
	if (d->ready)
		notify("RELOADING=1\nSTATUS=reloading the configuration");
	err = load_config(argc, argv, &a, &c);
	if (err) {
		pr_err("configuration not reloaded: keeping the old one\n");
		if (d->ready) {
			notify("READY=1");
			notify_serving(d);
		}
		return err;
	}
	c.no_second_sweep = d->cfg.no_second_sweep;
	if (strcmp(c.metrics, d->cfg.metrics))
		pr_warn("metrics: a new address takes effect when silod restarts\n");
	d->cfg = c;
	log_level = c.log_level;
	err = apply_topology(d);
	if (!err)
		err = genid_bump(d); /* the cache key's node may have moved */
	if (err)
		invalidation_lost(d);
	if (!reconcile_load(d))
		reconcile_apply(d, SILO_APPLY_ALL);
	pr_info("configuration reloaded\n");
	if (d->ready) {
		notify("READY=1");
		notify_serving(d);
	}
	return err;
}

static int signals_open(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The rtnetlink socket is readable: its messages into b. */
static int events_read(struct silod *d, struct burst *b, __u64 now,
		       __u64 *last_warn)
{
	int err = nl_events_drain(d, b);

	/* Lost messages: no entry from before is used, now;
	 * the resync follows within resync-interval-ms. */
	if (err == -ENOBUFS && genid_bump(d))
		invalidation_lost(d);
	/* At most once a second, however many overruns. */
	if (err == -ENOBUFS && now > *last_warn + 1000000000ULL) {
		pr_warn("netlink overrun: messages lost, resyncing\n");
		*last_warn = now;
	} else if (err && err != -ENOBUFS) {
		return err;
	}
	return 0;
}

/* A signal: SIGHUP reloads; true for one that ends the loop. */
static bool signal_read(struct silod *d, int sig_fd, struct burst *b, int argc,
			char **argv)
{
	struct signalfd_siginfo si;

	if (read(sig_fd, &si, sizeof(si)) != sizeof(si))
		return false;
	if (si.ssi_signo == SIGHUP) {
		reload(d, argc, argv);
		return false;
	}
	pr_info("signal %u: exiting, the data path stays\n", si.ssi_signo);
	/* Finish what is known, so no entry outlives it
	 * (the heartbeat expires next anyway). */
	if (b->messages || b->resync)
		process(d, b, false);
	return true;
}

static int run(struct silod *d, int sig_fd, int argc, char **argv)
{
	struct burst b = {};
	struct tick t = {};
	__u64 now, wait, last_sweep = 0, last_warn = 0, resync_at, sweep_at;
	struct pollfd pfd[7] = {
		{ .fd = d->nl_fd, .events = POLLIN },
		{ .fd = sig_fd, .events = POLLIN },
		{ .fd = index_pollfd(d), .events = POLLIN },
	};
	int err = 0, nenv = envelope_pollfds(d, pfd + 3), nfds;
	struct timespec ts;

	nfds = 3 + nenv + ct_pollfds(d, pfd + 3 + nenv);

	for (;;) {
		now = now_ns();
		/* Unsynced (a failure, maybe in the regrace thread): resync
		 * until it works, and no heartbeat meanwhile. */
		if (!synced(d))
			b.resync = true;
		tick_run(d, &t, now);
		/* Coalesce: act at most every min-sweep (resyncs more
		 * rarely still), and take in whatever arrives meanwhile. */
		resync_at = d->last_resync_ns +
			    (__u64)d->cfg.resync_interval_ms * 1000000;
		sweep_at = last_sweep + (__u64)d->cfg.min_sweep_us * 1000;
		/* The global baseline bumps as each change arrives. */
		if (d->cfg.global)
			sweep_at = 0;
		if ((b.resync && now >= resync_at) ||
		    (b.messages && now >= sweep_at)) {
			process(d, &b, now >= resync_at);
			last_sweep = now_ns();
			publish(d);
			continue;
		}
		wait = tick_wait(d, &t, now);
		if (b.resync && resync_at - now < wait)
			wait = resync_at - now;
		if (b.messages && sweep_at - now < wait)
			wait = sweep_at - now;
		ts.tv_sec = wait / 1000000000;
		ts.tv_nsec = wait % 1000000000;
		if (ppoll(pfd, nfds, &ts, NULL) < 0 && errno != EINTR)
			return -errno;
		tick_poll(d, pfd + 3, nenv);
		ct_poll(d);
		/* The fill log, a quarter full or at least every beat. */
		index_drain(d);
		if (pfd[0].revents) {
			err = events_read(d, &b, now, &last_warn);
			if (err)
				return err;
		}
		if (pfd[1].revents && signal_read(d, sig_fd, &b, argc, argv))
			break;
		reconcile_poll(d, now_ns());
	}
	work_free(&b.work);
	neigh_confirm_stop();
	return 0;
}

/* The state before anything is opened; -errno (said why) on failure. */
static int daemon_init(struct silod *d)
{
	const char *test_env;
	int err;

	log_level = d->cfg.log_level;
	if (use_syslog)
		openlog("silod", LOG_PID, LOG_DAEMON);
	notify_init(d);
	notify("STATUS=starting");
	silo_maps_init(&d->maps);
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->genid_lock, NULL);
	d->nl_fd = -1;
	envelope_init(d);
	/* Tests: "N" fails the first N resyncs, "N@K" the N after K. */
	test_env = getenv("SILOD_TEST_FAIL_RESYNC");
	if (test_env &&
	    sscanf(test_env, "%d@%d", &d->fail_resyncs, &d->fail_skip) < 1)
		d->fail_resyncs = 0;
	err = check_time_ns();
	if (err)
		return err;
	err = silo_proc_start_ticks(0, &d->state.start_ticks);
	if (err) {
		pr_err("cannot read /proc/self/stat: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

/* silo opened: the sockets and maps silod serves with; main() closes them
 * whatever fails. */
static int daemon_open(struct silod *d, int *sig_fd)
{
	int err, pid;

	pid = silo_daemon_pid(d->silo);
	if (pid && pid != getpid()) {
		pr_err("silod already runs for %s (pid %d)\n",
		       silo_pin_dir(d->silo), pid);
		return -EEXIST;
	}
	*sig_fd = signals_open();
	if (*sig_fd < 0)
		return *sig_fd;
	/* Listen before reading the state, so no change falls between. */
	d->nl_fd = nl_events_open(d->cfg.rcvbuf);
	if (d->nl_fd < 0) {
		err = d->nl_fd;
		pr_err("cannot listen to rtnetlink: %s\n", strerror(-err));
		return err;
	}
	envelope_open(d);
	/* silo.conf's devices first: their loads make the maps with the
	 * cache size declared. A bad file or a failed change is said, and
	 * silod serves whatever there is. */
	if (!reconcile_load(d))
		reconcile_apply(d, SILO_APPLY_ALL);
	err = silo_maps_ensure(d->silo, &d->maps, 0, SILO_CACHE_DEFAULT,
			       &(bool){ false });
	if (!err)
		err = index_open(d);
	if (!err)
		ct_open(d); /* said; the data path then passes them */
	return err;
}

/* The first resync, the regrace thread, the first beat and --metrics's
 * server (metrics_fd is taken). */
static int daemon_start(struct silod *d, int *metrics_fd)
{
	int err;

	d->state.pid = getpid();
	d->state.started_ns = now_ns();
	publish(d);
	notify("STATUS=resyncing with the kernel (routes, addresses, devices, topology)");
	/* A failed first resync is tried again by run(), like any other;
	 * until one succeeds there is no heartbeat. */
	resync(d);
	err = regrace_start(d);
	if (err)
		return err;
	beat(d);
	if (*metrics_fd >= 0) {
		err = metrics_start(d, *metrics_fd);
		*metrics_fd = -1; /* the server's now, or closed */
		if (err)
			goto err_regrace;
		pr_info("metrics: GET /metrics on %s\n", d->cfg.metrics);
	}
	return 0;

err_regrace:
	regrace_stop(d);
	return err;
}

int main(int argc, char **argv)
{
	struct silod *d = &daemon_state;
	struct silo_opts opts = {};
	struct silod_args a;
	int err, sig_fd = -1, metrics_fd = -1;

	silo_set_print(print);
	err = load_config(argc, argv, &a, &d->cfg);
	if (err)
		return 2;
	if (daemon_init(d))
		return 1;
	/* Before entering --netns: the scraper is where silod starts. */
	if (d->cfg.metrics[0]) {
		metrics_fd = metrics_listen(d->cfg.metrics);
		if (metrics_fd < 0)
			return 1;
	}
	/* Before entering --netns: the events come to the host's. */
	procwatch_open(d);
	opts.netns = a.netns;
	d->rec.netns = a.netns;
	opts.pin_root = a.pin_root;
	err = silo_open(&d->silo, &opts);
	if (err) {
		procwatch_close(d);
		if (metrics_fd >= 0)
			close(metrics_fd);
		return 1;
	}
	err = daemon_open(d, &sig_fd);
	if (err)
		goto out_close;
	err = daemon_start(d, &metrics_fd);
	if (err)
		goto out_release;
	pr_info("serving %s (%s invalidation, heartbeat %d ms, timeout %d ms)\n",
		silo_pin_dir(d->silo), d->cfg.global ? "global" : "scoped",
		d->cfg.heartbeat_ms, d->cfg.timeout_ms);

	err = run(d, sig_fd, argc, argv);
	notify("STOPPING=1\nSTATUS=stopping: the data path stands aside until silod runs again");
	metrics_stop(d);
	regrace_stop(d);
out_release:
	/* Whatever the way out: without silod no change is invalidated, so
	 * the data path must stop using the cache now. */
	heartbeat_expire(d);
	d->state.pid = 0;
	publish(d);
	/* Pins go only if no device or group uses them any more. */
	silo_maps_release(d->silo);
out_close:
	if (metrics_fd >= 0)
		close(metrics_fd);
	ct_close(d);
	index_close(d);
	silo_maps_close(&d->maps);
	if (d->nl_fd >= 0)
		close(d->nl_fd);
	envelope_close(d);
	if (sig_fd >= 0)
		close(sig_fd);
	silo_close(d->silo);
	reconcile_free(d);
	procwatch_close(d);
	free(d->rx_buf);
	pthread_mutex_destroy(&d->genid_lock);
	pthread_mutex_destroy(&d->lock);
	return err ? 1 : 0;
}
