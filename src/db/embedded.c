/* The embedded PostgreSQL: without DATABASE_URL, stewardd runs a private
 * cluster of its own with the system's PostgreSQL binaries.
 *
 * Layout under the data directory:
 *   pg/       the cluster (initdb on first start; built in pg.init/ and
 *             renamed, so an interrupted first start leaves no half
 *             cluster behind)
 *   run/      the server's unix socket; the server listens on no TCP port
 *   pg.log    initdb's and the server's output, appended
 *
 * Authentication is "trust", which is safe only because the socket lives
 * in directories nobody else may enter (data dir 0700, or 0711 as root so
 * that the postgres user can traverse it; run/ 0700). As root the server
 * must not run as root (PostgreSQL refuses), so initdb and postgres run as
 * the "postgres" system user that the Debian packages create.
 *
 * Programs are started with fork + execve and an argv array (no shell).
 * The server gets PR_SET_PDEATHSIG(SIGINT): if stewardd dies, even by
 * SIGKILL, the server does a fast shutdown. The signal follows the thread
 * that forked, so sw_db_embedded_start() must be called from a thread that
 * lives as long as the process (the main thread). A server left behind by
 * a crashed run is therefore already shutting down; start-up waits for it.
 *
 * The parent must not ignore SIGCHLD (SIG_IGN reaps children behind our
 * back; the code copes by watching the pid, but loses exit statuses). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <libpq-fe.h>
#include "steward/db/db.h"

#define PG_PORT "5432"
#define SOCKET_SUFFIX "/run/.s.PGSQL." PG_PORT
#define SUN_PATH_MAX 107 /* sizeof(sockaddr_un.sun_path) - 1 */
#define INITDB_TIMEOUT_MS 120000
#define READY_TIMEOUT_MS 30000
#define STALE_STOPPING_TIMEOUT_MS 120000 /* a left-over server shutting down */
#define STALE_RUNNING_TIMEOUT_MS 5000   /* one still serving: someone else's */
#define STOP_TIMEOUT_MS 30000 /* the shutdown checkpoint may take a while */
#define MISSING_BINARIES \
	"PostgreSQL server binaries not found: apt-get install postgresql (or set DATABASE_URL)"

/* The running server, for sw_db_embedded_stop(). Start-up state only:
 * touched from the main thread before and after the loops run. */
static pid_t server_pid;

struct paths {
	char data[PATH_MAX];
	char pg[PATH_MAX];
	char pg_init[PATH_MAX];
	char run[PATH_MAX];
	char log[PATH_MAX];
	char bindir[PATH_MAX];
	char initdb[PATH_MAX];
	char postgres[PATH_MAX];
};

struct identity {
	bool drop; /* running as root: become uid/gid in the child */
	uid_t uid;
	gid_t gid;
};

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

static bool path_join(char *out, size_t outlen, const char *a, const char *b)
{
	int n = snprintf(out, outlen, "%s%s", a, b);
	return n > 0 && (size_t)n < outlen;
}

static bool is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static bool bindir_usable(const char *dir)
{
	char p[PATH_MAX];
	return path_join(p, sizeof(p), dir, "/initdb") && is_executable_file(p) &&
	       path_join(p, sizeof(p), dir, "/postgres") && is_executable_file(p);
}

/* The major version an existing cluster was created with ("15"), or "". */
static void cluster_major(const char *pgdir, char *out, size_t outlen)
{
	char p[PATH_MAX];
	out[0] = '\0';
	if (!path_join(p, sizeof(p), pgdir, "/PG_VERSION"))
		return;
	FILE *f = fopen(p, "re");
	if (!f)
		return;
	if (fgets(out, (int)outlen, f))
		out[strcspn(out, " \r\n")] = '\0';
	else
		out[0] = '\0';
	fclose(f);
}

/* PG_BINDIR, else the highest /usr/lib/postgresql/N/bin that has initdb
 * and postgres; an existing cluster asks for its own major version. */
