// SPDX-License-Identifier: GPL-2.0
/*
 * Evictions are counted, not guessed: with a small route cache and one CPU
 * inserting, every insert either grows the cache or evicted what it holds
 * less, so inserts - evictions is what the cache holds.
 */
#include "fwd.h"

#define SIZE 256 /* entries per node */

struct count_ctx {
	int route, source;
};

static int count_cb(__u32 node, const struct silo_route_key *k,
		    const struct silo_route_entry *e, void *data)
{
	struct count_ctx *c = data;

	(void)node;
	(void)e;
	if (k->format & SILO_KEY_SOURCE)
		c->source++;
	else
		c->route++;
	return 0;
}

static void test_evictions_counted(void)
{
	struct silo_stats before, after;
	struct count_ctx c = {};
	uint8_t pkt[PKT_MAX], out[PKT_MAX];
	cpu_set_t all, one;
	struct pkt_spec sp;
	char dst[32];
	__u32 out_len;
	__u64 inserted, evicted;
	int i, pass, rc;

	REQUIRE(sched_getaffinity(0, sizeof(all), &all) == 0, "affinity");
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0, "pin to a CPU");
	stats_total(&before);
	/* Four times the cache, each twice: past the budget, the second
	 * sighting is admitted. */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < 4 * SIZE; i++) {
			snprintf(dst, sizeof(dst), "10.99.%d.%d", i / 250,
				 i % 250 + 1);
			sp = spec4(dst);
			rc = run_on(prog_in0, in0, pkt, pkt_build(pkt, &sp),
				    out, &out_len);
			if (rc != XDP_REDIRECT) {
				CHECK(0, "%s: verdict %d", dst, rc);
				goto out;
			}
		}
	stats_total(&after);
	REQUIRE(silo_route_foreach(s, count_cb, &c) == 0, "foreach");
	inserted = after.cache_insert - before.cache_insert;
	evicted = after.cache_evict - before.cache_evict;
	printf("# inserted %llu, evicted %llu, held %d routes and %d sources\n",
	       (unsigned long long)inserted, (unsigned long long)evicted,
	       c.route, c.source);
	/* Not all: keys that share a slot of the admission table push each
	 * other out before their second sighting. */
	CHECK(inserted > 2 * SIZE, "only %llu inserts",
	      (unsigned long long)inserted);
	CHECK(evicted > 0, "a full cache evicted nothing");
	CHECK(c.route + c.source <= SIZE, "%d entries in a cache of %d",
	      c.route + c.source, SIZE);
	CHECK_EQ(inserted - evicted, (__u64)(c.route + c.source));
out:
	sched_setaffinity(0, sizeof(all), &all);
}

int main(void)
{
	if (test_init())
		return 1;
	fwd_cache_size = SIZE;
	if (fwd_setup("ip route add 10.99.0.0/16 via 10.2.0.2\n")) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_evictions_counted);
	fwd_teardown();
	return 0;
}
