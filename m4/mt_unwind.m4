# MT_UNWIND: what the stack modules (unwinders, symbolizer) build with.
#
# Defines HAVE_LIBUNWIND and HAVE_LIBDW when MT_LIBUNWIND and MT_LIBDW
# found them (they select the --unwind back ends), and
# HAVE_LIBIBERTY_DEMANGLE with LIBIBERTY_LIBS when libiberty's
# cplus_demangle (C++, Rust legacy and v0 names) is there: without it,
# names are shown mangled.  The test suite needs a C++ compiler (for a
# mangled-name target) and objcopy (for a stripped copy); tests skip
# what is missing.

AC_DEFUN([MT_UNWIND], [
	AC_REQUIRE([AC_PROG_CC])
	AS_IF([test "x$have_libunwind" = xyes],
		[AC_DEFINE([HAVE_LIBUNWIND], [1], [Define to build --unwind=dwarf (libunwind-ptrace).])])
	AS_IF([test "x$have_libdw" = xyes],
		[AC_DEFINE([HAVE_LIBDW], [1], [Define to build --unwind=libdw and the symbolizer.])])

	have_demangle=no
	LIBIBERTY_LIBS=
	AC_CHECK_HEADER([libiberty/demangle.h], [
		AC_CHECK_LIB([iberty], [cplus_demangle], [
			have_demangle=yes
			LIBIBERTY_LIBS=-liberty
			AC_DEFINE([HAVE_LIBIBERTY_DEMANGLE], [1],
				[Define to demangle C++ and Rust names with libiberty.])
		])
	])
	AS_IF([test "x$have_demangle" = xno],
		[AC_MSG_WARN([libiberty not found: names stay mangled (apt-get install libiberty-dev)])])
	AC_SUBST([LIBIBERTY_LIBS])

	AC_PROG_CXX
	AC_CHECK_TOOL([OBJCOPY], [objcopy], [:])
])