static int find_bindir(struct paths *p, const char *want_major, char *err, size_t errlen)
{
	const char *env = getenv("PG_BINDIR");
	if (env && *env) {
		if (!bindir_usable(env)) {
			snprintf(err, errlen,
				 "PG_BINDIR=%s has no initdb and postgres programs: "
				 "apt-get install postgresql (or set DATABASE_URL)", env);
			return -ENOENT;
		}
		snprintf(p->bindir, sizeof(p->bindir), "%s", env);
		goto found;
	}

	DIR *d = opendir("/usr/lib/postgresql");
	long best = -1;
	bool want_found = false;
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			char *end;
			errno = 0;
			long v = strtol(e->d_name, &end, 10);
			if (errno || end == e->d_name || *end || v <= 0)
				continue;
			char dir[PATH_MAX];
			snprintf(dir, sizeof(dir), "/usr/lib/postgresql/%ld/bin", v);
			if (!bindir_usable(dir))
				continue;
			if (*want_major && strcmp(e->d_name, want_major) == 0)
				want_found = true;
			if (v > best)
				best = v;
		}
		closedir(d);
	}
	if (*want_major && want_found) {
		snprintf(p->bindir, sizeof(p->bindir), "/usr/lib/postgresql/%s/bin", want_major);
		goto found;
	}
	if (*want_major && best > 0) {
		snprintf(err, errlen,
			 "the embedded database in %s was created by PostgreSQL %s, whose server "
			 "binaries are not installed (found %ld): apt-get install postgresql-%s",
			 p->pg, want_major, best, want_major);
		return -ENOENT;
	}
	if (best <= 0) {
		snprintf(err, errlen, MISSING_BINARIES);
		return -ENOENT;
	}
	snprintf(p->bindir, sizeof(p->bindir), "/usr/lib/postgresql/%ld/bin", best);
found:
	if (!path_join(p->initdb, sizeof(p->initdb), p->bindir, "/initdb") ||
	    !path_join(p->postgres, sizeof(p->postgres), p->bindir, "/postgres")) {
		snprintf(err, errlen, "PG_BINDIR is too long");
		return -ENAMETOOLONG;
	}
	return 0;
}

static int make_paths(struct paths *p, const char *data_dir, char *err, size_t errlen)
{
	if (!data_dir || !*data_dir) {
		snprintf(err, errlen, "the data directory is not set (STEWARD_DATA_DIR)");
		return -EINVAL;
	}
	if (data_dir[0] == '/') {
		snprintf(p->data, sizeof(p->data), "%s", data_dir);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd))) {
			int e = errno;
			snprintf(err, errlen, "cannot resolve the data directory %s: %s", data_dir,
				 strerror(e));
			return -e;
		}
		if (!path_join(p->data, sizeof(p->data), cwd, "/") ||
		    strlen(p->data) + strlen(data_dir) >= sizeof(p->data)) {
			snprintf(err, errlen, "the data directory path is too long");
			return -ENAMETOOLONG;
		}
		strcat(p->data, data_dir);
	}
	size_t n = strlen(p->data);
	while (n > 1 && p->data[n - 1] == '/')
		p->data[--n] = '\0';

	if (n + strlen(SOCKET_SUFFIX) > SUN_PATH_MAX) {
		snprintf(err, errlen,
			 "the data directory %s is too long: the database socket %s%s would exceed "
			 "the %d-byte limit of unix socket paths; use a path of at most %zu bytes",
			 p->data, p->data, SOCKET_SUFFIX, SUN_PATH_MAX,
			 (size_t)SUN_PATH_MAX - strlen(SOCKET_SUFFIX));
		return -ENAMETOOLONG;
	}
	if (!path_join(p->pg, sizeof(p->pg), p->data, "/pg") ||
	    !path_join(p->pg_init, sizeof(p->pg_init), p->data, "/pg.init") ||
	    !path_join(p->run, sizeof(p->run), p->data, "/run") ||
	    !path_join(p->log, sizeof(p->log), p->data, "/pg.log")) {
		snprintf(err, errlen, "the data directory path is too long");
		return -ENAMETOOLONG;
	}
	return 0;
}

