#!/bin/sh
# scripts/build-static.sh [BUILD_DIR [CONFIGURE ARGS...]] - build
# BUILD_DIR/memtap-static (default BUILD_DIR: build-static in the source
# tree): memtap as one statically linked executable, to copy to hosts
# that have none of its libraries or an older C library.
#
# Debian's -dev packages carry a static archive of every library memtap
# links with (libdw-dev, libelf-dev, libunwind-dev, zlib1g-dev,
# liblzma-dev, libbz2-dev, libiberty-dev) but one: libzydis-dev has
# only libZydis.so.  So this script
#   1. fetches Zydis' Debian source package with apt-get source, from
#      the archive the system's apt already uses, through a deb-src list
#      and package lists of its own in BUILD_DIR/deps/apt (the system's
#      apt configuration is not touched; no root needed once the
#      packages are installed), the version of the installed
#      libzydis-dev when the archive has it;
#   2. builds libZydis.a with cmake into BUILD_DIR/deps/prefix (kept:
#      a second run reuses it; remove BUILD_DIR/deps to rebuild).
#      Zycore, Zydis' support library, comes as headers from
#      libzycore-dev, as in Debian's own build of Zydis: libZydis calls
#      none of Zycore's functions (checked below), so no Zycore code is
#      linked;
#   3. configures memtap in BUILD_DIR with --enable-static-binary (and
#      the CONFIGURE ARGS) against that prefix, and runs `make static`.
#   Zydis is the x86_64 arch's alone: with --with-arch=none or
#   --with-arch=aarch64 among the CONFIGURE ARGS, steps 1 and 2 are
#   left out.
# For arm64 on this x86-64 machine (Debian's cross compiler and the
# arm64 archives, after `dpkg --add-architecture arm64 && apt-get
# update`): scripts/build-static.sh DIR --host=aarch64-linux-gnu
# --with-arch=aarch64; pkg-config then reads the arm64 libraries' .pc
# files (PKG_CONFIG_LIBDIR, unless set).
# As root, it first installs the Debian packages it needs.
#
# Exit status: 0 built, 1 failed, 77 Zydis' source could not be fetched.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-static}
[ $# -gt 0 ] && shift
mkdir -p "$build"
build=$(cd "$build" && pwd)
deps=$build/deps
prefix=$deps/prefix
jobs=$(nproc 2>/dev/null || echo 2)
packages="cmake dpkg-dev file libzycore-dev libzydis-dev libdw-dev libelf-dev libunwind-dev
zlib1g-dev liblzma-dev libbz2-dev libiberty-dev"

say() { echo "build-static: $*"; }
die() { echo "build-static: $*" >&2; exit 1; }

install_packages() {
	missing=
	for p in $packages; do
		dpkg -s "$p" > /dev/null 2>&1 || missing="$missing $p"
	done
	[ -n "$missing" ] || return 0
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get > /dev/null; then
		say "missing packages (not root: not installed):$missing" >&2
		return 0
	fi
	apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$missing > /dev/null
}

# The deb-src twin of every apt source of the system, in $apt.
write_sources() {
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts"
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f"
	done > "$apt/sources.list"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" > "$apt/parts/${f##*/}"
	done
	return 0
}

# Zydis' unpacked source in $deps/src/zydis, or exit 77.
fetch_zydis() {
	apt=$deps/apt
	write_sources
	set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts="$apt/parts" \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Debug::NoLocking=1
	[ "$(id -u)" -ne 0 ] || set -- "$@" -o APT::Sandbox::User=root
	say "fetching Zydis' source package"
	# A source that has no deb-src index fails alone; apt-get source tells.
	apt-get "$@" -qq update > "$deps/fetch.log" 2>&1 || true
	ver=$(dpkg-query -W -f='${source:Version}' libzydis-dev 2>/dev/null || true)
	rm -rf "$deps/dl" "$deps/src"
	mkdir -p "$deps/dl" "$deps/src"
	(cd "$deps/dl" && { { [ -n "$ver" ] && apt-get "$@" -qq source --download-only "zydis=$ver"; } ||
		apt-get "$@" -qq source --download-only zydis; }) >> "$deps/fetch.log" 2>&1 || {
		tail -5 "$deps/fetch.log" >&2
		say "could not fetch Zydis' source package (see $deps/fetch.log)" >&2
		exit 77
	}
	# apt checked the files against the archive's signed index.
	dpkg-source --no-check -x "$deps"/dl/zydis_*.dsc "$deps/src/zydis" >> "$deps/fetch.log" 2>&1 ||
		die "could not unpack $(echo "$deps"/dl/zydis_*.dsc) (see $deps/fetch.log)"
}

build_zydis() {
	zb=$deps/zydis-build
	rm -rf "$zb" "$prefix"
	say "building libZydis.a"
	{
		cmake -S "$deps/src/zydis" -B "$zb" -DCMAKE_BUILD_TYPE=Release \
			-DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
			-DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF \
			-DZYDIS_BUILD_SHARED_LIB=OFF -DZYAN_SYSTEM_ZYCORE=ON \
			-DZYDIS_BUILD_TOOLS=OFF -DZYDIS_BUILD_EXAMPLES=OFF \
			-DZYDIS_BUILD_MAN=OFF -DZYDIS_BUILD_DOXYGEN=OFF &&
		cmake --build "$zb" -j "$jobs" &&
		cmake --install "$zb"
	} > "$deps/zydis.log" 2>&1 || { tail -20 "$deps/zydis.log" >&2; die "Zydis build failed (see $deps/zydis.log)"; }
	[ -f "$prefix/lib/libZydis.a" ] || die "no $prefix/lib/libZydis.a after the Zydis build"
	if nm -u "$prefix/lib/libZydis.a" | grep -qE ' (Zyan|Zycore)'; then
		die "libZydis.a calls into Zycore: a static Zycore is needed too"
	fi
}

# Zydis is the x86_64 arch's alone: none for --with-arch=none or aarch64
zydis=1
host=
for a in "$@"; do
	case $a in
	--with-arch=x86_64) zydis=1 ;;
	--with-arch=*) zydis= ;;
	--host=*) host=${a#--host=} ;;
	esac
done
if [ -n "$host" ]; then
	# a cross build: the compiler and the -dev packages of host's Debian arch
	darch=$(dpkg-architecture -t "$host" -q DEB_HOST_ARCH 2> /dev/null) ||
		die "no Debian architecture for --host=$host"
	packages="gcc-$host file pkg-config"
	for p in libdw-dev libelf-dev libunwind-dev zlib1g-dev liblzma-dev libbz2-dev libzstd-dev \
		libiberty-dev; do
		packages="$packages $p:$darch"
	done
	: "${PKG_CONFIG_LIBDIR:=/usr/lib/$host/pkgconfig:/usr/share/pkgconfig}"
	export PKG_CONFIG_LIBDIR
fi
[ -n "$zydis" ] || packages=$(echo "$packages" | sed 's/libzycore-dev libzydis-dev //')
if [ -n "$zydis" ]; then
	command -v apt-get > /dev/null || die "needs Debian's apt-get (to fetch Zydis' source)"
fi
install_packages
mkdir -p "$deps"
if [ -z "$zydis" ]; then
	:
elif [ -f "$prefix/lib/libZydis.a" ]; then
	say "reusing $prefix/lib/libZydis.a"
else
	fetch_zydis
	build_zydis
fi

[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi > /dev/null 2>&1)
say "configuring and building memtap-static in $build"
cd "$build"
"$top/configure" --enable-static-binary CPPFLAGS="-I$prefix/include" LDFLAGS="-L$prefix/lib" \
	"$@" > configure.log 2>&1 || {
	tail -5 configure.log >&2
	die "configure failed (see $build/configure.log and config.log)"
}
make -j"$jobs" static > make.log 2>&1 || { tail -30 make.log >&2; die "make failed (see $build/make.log)"; }
say "$(file -b memtap-static 2>/dev/null | cut -d, -f1-5)"
say "done: copy $build/memtap-static ($(wc -c < memtap-static) bytes)"
