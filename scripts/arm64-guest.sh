#!/bin/sh
# scripts/arm64-guest.sh - an arm64 Debian 12 guest under qemu-system-aarch64
# (TCG) on an x86-64 Debian 12 host, for memtap's arm64 tests.
#
#   image
#	Build the guest, or reuse the one cached, and print its directory.
#	The cache is ${MEMTAP_ARM64_CACHE:-/var/cache/memtap/arm64}/KEY,
#	KEY a hash of guest_version below, the package list and the host's
#	apt sources: a change of any of them builds a new image, and the
#	other images there are removed.  Needs root on the first build:
#	it installs its host packages with apt-get, enables binfmt for
#	qemu-aarch64, and runs mmdebstrap --arch=arm64 on the host's own
#	Debian sources (${MEMTAP_ARM64_SOURCES:-/etc/apt/sources.list.d/
#	debian.sources}, else /etc/apt/sources.list): nothing else is
#	downloaded.  Debian's update-initramfs is diverted (under
#	qemu-user it takes 20 minutes); a small initrd is made on the host
#	instead, whose /init (tests/arm64/initrd-init.c, static) loads the
#	virtio, ext4 and 9p modules and switches to the root filesystem.
#	The cache holds vmlinuz, initrd.img, rootfs.img (ext4, 2 GiB
#	sparse) and the key's text (key); a build is done in KEY.tmp and
#	renamed, under a lock, so an image in the cache is always whole.
#
#   run [-v] [--cpu MODEL] [--timeout S] DIR CMD [ARG...]
#	Boot the guest (-M virt, 2 vCPUs, 1 GiB, no network; the image
#	opened with snapshot=on, so that nothing a run writes outlives it
#	and runs may overlap), share DIR read-write over 9p at the same
#	path in the guest, run CMD there as root and power off.  CMD's
#	stdout and stderr come back on this script's (after the guest has
#	ended, each whole: their interleaving is lost), its exit status is
#	this script's.  MODEL: neoverse-n1 (the default: no PAC, no BTI,
#	like Graviton2) or max,pauth-impdef=on (PAC, BTI, MTE, SVE2), or
#	any qemu -cpu string.  S: the command's time limit, 600 s by
#	default; the boot's is ${MEMTAP_ARM64_BOOT_TIMEOUT:-300} s.
#	Exit status: CMD's; 124 when CMD ran past S (timeout(1) in the
#	guest, so CMD's own 124 reads the same), 125 when the guest
#	could not be run (no image, the boot failed or ran past its limit,
#	the command's status never came back), each with one line on
#	stderr.  -v: the boot's and the command's times on stderr.
#
#   shell [--cpu MODEL] [DIR]
#	A root shell in the guest on this terminal (DIR shared as with
#	run); `exit` powers the guest off.
#
# The guest runs its own /bin/sh as pid 1, with /proc, /sys, /dev,
# /dev/pts, /dev/shm, /tmp and /run mounted; the files of a run are
# under /memtap in the guest (a temporary directory on the host).
set -eu

# A new value rebuilds every cached image: change it with what the image
# holds or how it is made.
guest_version="memtap-arm64-guest 1"
# memtap's run-time libraries (libelf1, libdw1, libunwind8, zlib1g),
# strace, musl for the musl targets, the tools of tests/lib.sh.
# golang-go is left out (about 300 MB unpacked): Go targets are
# cross-built on the host with GOARCH=arm64 instead.
guest_packages="linux-image-arm64 kmod mount procps mawk strace libelf1 libdw1
libunwind8 zlib1g musl"
# The modules the initrd loads, with their dependencies.
initrd_modules="virtio_pci virtio_blk crc32c_generic ext4 9pnet_virtio 9p"
host_packages="qemu-system-arm:qemu-system-aarch64 mmdebstrap:mmdebstrap
qemu-user-static:qemu-aarch64-static binfmt-support:update-binfmts arch-test:arch-test
e2fsprogs:mkfs.ext4 cpio:cpio gcc-aarch64-linux-gnu:aarch64-linux-gnu-gcc
libc6-dev-arm64-cross:/usr/aarch64-linux-gnu/lib/libc.a"

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${MEMTAP_ARM64_CACHE:-/var/cache/memtap/arm64}
me=arm64-guest