/* mkdir -p; the last component gets mode, the parents 0755. */
static int make_dirs(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -errno;
	struct stat st;
	if (stat(tmp, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

static int remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0 ? -errno : 0;
}

/* The last lines of the log written since offset from, joined by " | ". */
static void log_tail(const char *log, off_t from, char *out, size_t outlen)
{
	out[0] = '\0';
	int fd = open(log, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char buf[1536];
	off_t end = lseek(fd, 0, SEEK_END);
	off_t start = SW_MAX(from, end - (off_t)sizeof(buf) + 1);
	ssize_t n = start < end ? pread(fd, buf, (size_t)(end - start), start) : 0;
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* Keep at most the last 6 lines. */
	char *s = buf + n;
	int lines = 0;
	while (s > buf && lines < 7)
		if (*--s == '\n')
			lines++;
	if (*s == '\n')
		s++;
	size_t o = 0;
	for (; *s && o + 4 < outlen; s++) {
		if (*s == '\n') {
			if (s[1]) {
				memcpy(out + o, " | ", 3);
				o += 3;
			}
		} else if ((unsigned char)*s >= 0x20) {
			out[o++] = *s;
		}
	}
	out[o] = '\0';
}

static void child_fail(const char *msg)
{
	static const char prefix[] = "stewardd: starting the embedded PostgreSQL: ";
	ssize_t w = write(2, prefix, sizeof(prefix) - 1);
	w = write(2, msg, strlen(msg));
	w = write(2, "\n", 1);
	(void)w;
	_exit(126);
}

/* fork + execve(argv) with stdout/stderr to logfd, as id, cwd dir. Only
 * async-signal-safe calls between fork and execve. */
static int spawn(char *const argv[], const struct identity *id, int logfd, const char *dir,
		 int deathsig, pid_t *ret_pid)
{
	static char *const envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "TZ=UTC",
				      NULL };
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		*ret_pid = pid;
		return 0;
	}

	/* Child. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGCHLD,
				    SIGUSR1, SIGUSR2, SIGALRM };
	for (size_t i = 0; i < SW_ARRAY_SIZE(sigs); i++)
		signal(sigs[i], SIG_DFL);
	int nullfd = open("/dev/null", O_RDONLY);
	if (nullfd < 0 || dup2(nullfd, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0)
		_exit(126);
	if (close_range(3, ~0U, 0) < 0)
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	if (id->drop) {
		if (setgroups(0, NULL) < 0 || setgid(id->gid) < 0 || setuid(id->uid) < 0)
			child_fail("cannot switch to the postgres user");
	}
	/* After the credential change, which clears the setting; a parent
	 * gone before this point is caught by the getppid() check. */
	if (prctl(PR_SET_PDEATHSIG, deathsig) < 0 || getppid() != parent)
		_exit(126);
	if (chdir(dir) < 0)
		child_fail(id->drop ? "the postgres user cannot enter the data directory "
				      "(it and every parent directory must be searchable by it)"
				    : "cannot enter the data directory");
	execve(argv[0], argv, envp);
	child_fail("cannot execute the PostgreSQL program");
	return -1; /* not reached */
}

/* Waits up to timeout_ms for pid; 1 exited (status set), 0 still running. */
static int wait_exit(pid_t pid, unsigned timeout_ms, int *ret_status)
{
	for (unsigned waited = 0;; waited += 20) {
		pid_t r = waitpid(pid, ret_status, WNOHANG);
		if (r == pid)
			return 1;
		if (r < 0 && errno == ECHILD) {
			/* Reaped elsewhere (SIGCHLD ignored): watch the pid. */
			if (kill(pid, 0) < 0 && errno == ESRCH) {
				*ret_status = 0;
				return 1;
			}
		}
		if (waited >= timeout_ms)
			return 0;
		sleep_ms(20);
	}
}

static void describe_status(int status, char *out, size_t outlen)
{
	if (WIFEXITED(status))
		snprintf(out, outlen, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, outlen, "was killed by signal %d", WTERMSIG(status));
	else
		snprintf(out, outlen, "stopped");
}

static int run_initdb(const struct paths *p, const struct identity *id, int logfd,
		      char *err, size_t errlen)
{
	int r = remove_tree(p->pg_init);
	if (r < 0) {
		snprintf(err, errlen, "cannot remove %s left by an interrupted first start: %s",
			 p->pg_init, strerror(-r));
		return r;
	}
	if (mkdir(p->pg_init, 0700) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create %s: %s", p->pg_init, strerror(-r));
		return r;
	}
	if (id->drop && chown(p->pg_init, id->uid, id->gid) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot give %s to the postgres user: %s", p->pg_init,
			 strerror(-r));
		return r;
	}

	char *argv[] = { (char *)p->initdb, "-D", (char *)p->pg_init, "-U", "steward",
			 "--auth=trust", "-E", "UTF8", "--locale=C", NULL };
	off_t from = lseek(logfd, 0, SEEK_END);
	pid_t pid;
	r = spawn(argv, id, logfd, p->data, SIGKILL, &pid);
	if (r < 0) {
		snprintf(err, errlen, "cannot start initdb: %s", strerror(-r));
		return r;
	}
	int status;
	if (!wait_exit(pid, INITDB_TIMEOUT_MS, &status)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		snprintf(err, errlen, "initdb did not finish within %d s", INITDB_TIMEOUT_MS / 1000);
		return -ETIMEDOUT;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char how[64], tail[1024];
		describe_status(status, how, sizeof(how));
		log_tail(p->log, from, tail, sizeof(tail));
		snprintf(err, errlen, "initdb %s (%s): %s", how, p->log, tail);
		return -EIO;
	}
	if (rename(p->pg_init, p->pg) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot rename %s to %s: %s", p->pg_init, p->pg, strerror(-r));
		return r;
	}
	return 0;
}

