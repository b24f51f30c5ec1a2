/*
 * tfile-unit.c - linux/tfile.c against each hostile kind of file, with
 * openat2() and with the component walk: what opens, what is refused
 * and with which errno, and that nothing blocks (a FIFO with no writer
 * would hang an open() forever; the test runs under a timeout).
 *
 * Usage: tfile-unit DIR  (an empty directory of the caller's).  As
 * root, the owner rule is tested with a file given to uid 65534.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "linux/tfile.h"
#include "unit-check.h"

static char dir[4096];

static char *at(const char *name)
{
	static char buf[2][4200];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void make_file(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(name);
		exit(99);
	}
}

/* tfile_open of name under kind/flags: fd closed; returns 0 or errno. */
static int try_open(const char *name, enum tfile_kind kind, unsigned flags)
{
	struct tfile_req r = { .pid = getpid(), .path = at(name), .kind = kind,
			       .flags = flags | TF_QUIET };
	int fd = tfile_open(&r);

	if (fd >= 0) {
		char c;

		CHECK(read(fd, &c, 1) >= 0, "%s: read: %s", name, strerror(errno));
		CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0, "%s: not close-on-exec", name);
		close(fd);
		return 0;
	}
	return errno;
}

static void run(const char *how)
{
	int e;

	printf("%s\n", how);
	CHECK((e = try_open("plain", TF_PERFMAP, TF_OWNED)) == 0, "%s plain: %s", how, strerror(e));
	CHECK((e = try_open("plain", TF_ELF, TF_IN_ROOT)) == 0, "%s plain in root: %s", how,
	      strerror(e));
	CHECK(try_open("missing", TF_PERFMAP, 0) == ENOENT, "%s missing", how);
	CHECK(try_open("fifo", TF_PERFMAP, 0) == EINVAL, "%s fifo not refused", how);
	CHECK(strstr(tfile_last_why(), "FIFO") != NULL, "%s fifo: why '%s'", how, tfile_last_why());
	CHECK(try_open("link", TF_PERFMAP, 0) == ELOOP, "%s symlink not refused", how);
	CHECK(try_open("linkdir/plain", TF_DEBUG, TF_IN_ROOT) == ELOOP,
	      "%s symlink in the path not refused", how);
	CHECK(try_open("sub/../plain", TF_DEBUG, 0) == EINVAL, "%s .. not refused", how);
	CHECK(try_open("sub", TF_DEBUG, 0) == EINVAL, "%s directory not refused", how);
	CHECK(try_open("nulllink", TF_DEBUG, 0) == ELOOP, "%s link to a device not refused", how);
	CHECK(try_open("sparse", TF_PERFMAP, 0) == EFBIG, "%s sparse 8 GiB not refused", how);
	CHECK(try_open("sparse", TF_JITDUMP, 0) == EFBIG, "%s sparse jitdump not refused", how);
	if (geteuid() == 0) {
		CHECK(try_open("nobodys", TF_PERFMAP, TF_OWNED) == EPERM,
		      "%s other owner not refused", how);
		CHECK(strstr(tfile_last_why(), "65534") != NULL, "%s owner: why '%s'", how,
		      tfile_last_why());
		CHECK(try_open("nobodys", TF_PERFMAP, 0) == 0, "%s owner rule without TF_OWNED", how);
		tfile_trust_owner(1);
		CHECK(try_open("nobodys", TF_PERFMAP, TF_OWNED) == 0, "%s --trust-files", how);
		tfile_trust_owner(0);
	}
}

int main(int argc, char **argv)
{
	int fd;

	if (argc != 2 || strlen(argv[1]) > 3000) {
		fprintf(stderr, "usage: tfile-unit DIR\n");
		return 99;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	make_file("plain", "1000 10 f\n");
	make_file("nobodys", "1000 10 planted\n");
	if (geteuid() == 0 && chown(at("nobodys"), 65534, 65534) < 0)
		return 99;
	if (mkfifo(at("fifo"), 0600) < 0 || symlink("plain", at("link")) < 0 ||
	    mkdir(at("sub"), 0700) < 0 || symlink(".", at("linkdir")) < 0 ||
	    symlink("/dev/null", at("nulllink")) < 0)
		return 99;
	fd = open(at("sparse"), O_WRONLY | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 8LL << 30) < 0 || close(fd) < 0)
		return 99;

	run("openat2");
	tfile_force_walk(1);
	run("walk");
	tfile_force_walk(0);

	/* a real device node, opened by path with no link on the way */
	{
		struct tfile_req r = { .pid = getpid(), .path = "/dev/null", .kind = TF_DEBUG,
				       .flags = TF_QUIET };
		CHECK(tfile_open(&r) < 0 && errno == EINVAL, "/dev/null not refused");
		CHECK(strstr(tfile_last_why(), "device") != NULL, "/dev/null: why '%s'",
		      tfile_last_why());
		r.path = "/proc/self/root/dev/null";
		r.flags = TF_MAGIC | TF_QUIET;
		CHECK(tfile_open(&r) < 0 && errno == EINVAL, "magic /dev/null not refused");
	}
	/* a magic link to a regular file opens */
	{
		char p[64];
		struct tfile_req r = { .pid = getpid(), .path = p, .kind = TF_ELF, .flags = TF_MAGIC };

		fd = open(at("plain"), O_RDONLY);
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		int fd2 = tfile_open(&r);
		CHECK(fd2 >= 0, "magic link to a regular file: %s", strerror(errno));
		if (fd2 >= 0)
			close(fd2);
		close(fd);
	}
	{
		struct tfile_req r = { .pid = getpid(), .path = at("fifo"), .kind = TF_PERFMAP };
		unsigned long before = tfile_refused();

		CHECK(tfile_open(&r) < 0 && tfile_refused() == before + 1, "refusal not counted");
		CHECK(tfile_open(&r) < 0 && tfile_refused() == before + 1, "refusal counted twice");
	}
	printf("%s\n", failures ? "failed" : "ok");
	return failures != 0;
}
