dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl XDEV_COMPILER_FLAGS: the one place that decides warning and hardening flags.
dnl Sets XDEV_CFLAGS and XDEV_LDFLAGS; --enable-werror adds -Werror.
dnl Each answer is cached (configure -C), per compiler and flag: a
dnl configure run again with the cache, as tests/test-install-layouts.sh
dnl does once per layout, compiles none of these tests again.
AC_DEFUN([XDEV_TRY_CFLAG], [
  AS_VAR_PUSHDEF([xdev_cv], [xdev_cv_cflag_${CC}_$1])
  AC_CACHE_CHECK([whether $CC accepts $1], [xdev_cv], [
    xdev_save_CFLAGS="$CFLAGS"
    CFLAGS="$CFLAGS -Werror $1"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
      [AS_VAR_SET([xdev_cv], [yes])], [AS_VAR_SET([xdev_cv], [no])])
    CFLAGS="$xdev_save_CFLAGS"])
  AS_VAR_IF([xdev_cv], [yes], [XDEV_CFLAGS="$XDEV_CFLAGS $1"])
  AS_VAR_POPDEF([xdev_cv])
])
AC_DEFUN([XDEV_TRY_LDFLAG], [
  AS_VAR_PUSHDEF([xdev_cv], [xdev_cv_ldflag_${CC}_$1])
  AC_CACHE_CHECK([whether the linker accepts $1], [xdev_cv], [
    xdev_save_LDFLAGS="$LDFLAGS"
    LDFLAGS="$LDFLAGS $1"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
      [AS_VAR_SET([xdev_cv], [yes])], [AS_VAR_SET([xdev_cv], [no])])
    LDFLAGS="$xdev_save_LDFLAGS"])
  AS_VAR_IF([xdev_cv], [yes], [XDEV_LDFLAGS="$XDEV_LDFLAGS $1"])
  AS_VAR_POPDEF([xdev_cv])
])
AC_DEFUN([XDEV_COMPILER_FLAGS], [
  XDEV_CFLAGS=""
  XDEV_LDFLAGS=""
  for flag in -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
              -Wmissing-prototypes -Wpointer-arith -Wundef -Wvla \
              -Wnull-dereference -Wimplicit-fallthrough -Wno-unused-parameter \
              -fno-strict-aliasing -fstack-protector-strong \
              -fvisibility=hidden; do
    XDEV_TRY_CFLAG([$flag])
  done
  for flag in -Wl,-z,relro -Wl,-z,now -Wl,--as-needed; do
    XDEV_TRY_LDFLAG([$flag])
  done
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
    [], [enable_werror=no])
  AS_IF([test "x$enable_werror" = xyes], [XDEV_CFLAGS="$XDEV_CFLAGS -Werror"])
  AC_SUBST([XDEV_CFLAGS])
  AC_SUBST([XDEV_LDFLAGS])
])