/* Reads postmaster.pid: the pid (line 1) and the status (line 8:
 * "starting", "ready", "stopping", ...). false when absent. */
static bool read_postmaster_pid(const char *path, long *ret_pid, char *status, size_t statuslen)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char line[PATH_MAX];
	long pid = 0;
	status[0] = '\0';
	for (int i = 1; fgets(line, sizeof(line), f); i++) {
		if (i == 1)
			pid = atol(line);
		if (i == 8) {
			size_t n = strcspn(line, " \r\n");
			if (n >= statuslen)
				n = statuslen - 1;
			memcpy(status, line, n);
			status[n] = '\0';
			break;
		}
	}
	fclose(f);
	*ret_pid = pid;
	return true;
}

static bool is_postgres_process(long pid)
{
	char comm_path[64], comm[32] = "";
	snprintf(comm_path, sizeof(comm_path), "/proc/%ld/comm", pid);
	FILE *c = fopen(comm_path, "re");
	if (!c)
		return false;
	if (!fgets(comm, sizeof(comm), c))
		comm[0] = '\0';
	fclose(c);
	return strncmp(comm, "postgres", 8) == 0;
}

/* A server from a crashed run got SIGINT when its parent died and is
 * shutting down (its status says "stopping"); its shutdown checkpoint may
 * take a while, so wait for it. A server that stays up belongs to someone
 * else: refuse after a short grace period. A stale file whose pid is gone
 * or reused is left to postgres, which removes it. */
