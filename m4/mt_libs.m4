# One macro per library memtap links with.  Each fails with the Debian
# package name to install when the library is missing.

AC_DEFUN([MT_LIBELF], [
	PKG_CHECK_MODULES([LIBELF], [libelf >= 0.158], [have_libelf=yes],
		[AC_MSG_ERROR([libelf not found: apt-get install libelf-dev])])
])

AC_DEFUN([MT_LIBDW], [
	PKG_CHECK_MODULES([LIBDW], [libdw >= 0.158], [have_libdw=yes],
		[AC_MSG_ERROR([libdw not found: apt-get install libdw-dev])])
])

AC_DEFUN([MT_LIBUNWIND], [
	PKG_CHECK_MODULES([LIBUNWIND], [libunwind-ptrace libunwind-generic],
		[have_libunwind=yes],
		[AC_MSG_ERROR([libunwind-ptrace not found: apt-get install libunwind-dev])])
])

# Zydis: asked for by configure.ac only for the x86_64 arch.
AC_DEFUN([MT_LIBZYDIS], [
	AC_CHECK_HEADER([Zydis/Zydis.h], [
		AC_CHECK_LIB([Zydis], [ZydisDecoderInit],
			[have_libzydis=yes; LIBZYDIS_LIBS=-lZydis],
			[AC_MSG_ERROR([libZydis not found: apt-get install libzydis-dev])])
	], [AC_MSG_ERROR([Zydis/Zydis.h not found: apt-get install libzydis-dev])])
	AC_SUBST([LIBZYDIS_LIBS])
])
