/* The ring loop: timers in deadline order, stop/restart of timers, posting
 * from another thread, worker jobs completing on the loop, a socket round
 * trip with multishot recv into provided buffers. */
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include "steward/auth/auth.h"
#include "steward/http/http.h"
#include "steward/io/io.h"
#include "test_help.h"

static struct sw_loop *loop_or_skip(void)
{
	char err[256];
	if (sw_io_probe(err, sizeof(err)) < 0) {
		printf("skipped: %s\n", err);
		exit(77);
	}
	struct sw_loop *l = sw_loop_new(0, 64, 16, 4096);
	if (!l) {
		printf("skipped: cannot create a ring\n");
		exit(77);
	}
	return l;
}

static int order[8];
static int norder;
static struct sw_loop *L;

struct tagged {
	struct sw_timer t;
	int tag;
};

static void fired(struct sw_timer *t)
{
	struct tagged *x = SW_CONTAINER_OF(t, struct tagged, t);
	order[norder++] = x->tag;
	if (norder == 3)
		sw_loop_stop(L);
}

TEST(timers_fire_in_deadline_order_and_stopped_ones_never)
{
	L = loop_or_skip();
	struct tagged a = { .tag = 1 }, b = { .tag = 2 }, c = { .tag = 3 }, d = { .tag = 4 };
	norder = 0;
	sw_timer_start(L, &c.t, 60, fired);
	sw_timer_start(L, &a.t, 10, fired);
	sw_timer_start(L, &d.t, 20, fired);
	sw_timer_start(L, &b.t, 30, fired);
	sw_timer_stop(L, &d.t);
	CHECK(!sw_timer_armed(&d.t));
	sw_timer_start(L, &b.t, 40, fired); /* re-arm moves it */
	uint64_t t0 = sw_now_ms();
	CHECK_INT_EQ(sw_loop_run(L), 0);
	CHECK(sw_now_ms() - t0 >= 55);
	CHECK_INT_EQ(norder, 3);
	CHECK_INT_EQ(order[0], 1);
	CHECK_INT_EQ(order[1], 2);
	CHECK_INT_EQ(order[2], 3);
	sw_loop_free(L);
}

static pthread_t main_thread;
static bool ran_on_loop_thread;

static void posted(void *arg)
{
	ran_on_loop_thread = pthread_equal(pthread_self(), main_thread);
	sw_loop_stop(arg);
}

static void *poster(void *arg)
{
	usleep(20000);
	sw_loop_post(arg, posted, arg);
	return NULL;
}

TEST(post_from_another_thread_runs_on_the_loop)
{
	L = loop_or_skip();
	main_thread = pthread_self();
	pthread_t t;
	pthread_create(&t, NULL, poster, L);
	CHECK_INT_EQ(sw_loop_run(L), 0);
	pthread_join(t, NULL);
	CHECK(ran_on_loop_thread);
	sw_loop_free(L);
}

struct job {
	struct sw_worker_job job;
	bool ran_elsewhere;
	bool done_here;
};

static void job_run(struct sw_worker_job *j)
{
	struct job *x = SW_CONTAINER_OF(j, struct job, job);
	x->ran_elsewhere = !pthread_equal(pthread_self(), main_thread);
}

static void job_done(struct sw_worker_job *j)
{
	struct job *x = SW_CONTAINER_OF(j, struct job, job);
	x->done_here = pthread_equal(pthread_self(), main_thread);
	sw_loop_stop(j->loop);
}

TEST(worker_jobs_run_off_the_loop_and_finish_on_it)
{
	L = loop_or_skip();
	main_thread = pthread_self();
	REQUIRE(sw_workers_start(2) == 0);
	struct job j = { .job = { .run = job_run, .done = job_done } };
	REQUIRE(sw_worker_submit(L, &j.job) == 0);
	CHECK_INT_EQ(sw_loop_run(L), 0);
	CHECK(j.ran_elsewhere);
	CHECK(j.done_here);
	sw_workers_stop();
	sw_loop_free(L);
}

static char received[64];
static size_t nreceived;

static void on_recv(struct sw_io_op *op, int res, uint32_t flags)
{
	(void)op;
	if (res > 0 && (flags & SW_IO_BUFFER)) {
		memcpy(received + nreceived, sw_loop_buffer(L, flags), (size_t)res);
		nreceived += (size_t)res;
		sw_loop_buffer_recycle(L, flags);
	}
	if (nreceived >= 10 || res <= 0)
		sw_loop_stop(L);
}

TEST(multishot_recv_delivers_into_provided_buffers)
{
	L = loop_or_skip();
	int sv[2];
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	struct sw_io_op op = { .cb = on_recv };
	REQUIRE(sw_io_recv_multishot(L, &op, sv[0]) == 0);
	REQUIRE(write(sv[1], "hello", 5) == 5);
	REQUIRE(write(sv[1], "world", 5) == 5);
	nreceived = 0;
	while (nreceived < 10)
		CHECK_INT_EQ(sw_loop_run(L), 0);
	CHECK(memcmp(received, "helloworld", 10) == 0);
	close(sv[1]);
	close(sv[0]);
	sw_loop_free(L);
}

TEST(access_levels_admit_the_right_principals)
{
	struct sw_principal anon = { 0 };
	struct sw_principal member = { .authenticated = true, .role = SW_ROLE_MEMBER };
	struct sw_principal admin = { .authenticated = true, .role = SW_ROLE_ADMIN };
	struct sw_principal owner = { .authenticated = true, .role = SW_ROLE_OWNER };
	struct sw_principal op = { .authenticated = true, .role = SW_ROLE_MEMBER, .is_operator = true };
	CHECK(sw_access_allows(SW_ACCESS_PUBLIC, &anon));
	CHECK(!sw_access_allows(SW_ACCESS_SESSION, &anon));
	CHECK(sw_access_allows(SW_ACCESS_SESSION, &member));
	CHECK(!sw_access_allows(SW_ACCESS_OWNER, &admin));
	CHECK(sw_access_allows(SW_ACCESS_OWNER, &owner));
	CHECK(!sw_access_allows(SW_ACCESS_OWNER_ADMIN, &member));
	CHECK(sw_access_allows(SW_ACCESS_OWNER_ADMIN, &admin));
	CHECK(sw_access_allows(SW_ACCESS_OWNER_ADMIN, &owner));
	CHECK(!sw_access_allows(SW_ACCESS_OPERATOR, &owner));
	CHECK(sw_access_allows(SW_ACCESS_OPERATOR, &op));
	CHECK(!sw_access_allows(SW_ACCESS_OPERATOR, &anon));
}

TEST_MAIN()
