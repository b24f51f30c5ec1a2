# MT_ZLIB: zlib, for the gzip-compressed pprof output.

AC_DEFUN([MT_ZLIB], [
	AC_CHECK_HEADER([zlib.h], [
		AC_CHECK_LIB([z], [deflateInit2_],
			[have_zlib=yes; ZLIB_LIBS=-lz],
			[AC_MSG_ERROR([zlib not found: apt-get install zlib1g-dev])])
	], [AC_MSG_ERROR([zlib.h not found: apt-get install zlib1g-dev])])
	AC_SUBST([ZLIB_LIBS])
])
