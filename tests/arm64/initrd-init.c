/*
 * tests/arm64/initrd-init.c - /init of the arm64 guest's small initrd
 * (scripts/arm64-guest.sh image), built static for aarch64 on the host.
 *
 * Loads the modules listed, one file name a line, in /modules (a
 * module's dependencies before it; their .ko files in /lib/mod/), mounts
 * /dev/vda (ext4) read-write on /newroot, the 9p share tagged memtap_run
 * on /newroot/memtap, moves /newroot onto / and runs
 * /bin/sh /memtap/guest-init there as pid 1.  Nothing is read from the
 * kernel command line: the script decides everything through the share.
 * On any failure it says what failed on the console and powers the
 * guest off, so that the host sees qemu end instead of a hang.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "initrd: %s: %s\n", what, strerror(errno));
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static void load_modules(void)
{
	char line[256], path[300];
	FILE *f = fopen("/modules", "r");

	if (!f)
		die("open /modules");
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		snprintf(path, sizeof(path), "/lib/mod/%s", line);
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			die(path);
		if (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST)
			die(path);
		close(fd);
	}
	fclose(f);
}

/* /dev/vda appears once virtio-blk has probed it: wait up to 30 s */
static void wait_for(const char *dev)
{
	struct stat st;

	for (int i = 0; i < 300; i++) {
		if (stat(dev, &st) == 0)
			return;
		usleep(100000);
	}
	die(dev);
}

int main(void)
{
	mkdir("/dev", 0755);
	mkdir("/proc", 0755);
	if (mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) != 0 && errno != EBUSY)
		die("mount /dev");
	load_modules();
	wait_for("/dev/vda");
	mkdir("/newroot", 0755);
	if (mount("/dev/vda", "/newroot", "ext4", 0, NULL) != 0)
		die("mount /dev/vda on /newroot");
	mkdir("/newroot/memtap", 0755);
	if (mount("memtap_run", "/newroot/memtap", "9p", 0,
		  "trans=virtio,version=9p2000.L,msize=262144,cache=none") != 0)
		die("mount 9p memtap_run");
	if (umount2("/dev", MNT_DETACH) != 0)
		die("umount /dev");
	if (chdir("/newroot") != 0)
		die("chdir /newroot");
	if (mount(".", "/", NULL, MS_MOVE, NULL) != 0)
		die("move /newroot to /");
	if (chroot(".") != 0 || chdir("/") != 0)
		die("chroot /newroot");
	char *argv[] = { "/bin/sh", "/memtap/guest-init", NULL };
	char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "TERM=dumb", NULL };

	execve(argv[0], argv, envp);
	die("exec /bin/sh /memtap/guest-init");
	return 1;
}
