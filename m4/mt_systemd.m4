# MT_SYSTEMD: --with-systemdsystemunitdir=DIR, where make install puts
# memtap-agent.service (scripts/memtap-agent.service.in, made by
# mk/systemd.am).  The default is what pkg-config says of systemd
# (systemdsystemunitdir), else /lib/systemd/system;
# --without-systemdsystemunitdir installs no unit.
#
# Substitutes systemdsystemunitdir; AM_CONDITIONAL SYSTEMD_UNIT.

AC_DEFUN([MT_SYSTEMD], [
	AC_ARG_WITH([systemdsystemunitdir],
		[AS_HELP_STRING([--with-systemdsystemunitdir=DIR],
			[install memtap-agent.service into DIR (default: pkg-config's systemdsystemunitdir of systemd, else /lib/systemd/system; --without- for none)])],
		[], [with_systemdsystemunitdir=auto])
	AS_CASE([$with_systemdsystemunitdir],
		[auto | yes], [
			with_systemdsystemunitdir=
			AS_IF([test -n "$PKG_CONFIG"],
				[with_systemdsystemunitdir=`$PKG_CONFIG --variable=systemdsystemunitdir systemd 2>/dev/null`])
			AS_IF([test -z "$with_systemdsystemunitdir"],
				[with_systemdsystemunitdir=/lib/systemd/system])],
		[no], [],
		[/*], [],
		[AC_MSG_ERROR([--with-systemdsystemunitdir: not an absolute path: $with_systemdsystemunitdir])])
	AC_MSG_CHECKING([where to install memtap-agent.service])
	AC_MSG_RESULT([$with_systemdsystemunitdir])
	AC_SUBST([systemdsystemunitdir], [$with_systemdsystemunitdir])
	AM_CONDITIONAL([SYSTEMD_UNIT], [test "x$with_systemdsystemunitdir" != xno])
])
