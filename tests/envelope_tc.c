// SPDX-License-Identifier: GPL-2.0
/*
 * The envelope's tc condition for what tests/envelope.sh cannot make with
 * this iproute2: a tcx program (Linux 6.6), attached through a bpf_link,
 * which makes neither qdisc nor filter. Attached to either side of a veth
 * it puts both families outside, naming it; detached, nothing holds.
 */
#include "test.h"
#include "../user/lib/silod.h"
#include "test_tc_drop.skel.h"

/* uapi: enum bpf_attach_type (6.6); older headers lack them. */
#define TCX_INGRESS 46
#define TCX_EGRESS 47

static void test_tcx_program_counts(void)
{
	struct test_tc_drop *skel;
	struct silo_envelope env;
	int link, dir, ifindex;

	REQUIRE(!sh("ip link add tx0 type veth peer name tx1"), "veth");
	ifindex = if_nametoindex("tx0");
	skel = test_tc_drop__open_and_load();
	REQUIRE(skel, "cannot load the tc program");
	silo_envelope_eval(&env);
	CHECK(!(env.holds[SILO_FAM_V4] & SILO_ENV(TC)),
	      "tc holds before anything is attached: %s", env.detail);
	for (dir = 0; dir < 2; dir++) {
		link = bpf_link_create(
			bpf_program__fd(skel->progs.drop_server2), ifindex,
			dir ? TCX_EGRESS : TCX_INGRESS, NULL);
		if (link < 0 && (errno == EINVAL || errno == EOPNOTSUPP)) {
			test_tc_drop__destroy(skel);
			sh("ip link del tx0");
			SKIP("this kernel has no tcx (before 6.6)");
		}
		CHECK(link >= 0, "tcx attach: %s", strerror(errno));
		if (link < 0)
			break;
		silo_envelope_eval(&env);
		CHECK((env.holds[SILO_FAM_V4] & SILO_ENV(TC)) &&
			      (env.holds[SILO_FAM_V6] & SILO_ENV(TC)),
		      "a tcx program on %s: tc holds for both families",
		      dir ? "egress" : "ingress");
		CHECK(strstr(env.detail, dir ? "tcx program on tx0 egress" :
					       "tcx program on tx0 ingress"),
		      "detail: '%s'", env.detail);
		close(link);
		silo_envelope_eval(&env);
		CHECK(!(env.holds[SILO_FAM_V4] & SILO_ENV(TC)),
		      "detached: tc still holds: %s", env.detail);
	}
	test_tc_drop__destroy(skel);
	sh("ip link del tx0");
}

int main(void)
{
	if (test_init())
		return 1;
	RUN(test_tcx_program_counts);
	return 0;
}