static int wait_stale_postmaster(const struct paths *p, char *err, size_t errlen)
{
	char path[PATH_MAX], status[32];
	long pid;
	if (!path_join(path, sizeof(path), p->pg, "/postmaster.pid"))
		return 0;
	for (unsigned waited = 0;; waited += 50) {
		if (!read_postmaster_pid(path, &pid, status, sizeof(status)) || pid <= 1 ||
		    pid == (long)getpid() || !is_postgres_process(pid))
			return 0;
		bool stopping = strcmp(status, "stopping") == 0;
		if (waited >= (stopping ? STALE_STOPPING_TIMEOUT_MS : STALE_RUNNING_TIMEOUT_MS))
			break;
		sleep_ms(50);
	}
	snprintf(err, errlen,
		 "a PostgreSQL server (pid %ld, %s) is still running in %s: is another stewardd "
		 "using this data directory?", pid, *status ? status : "status unknown", p->pg);
	return -EBUSY;
}

/* A conninfo value in single quotes, with ' and \ escaped. */
static bool quote_value(char *out, size_t outlen, const char *v)
{
	size_t o = 0;
	if (outlen < 3)
		return false;
	out[o++] = '\'';
	for (; *v; v++) {
		if (o + 4 >= outlen)
			return false;
		if (*v == '\'' || *v == '\\')
			out[o++] = '\\';
		out[o++] = *v;
	}
	out[o++] = '\'';
	out[o] = '\0';
	return true;
}

static int create_database(const char *admin_conninfo, char *err, size_t errlen)
{
	PGconn *pg = PQconnectdb(admin_conninfo);
	int r = 0;
	if (!pg || PQstatus(pg) != CONNECTION_OK) {
		const char *m = pg ? PQerrorMessage(pg) : "out of memory";
		snprintf(err, errlen, "cannot connect to the embedded PostgreSQL: %.*s",
			 (int)strcspn(m, "\r\n"), m);
		r = -ECONNREFUSED;
		goto finish;
	}
	PGresult *res = PQexec(pg, "SELECT 1 FROM pg_database WHERE datname = 'steward'");
	bool exists = res && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
	bool ok = res && PQresultStatus(res) == PGRES_TUPLES_OK;
	PQclear(res);
	if (ok && !exists) {
		res = PQexec(pg, "CREATE DATABASE steward");
		ok = res && PQresultStatus(res) == PGRES_COMMAND_OK;
		PQclear(res);
	}
	if (!ok) {
		const char *m = PQerrorMessage(pg);
		snprintf(err, errlen, "cannot create the database \"steward\": %.*s",
			 (int)strcspn(m, "\r\n"), m);
		r = -EIO;
	}
finish:
	PQfinish(pg);
	return r;
}