say() { echo "$me: $*" >&2; }
die() { echo "$me: $*" >&2; exit "${rc:-1}"; }
now() { date +%s; }

sources_file() {
	for f in ${MEMTAP_ARM64_SOURCES:-} /etc/apt/sources.list.d/debian.sources \
		/etc/apt/sources.list; do
		[ -s "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

image_key() {
	src=$(sources_file) || die "no apt sources file; set MEMTAP_ARM64_SOURCES"
	{ echo "$guest_version"; echo $guest_packages; grep -v '^#' "$src"; } |
		sha256sum | cut -c1-16
}

# host_setup: the host's packages, installed when missing
host_setup() {
	missing=
	for pair in $host_packages; do
		f=${pair#*:}
		case $f in
		/*) [ -e "$f" ] ;;
		*) command -v "$f" > /dev/null ;;
		esac || missing="$missing ${pair%%:*}"
	done
	if [ -n "$missing" ]; then
		[ "$(id -u)" -eq 0 ] && command -v apt-get > /dev/null ||
			die "missing host packages:$missing (install them as root)"
		say "installing host packages with apt-get:$missing"
		apt-get update -qq || die "apt-get update failed"
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive nice apt-get install -y -qq \
			--no-install-recommends $missing > /dev/null ||
			die "apt-get install$missing failed"
	fi
}

# binfmt_setup: arm64 programs run by qemu-user (mmdebstrap runs the
# guest's maintainer scripts so)
binfmt_setup() {
	if ! arch-test arm64 > /dev/null 2>&1; then
		[ "$(id -u)" -eq 0 ] || die "binfmt for qemu-aarch64 is not enabled (needs root)"
		if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
			say "mounting binfmt_misc on /proc/sys/fs/binfmt_misc"
			mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
				die "mount binfmt_misc failed"
		fi
		say "enabling binfmt for qemu-aarch64 (update-binfmts --enable qemu-aarch64)"
		update-binfmts --enable qemu-aarch64 > /dev/null 2>&1 || true
		arch-test arm64 > /dev/null 2>&1 ||
			die "arm64 binaries do not run under qemu-user here (arch-test arm64 fails)"
	fi
}

# module_closure DEP BUILTIN NAME...: the .ko paths (relative to the
# modules' directory) to load, dependencies first, from the kernel's
# modules.dep and modules.builtin; builtins left out.
module_closure() {
	dep=$1 builtin=$2
	shift 2
	awk -v want="$*" '
	function norm(p,  n) { n = p; sub(/.*\//, "", n); sub(/\.ko(\.[a-z]+)?$/, "", n)
		gsub(/-/, "_", n); return n }
	FILENAME == ARGV[1] { builtin[norm($1)] = 1; next }
	{ m = $1; sub(/:$/, "", m); path[norm(m)] = m
	  deps[norm(m)] = ""; for (i = 2; i <= NF; i++) deps[norm(m)] = deps[norm(m)] " " norm($i) }
	function load(n,  d, k, i) {
		if (done[n]++) return
		if (!(n in path)) { if (!(n in builtin)) missing = missing " " n; return }
		k = split(deps[n], d, " ")
		for (i = k; i >= 1; i--) load(d[i])
		print path[n]
	}
	END { n = split(want, w, " "); for (i = 1; i <= n; i++) load(w[i])
	      if (missing != "") { print "no module" missing > "/dev/stderr"; exit 1 } }
	' "$builtin" "$dep"
}

# initrd_key: what the initrd is made of
initrd_key() {
	{ echo $initrd_modules; cat "$top/tests/arm64/initrd-init.c"; } | sha256sum | cut -c1-16
}

# make_initrd DIR: DIR/initrd.img from DIR/rootfs.img's kernel modules
# (read with debugfs, nothing mounted) and tests/arm64/initrd-init.c;
# DIR/initrd.key says what it was made of.
make_initrd() {
	out=$1
	img=$out/rootfs.img
	ird=$out/initrd.d
	rm -rf "$ird"
	mkdir -p "$ird/lib/mod"
	kver=$(debugfs -R 'ls -p /lib/modules' "$img" 2> /dev/null |
		awk -F/ '$6 != "" && $6 != "." && $6 != ".." { print $6 }')
	[ -n "$kver" ] && [ "$(echo "$kver" | wc -l)" -eq 1 ] ||
		die "not one kernel in $img's /lib/modules: $kver"
	debugfs -R "dump /lib/modules/$kver/modules.dep $ird/modules.dep" "$img" 2> /dev/null
	debugfs -R "dump /lib/modules/$kver/modules.builtin $ird/modules.builtin" "$img" 2> /dev/null
	aarch64-linux-gnu-gcc -static -Os -Wall -Wextra -Werror -o "$ird/init" \
		"$top/tests/arm64/initrd-init.c" || die "cross-compiling the initrd's /init failed"
	# shellcheck disable=SC2086
	mods=$(module_closure "$ird/modules.dep" "$ird/modules.builtin" $initrd_modules) ||
		die "resolving the initrd's modules failed"
	rm "$ird/modules.dep" "$ird/modules.builtin"
	for m in $mods; do
		b=$(basename "$m")
		debugfs -R "dump /lib/modules/$kver/$m $ird/lib/mod/$b" "$img" 2> /dev/null
		case $b in
		*.ko) ;;
		*.ko.xz) xz -d "$ird/lib/mod/$b"; b=${b%.xz} ;;
		*) die "module $m: unknown compression" ;;
		esac
		[ -s "$ird/lib/mod/$b" ] || die "cannot read $m from $img"
		echo "$b" >> "$ird/modules"
	done
	(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initrd.img.tmp" ||
		die "making initrd.img failed"
	mv "$out/initrd.img.tmp" "$out/initrd.img"
	initrd_key > "$out/initrd.key"
	rm -rf "$ird"
}

build_image() {
	key=$1 dir=$cache/$1
	tmp=$dir.tmp
	t0=$(now)
	rm -rf "$tmp"
	mkdir -p "$tmp"
	src=$(sources_file)
	say "building the arm64 root filesystem with mmdebstrap from $src (a few minutes)"
	# update-initramfs diverted before the kernel's postinst can run it
	# shellcheck disable=SC2016
	nice mmdebstrap --quiet --arch=arm64 --variant=apt \
		--include="$(echo $guest_packages | tr ' ' ,)" \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--essential-hook='chroot "$1" dpkg-divert --quiet --local --rename --add /usr/sbin/update-initramfs' \
		--essential-hook='printf "#!/bin/sh\nexit 0\n" > "$1/usr/sbin/update-initramfs"; chmod 755 "$1/usr/sbin/update-initramfs"' \
		bookworm "$tmp/root" "$src" > "$tmp/mmdebstrap.log" 2>&1 ||
		{ tail -5 "$tmp/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $tmp/mmdebstrap.log)"; }
	t1=$(now)
	vmlinuz=$(ls "$tmp/root"/boot/vmlinuz-* 2> /dev/null | head -1)
	[ -n "$vmlinuz" ] || die "no kernel in the root filesystem"
	cp "$vmlinuz" "$tmp/vmlinuz"
	echo arm64-guest > "$tmp/root/etc/hostname"
	mkdir -p "$tmp/root/memtap"
	truncate -s 2G "$tmp/rootfs.img"
	mkfs.ext4 -q -F -L memtap-arm64 -d "$tmp/root" "$tmp/rootfs.img" ||
		die "mkfs.ext4 -d failed"
	rm -rf "$tmp/root"
	t2=$(now)
	make_initrd "$tmp"
	{ echo "$guest_version"; echo "packages: $(echo $guest_packages)"
	  echo "sources: $src"
	  echo "built: $(date -u +%FT%TZ) mmdebstrap $((t1 - t0)) s, mkfs $((t2 - t1)) s, initrd $(($(now) - t2)) s"
	} > "$tmp/key"
	rm -f "$tmp/mmdebstrap.log"
	mv "$tmp" "$dir"
	say "image built in $(($(now) - t0)) s: $dir"
}

# ensure_image: the image's directory on stdout, built if missing.
ensure_image() {
	key=$(image_key)
	dir=$cache/$key
	if [ -f "$dir/key" ] && [ "$(cat "$dir/initrd.key" 2> /dev/null)" = "$(initrd_key)" ]; then
		echo "$dir"
		return 0
	fi
	host_setup
	binfmt_setup
	mkdir -p "$cache" 2> /dev/null || die "cannot create $cache (set MEMTAP_ARM64_CACHE)"
	# one build at a time; a second caller waits, then finds it built
	exec 9> "$cache/.lock"
	flock 9
	if [ ! -f "$dir/key" ]; then
		build_image "$key"
		for old in "$cache"/*; do
			[ "$old" = "$dir" ] || [ ! -f "$old/key" ] || { say "removing the stale image $old"; rm -rf "$old"; }
		done
	elif [ "$(cat "$dir/initrd.key" 2> /dev/null)" != "$(initrd_key)" ]; then
		say "making the initrd again (tests/arm64/initrd-init.c or its modules changed)"
		make_initrd "$dir"
	fi
	exec 9>&-
	echo "$dir"
}

# quote ARG: ARG as one shell word
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

guest_init() {
	cat << 'EOF'
# pid 1 of the guest (scripts/arm64-guest.sh)
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
hostname arm64-guest
off() { sync; echo o > /proc/sysrq-trigger; sleep 60; }
: > /memtap/booted
share=$(cat /memtap/share)
if [ -n "$share" ]; then
	mkdir -p "$share" && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none \
		memtap_share "$share" || { echo "guest: mount 9p on $share failed" > /memtap/error; off; }
	cd "$share"
fi
if [ -f /memtap/shell ]; then
	setsid -c /bin/bash -i < /dev/ttyAMA0 > /dev/ttyAMA0 2>&1
else
	# the limit in the guest too: a qemu whose script was killed ends
	timeout -k 5 "$(cat /memtap/timeout)" /bin/sh /memtap/cmd \
		< /dev/null > /memtap/stdout 2> /memtap/stderr
	echo $? > /memtap/status
fi
off
EOF
}

# qemu_opt PATH: PATH as a value in qemu's NAME=VALUE,... options
qemu_opt() { printf '%s' "$1" | sed 's/,/,,/g'; }

# qemu_args CPU IMAGEDIR RUNDIR SHAREDIR: qemu-system-aarch64's arguments
qemu_args() {
	set -- -M virt -cpu "$1" -smp 2 -m 1G -no-reboot -nic none \
		-kernel "$2/vmlinuz" -initrd "$2/initrd.img" \
		-append "console=ttyAMA0 panic=-1 quiet" \
		-drive "if=none,id=hd,file=$(qemu_opt "$2/rootfs.img"),format=raw,snapshot=on" \
		-device virtio-blk-pci,drive=hd \
		-virtfs "local,path=$(qemu_opt "$3"),mount_tag=memtap_run,security_model=none" \
		${4:+-virtfs "local,path=$(qemu_opt "$4"),mount_tag=memtap_share,security_model=none"}
	for a; do quote "$a"; printf ' '; done
}

run_guest() {
	cpu=neoverse-n1 timeout=600 verbose='' shell=''
	[ "$1" = shell ] && shell=1
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--cpu) [ $# -ge 2 ] || die "--cpu needs a model"; cpu=$2; shift 2 ;;
		--cpu=*) cpu=${1#*=}; shift ;;
		--timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; timeout=$2; shift 2 ;;
		--timeout=*) timeout=${1#*=}; shift ;;
		-v) verbose=1; shift ;;
		--) shift; break ;;
		-*) die "unknown option $1" ;;
		*) break ;;
		esac
	done
	case $timeout in ''|*[!0-9]*|0) die "--timeout $timeout: not a number of seconds" ;; esac
	boot_timeout=${MEMTAP_ARM64_BOOT_TIMEOUT:-300}
	case $boot_timeout in ''|*[!0-9]*) die "MEMTAP_ARM64_BOOT_TIMEOUT=$boot_timeout: not a number" ;; esac
	share=
	if [ -n "$shell" ]; then
		[ $# -le 1 ] || die "usage: $0 shell [--cpu MODEL] [DIR]"
		share=${1:-}
	else
		[ $# -ge 2 ] || die "usage: $0 run [-v] [--cpu MODEL] [--timeout S] DIR CMD [ARG...]"
		share=$1
		shift
	fi
	if [ -n "$share" ]; then
		[ -d "$share" ] || die "$share: not a directory"
		share=$(cd "$share" && pwd -P)
		case $share in
		/|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*|/memtap|/memtap/*|*"
"*) die "$share: cannot be shared at the same path in the guest" ;;
		esac
	fi
	rc=125
	imgdir=$(ensure_image)
	command -v qemu-system-aarch64 > /dev/null || die "no qemu-system-aarch64 (package qemu-system-arm)"
	rundir=$(mktemp -d "${TMPDIR:-/tmp}/arm64-guest.XXXXXX")
	guest_init > "$rundir/guest-init"
	printf '%s\n' "$share" > "$rundir/share"
	echo "$timeout" > "$rundir/timeout"
	for a; do quote "$a"; printf ' '; done > "$rundir/cmd"
	echo >> "$rundir/cmd"
	what=$*
	eval "set -- $(qemu_args "$cpu" "$imgdir" "$rundir" "$share")"
	if [ -n "$shell" ]; then
		: > "$rundir/shell"
		nice qemu-system-aarch64 -nographic "$@"
		rm -rf "$rundir"
		return 0
	fi
	t0=$(now)
	nice qemu-system-aarch64 -display none -monitor none -serial "file:$rundir/console" \
		"$@" < /dev/null > "$rundir/qemu.log" 2>&1 &
	qpid=$!
	trap 'kill -KILL $qpid 2> /dev/null; rm -rf "$rundir"' INT TERM HUP
	deadline=$((t0 + boot_timeout)) booted=''
	while kill -0 "$qpid" 2> /dev/null; do
		if [ -z "$booted" ] && [ -e "$rundir/booted" ]; then
			booted=$(now)
			deadline=$((booted + timeout + 30))
			[ -z "$verbose" ] || say "booted to the command in $((booted - t0)) s (cpu $cpu)"
		fi
		if [ "$(now)" -ge "$deadline" ]; then
			kill -KILL "$qpid" 2> /dev/null || true
			wait "$qpid" 2> /dev/null || true
			if [ -z "$booted" ]; then
				keep=$rundir/console
				die "the guest did not boot within $boot_timeout s (console: $keep)"
			fi
			cat "$rundir/stdout" 2> /dev/null || true
			cat "$rundir/stderr" >&2 2> /dev/null || true
			rm -rf "$rundir"
			rc=124 die "the command ran past its $timeout s and was killed: $what"
		fi
		sleep 0.1
	done
	wait "$qpid" 2> /dev/null || true
	trap - INT TERM HUP
	[ -z "$verbose" ] || [ -z "$booted" ] || say "the command and power-off took $(($(now) - booted)) s"
	if [ -s "$rundir/error" ]; then
		echo "$me: $(head -c 300 "$rundir/error" | head -1) (console: $rundir/console)" >&2
		exit 125
	fi
	status=$(head -c 16 "$rundir/status" 2> /dev/null | head -1) || true
	case $status in
	''|*[!0-9]*)
		tail -c 2000 "$rundir/qemu.log" >&2 2> /dev/null || true
		die "the guest ended without the command's exit status (console: $rundir/console)" ;;
	esac
	cat "$rundir/stdout"
	cat "$rundir/stderr" >&2
	rm -rf "$rundir"
	[ "$status" -ne 124 ] || rc=124 die "the command ran past its $timeout s and was killed: $what"
	exit "$status"
}

usage() {
	echo "usage: $0 image | run [-v] [--cpu MODEL] [--timeout S] DIR CMD [ARG...] | shell [--cpu MODEL] [DIR]" >&2
	exit 64
}

[ $# -ge 1 ] || usage
case $1 in
image) [ $# -eq 1 ] || usage; host_setup; ensure_image ;;
run|shell) run_guest "$@" ;;
*) usage ;;
esac
