dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl XDEV_INIT_DIRS: where the init integration of xdevicesd(8) goes, one
dnl --with-<init>dir=DIR|no per init system. Defaults follow this machine:
dnl the sysvinit script where /etc/init.d is run with start-stop-daemon and
dnl /lib/lsb/init-functions (Debian, Devuan), the OpenRC service where
dnl openrc-run exists (it goes to /etc/init.d too), the systemd unit where
dnl systemd.pc names a unit directory; the runit service only when asked
dnl (its directory differs: /etc/sv on Void and Debian, /etc/runit/sv on Artix).
AC_DEFUN([XDEV_INIT_DIRS], [
  AC_ARG_WITH([initdir],
    [AS_HELP_STRING([--with-initdir=DIR|no],
      [sysvinit script directory (default: ${sysconfdir}/init.d with start-stop-daemon and /lib/lsb/init-functions and no OpenRC, else no)])],
    [initdir="$withval"], [initdir=auto])
  AC_ARG_WITH([openrcdir],
    [AS_HELP_STRING([--with-openrcdir=DIR|no],
      [OpenRC service directory (default: ${sysconfdir}/init.d if openrc-run exists, else no)])],
    [openrcdir="$withval"], [openrcdir=auto])
  AC_ARG_WITH([runitdir],
    [AS_HELP_STRING([--with-runitdir=DIR|no],
      [runit service directory, which gets xdevicesd/run (default: no; /etc/sv on Void and Debian)])],
    [runitdir="$withval"], [runitdir=no])
  AC_ARG_WITH([systemdunitdir],
    [AS_HELP_STRING([--with-systemdunitdir=DIR|no],
      [systemd system unit directory (default: pkg-config systemd systemdsystemunitdir, else no)])],
    [systemdunitdir="$withval"], [systemdunitdir=auto])

  xdev_openrc=no
  for d in /sbin /usr/sbin /bin /usr/bin; do
    if test -x "$d/openrc-run"; then xdev_openrc=yes; break; fi
  done
  xdev_ssd=no
  for d in /sbin /usr/sbin /bin /usr/bin; do
    if test -x "$d/start-stop-daemon"; then xdev_ssd=yes; break; fi
  done
  if test "x$openrcdir" = xauto; then
    openrcdir=no
    test "$xdev_openrc" = yes && openrcdir='${sysconfdir}/init.d'
  fi
  if test "x$initdir" = xauto; then
    initdir=no
    if test "$xdev_openrc" = no && test "$xdev_ssd" = yes && test -f /lib/lsb/init-functions; then
      initdir='${sysconfdir}/init.d'
    fi
  fi
  if test "x$systemdunitdir" = xauto; then
    systemdunitdir=`$PKG_CONFIG --variable=systemdsystemunitdir systemd 2>/dev/null`
    test -n "$systemdunitdir" || systemdunitdir=no
  fi
  for xdev_dir in "$initdir" "$openrcdir" "$runitdir" "$systemdunitdir"; do
    test "x$xdev_dir" = xyes && AC_MSG_ERROR([--with-...dir needs a directory or no])
  done
  if test "x$initdir" != xno && test "x$initdir" = "x$openrcdir"; then
    AC_MSG_ERROR([the sysvinit script and the OpenRC service would both be $initdir/xdevicesd: pass --with-initdir=no or --with-openrcdir=no])
  fi
  AC_SUBST([initdir])
  AC_SUBST([openrcdir])
  AC_SUBST([runitdir])
  AC_SUBST([systemdunitdir])
  AM_CONDITIONAL([WITH_SYSVINIT], [test "x$initdir" != xno])
  AM_CONDITIONAL([WITH_OPENRC], [test "x$openrcdir" != xno])
  AM_CONDITIONAL([WITH_RUNIT], [test "x$runitdir" != xno])
  AM_CONDITIONAL([WITH_SYSTEMD], [test "x$systemdunitdir" != xno])
])