int sw_db_embedded_start(const char *data_dir, char *conninfo, size_t conninfo_len,
			 char *err, size_t errlen)
{
	struct paths *p = calloc(1, sizeof(*p));
	int logfd = -1;
	int r;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = make_paths(p, data_dir, err, errlen);
	if (r < 0)
		goto out;
	char major[16];
	cluster_major(p->pg, major, sizeof(major));
	r = find_bindir(p, major, err, errlen);
	if (r < 0)
		goto out;
	if (server_pid > 0) {
		snprintf(err, errlen, "the embedded PostgreSQL is already running");
		r = -EALREADY;
		goto out;
	}

	struct identity id = { .drop = geteuid() == 0 };
	if (id.drop) {
		struct passwd *pw = getpwnam("postgres");
		if (!pw) {
			snprintf(err, errlen,
				 "running as root, the embedded PostgreSQL must run as the "
				 "\"postgres\" system user, which does not exist: apt-get install "
				 "postgresql (or set DATABASE_URL)");
			r = -ENOENT;
			goto out;
		}
		id.uid = pw->pw_uid;
		id.gid = pw->pw_gid;
	}

	r = make_dirs(p->data, 0700);
	if (r < 0) {
		snprintf(err, errlen, "cannot create the data directory %s: %s", p->data,
			 strerror(-r));
		goto out;
	}
	if (id.drop) {
		/* The postgres user must traverse (not read) the data directory. */
		struct stat st;
		if (stat(p->data, &st) == 0 && st.st_uid != id.uid && !(st.st_mode & S_IXOTH) &&
		    chmod(p->data, (st.st_mode & 07777) | S_IXOTH) < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot make %s searchable by the postgres user: %s",
				 p->data, strerror(-r));
			goto out;
		}
	}
	logfd = open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (logfd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open %s: %s", p->log, strerror(-r));
		goto out;
	}

	if (!*major) {
		struct stat st;
		if (stat(p->pg, &st) == 0) {
			snprintf(err, errlen,
				 "%s exists but is not a PostgreSQL data directory (no PG_VERSION): "
				 "move it away", p->pg);
			r = -EEXIST;
			goto out;
		}
		r = run_initdb(p, &id, logfd, err, errlen);
		if (r < 0)
			goto out;
	}

	r = make_dirs(p->run, 0700);
	if (r < 0) {
		snprintf(err, errlen, "cannot create %s: %s", p->run, strerror(-r));
		goto out;
	}
	if (id.drop && chown(p->run, id.uid, id.gid) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot give %s to the postgres user: %s", p->run,
			 strerror(-r));
		goto out;
	}
	r = wait_stale_postmaster(p, err, errlen);
	if (r < 0)
		goto out;

	char *argv[] = { p->postgres, "-D", p->pg, "-k", p->run, "-p", PG_PORT,
			 "-c", "listen_addresses=", NULL };
	off_t from = lseek(logfd, 0, SEEK_END);
	pid_t pid;
	r = spawn(argv, &id, logfd, p->data, SIGINT, &pid);
	if (r < 0) {
		snprintf(err, errlen, "cannot start postgres: %s", strerror(-r));
		goto out;
	}

	char host[PATH_MAX + 8], admin[PATH_MAX + 128];
	if (!quote_value(host, sizeof(host), p->run)) {
		r = -ENAMETOOLONG;
		snprintf(err, errlen, "the data directory path is too long");
		goto kill_server;
	}
	snprintf(admin, sizeof(admin),
		 "host=%s port=" PG_PORT " dbname=postgres user=steward connect_timeout=2", host);
	for (unsigned waited = 0;; waited += 50) {
		int status;
		if (wait_exit(pid, 0, &status)) {
			char how[64], tail[1024];
			describe_status(status, how, sizeof(how));
			log_tail(p->log, from, tail, sizeof(tail));
			snprintf(err, errlen, "the embedded PostgreSQL %s (%s): %s", how, p->log, tail);
			r = -EIO;
			goto out;
		}
		if (PQping(admin) == PQPING_OK)
			break;
		if (waited >= READY_TIMEOUT_MS) {
			char tail[1024];
			log_tail(p->log, from, tail, sizeof(tail));
			snprintf(err, errlen,
				 "the embedded PostgreSQL did not accept connections within %d s (%s): %s",
				 READY_TIMEOUT_MS / 1000, p->log, tail);
			r = -ETIMEDOUT;
			goto kill_server;
		}
		sleep_ms(50);
	}
	server_pid = pid;

	r = create_database(admin, err, errlen);
	if (r < 0) {
		sw_db_embedded_stop();
		goto out;
	}
	int n = snprintf(conninfo, conninfo_len, "host=%s port=" PG_PORT " dbname=steward user=steward",
			 host);
	if (n < 0 || (size_t)n >= conninfo_len) {
		sw_db_embedded_stop();
		snprintf(err, errlen, "the connection string does not fit its buffer");
		r = -ENAMETOOLONG;
		goto out;
	}
	r = 0;
	goto out;

kill_server:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
out:
	if (logfd >= 0)
		close(logfd);
	free(p);
	return r;
}

void sw_db_embedded_stop(void)
{
	pid_t pid = server_pid;
	if (pid <= 0)
		return;
	server_pid = 0;
	int status;
	/* SIGINT is PostgreSQL's fast shutdown: sessions are ended, a
	 * checkpoint is written. */
	if (kill(pid, SIGINT) < 0 && errno == ESRCH) {
		waitpid(pid, &status, WNOHANG);
		return;
	}
	if (wait_exit(pid, STOP_TIMEOUT_MS, &status))
		return;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}
