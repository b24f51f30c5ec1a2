# MT_STATIC_BINARY: the switch --enable-static-binary, which builds
# memtap-static besides memtap: the same objects linked with -static,
# for hosts that have none of memtap's libraries (or an older glibc).
# scripts/build-static.sh does it all, with a static libZydis it builds.
#
# Substitutes STATIC_LDFLAGS (-static and the dlopen wraps) and
# STATIC_LIBS (the private dependencies of libdw, libelf and
# libunwind, from pkg-config --static).  Checks, each failing with what
# to install: that every library links statically, and that libdw's
# debuginfod client no longer reaches dlopen (libdw dlopens
# libdebuginfod.so.1, which in a static executable would map a second C
# library into memtap): dlopen, dlsym, dlclose and dlerror are wrapped
# (-Wl,--wrap) by src/util/nodl.c, where dlopen fails.

AC_DEFUN([MT_STATIC_BINARY], [
	AC_ARG_ENABLE([static-binary],
		[AS_HELP_STRING([--enable-static-binary],
			[also build memtap-static, statically linked (see scripts/build-static.sh)])],
		[], [enable_static_binary=no])
	STATIC_LDFLAGS=
	STATIC_LIBS=
	AS_IF([test "x$enable_static_binary" = xyes], [
		AS_IF([test "x$enable_sanitizers" = xyes],
			[AC_MSG_ERROR([--enable-static-binary and --enable-sanitizers do not mix: the sanitizer runtimes need a dynamic executable])])
		STATIC_LDFLAGS="-static"
		for mt_sym in dlopen dlsym dlclose dlerror getaddrinfo freeaddrinfo; do
			STATIC_LDFLAGS="$STATIC_LDFLAGS -Wl,--wrap=$mt_sym"
		done
		STATIC_LIBS=`$PKG_CONFIG --static --libs libdw libelf libunwind-ptrace libunwind-generic`
		mt_save_LDFLAGS=$LDFLAGS
		mt_save_LIBS=$LIBS
		LDFLAGS="$LDFLAGS -static"
		MT_STATIC_LINK([libelf], [elf_version], [$LIBELF_LIBS $STATIC_LIBS], [apt-get install libelf-dev])
		MT_STATIC_LINK([libdw], [dwfl_begin], [$LIBDW_LIBS $STATIC_LIBS], [apt-get install libdw-dev liblzma-dev libbz2-dev])
		MT_STATIC_LINK([libunwind-ptrace], [_UPT_create], [$LIBUNWIND_LIBS $STATIC_LIBS], [apt-get install libunwind-dev liblzma-dev])
		MT_STATIC_LINK([libz], [deflateInit2_], [$ZLIB_LIBS], [apt-get install zlib1g-dev])
		AS_IF([test -n "$LIBIBERTY_LIBS"],
			[MT_STATIC_LINK([libiberty], [cplus_demangle], [$LIBIBERTY_LIBS], [apt-get install libiberty-dev])])
		AS_IF([test "$arch" = x86_64],
			[MT_STATIC_LINK([libZydis], [ZydisDecoderInit], [$LIBZYDIS_LIBS],
				[Debian ships none, scripts/build-static.sh builds one])])

		AC_MSG_CHECKING([whether libdw's debuginfod client is cut off from dlopen])
		LDFLAGS="$mt_save_LDFLAGS $STATIC_LDFLAGS"
		LIBS="$LIBDW_LIBS $STATIC_LIBS $mt_save_LIBS"
		AC_RUN_IFELSE([AC_LANG_SOURCE([[
#include "$srcdir/src/util/nodl.c"
#include <dlfcn.h>
#include <elfutils/libdwfl.h>

static const Dwfl_Callbacks cb = { .find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo };

int main(void)
{
	Dwfl *dwfl = dwfl_begin(&cb);

	if (dlopen("libc.so.6", RTLD_NOW) != NULL || dlerror() == NULL)
		return 1;
	return dwfl == NULL || dwfl_get_debuginfod_client(dwfl) != NULL;
}
]])], [AC_MSG_RESULT([yes])],
			[AC_MSG_RESULT([no])
			 AC_MSG_ERROR([a static memtap would dlopen libdebuginfod (see config.log)])],
			[AC_MSG_RESULT([cross-compiling: assumed])])
		LDFLAGS=$mt_save_LDFLAGS
		LIBS=$mt_save_LIBS
	])
	AC_SUBST([STATIC_LDFLAGS])
	AC_SUBST([STATIC_LIBS])
	AM_CONDITIONAL([STATIC_BINARY], [test "x$enable_static_binary" = xyes])
])

# MT_STATIC_LINK(NAME, FUNCTION, LIBS, HINT): FUNCTION links from LIBS
# with the current (static) LDFLAGS, or configure fails with HINT.
AC_DEFUN([MT_STATIC_LINK], [
	AC_MSG_CHECKING([whether $1 links statically])
	LIBS="$3 $mt_save_LIBS"
	AC_LINK_IFELSE([AC_LANG_CALL([], [$2])], [AC_MSG_RESULT([yes])], [
		AC_MSG_RESULT([no])
		AC_MSG_ERROR([no static $1 (lib*.a) for --enable-static-binary: $4])])
])
