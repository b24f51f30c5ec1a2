# Warning flags (the strace set, trimmed to what gcc 12 and clang 14 know)
# and the switches --enable-werror and --enable-sanitizers.

AC_DEFUN([MT_WARN_CFLAGS], [
	AC_ARG_ENABLE([werror],
		[AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
		[], [enable_werror=no])
	WARN_CFLAGS=
	for flag in -Wall -Wextra -Wformat=2 -Wshadow -Wpointer-arith \
		    -Wmissing-prototypes -Wstrict-prototypes -Wwrite-strings \
		    -Wundef -Wnested-externs -Wold-style-definition \
		    -Wimplicit-fallthrough -Wvla -Wno-sign-compare; do
		AX_MT_CHECK_CFLAG([$flag], [WARN_CFLAGS="$WARN_CFLAGS $flag"])
	done
	AS_IF([test "x$enable_werror" = xyes], [WARN_CFLAGS="$WARN_CFLAGS -Werror"])
	AC_SUBST([WARN_CFLAGS])
])

AC_DEFUN([MT_SANITIZERS], [
	AC_ARG_ENABLE([sanitizers],
		[AS_HELP_STRING([--enable-sanitizers], [build with AddressSanitizer and UBSan])],
		[], [enable_sanitizers=no])
	SANITIZER_CFLAGS=
	AS_IF([test "x$enable_sanitizers" = xyes], [
		SANITIZER_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
	])
	AC_SUBST([SANITIZER_CFLAGS])
])

AC_DEFUN([AX_MT_CHECK_CFLAG], [
	AC_MSG_CHECKING([whether $CC accepts $1])
	mt_save_CFLAGS=$CFLAGS
	CFLAGS="$CFLAGS -Werror $1"
	AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
		[AC_MSG_RESULT([yes]); $2], [AC_MSG_RESULT([no])])
	CFLAGS=$mt_save_CFLAGS
])
